package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exocortex/exocortex/sdk/python"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestReplayDevLoop follows the development loop with a Python plugin:
// plugins new records testdata/session.jsonl, make replay shows the new
// plugin's block in it, and dev --replay replays after every rebuild, so an
// edit shows in the next report.
func TestReplayDevLoop(t *testing.T) {
	if _, err := os.Stat(python.Interpreter); err != nil {
		t.Skipf("skipping: %s is not installed", python.Interpreter)
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("skipping: make is not installed")
	}
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home, work := t.TempDir(), t.TempDir()
	if _, stderr, code := runExo(t, exe, work, home, "plugins", "new", "pyprobe", "--lang", "python", "--hook", "message_loop_prompts_after"); code != 0 {
		t.Fatalf("plugins new: exit %d: %s", code, stderr)
	}
	src := filepath.Join(work, "pyprobe")
	if _, err := os.Stat(filepath.Join(src, "testdata", "session.jsonl")); err != nil {
		t.Fatalf("plugins new recorded no session: %v", err)
	}

	mk := exec.Command("make", "replay")
	mk.Dir, mk.Env = src, append(os.Environ(), "EXOCORTEX_HOME="+home)
	out, err := mk.CombinedOutput()
	if err != nil {
		t.Fatalf("make replay: %v\n%s", err, out)
	}
	block := `+ block "PYPROBE" by pyprobe @message_loop_prompts_after (pyprobe): pyprobe ran 1 time(s) in this monologue.`
	if !strings.Contains(string(out), block) {
		t.Fatalf("make replay does not show the plugin's block:\n%s", out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev := exec.CommandContext(ctx, exe, "dev", "--replay", "testdata/session.jsonl", "--plugin-dir", filepath.Join(home, "plugins"), ".")
	dev.Dir, dev.Env = src, append(os.Environ(), "EXOCORTEX_HOME="+home)
	dev.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dev.Cancel = func() error { return syscall.Kill(-dev.Process.Pid, syscall.SIGKILL) }
	buf := &syncBuf{}
	dev.Stdout, dev.Stderr = buf, buf
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-dev.Process.Pid, syscall.SIGTERM); _ = dev.Wait() }()
	waitFor(t, "dev's first replay", func() bool { return strings.Contains(buf.String(), "replayed testdata/session.jsonl") })
	if !strings.Contains(buf.String(), block) {
		t.Fatalf("dev --replay's first report lacks the block:\n%s", buf)
	}
	main := filepath.Join(src, "main.py")
	b, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(main, []byte(strings.Replace(string(b), "time(s) in this monologue", "EDITED", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the replay after the edit", func() bool { return strings.Contains(buf.String(), "pyprobe ran 1 EDITED") })
}
