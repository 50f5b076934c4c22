package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestSlowPluginStartIsReported: a plugin that takes 1.5 s to start gets one
// stderr line in a plain `run -p` naming it, its time and what to do, and
// `plugins status` shows every plugin's start time, the slow one marked.
func TestSlowPluginStartIsReported(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	slow := sdktest.BuildPlugin(t, "./testdata/slowstart")
	home := t.TempDir()
	plugins := filepath.Join(home, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	copyExecutable(t, slow, filepath.Join(plugins, "slowstart"))
	script := filepath.Join(t.TempDir(), "answer.yaml")
	if err := os.WriteFile(script, []byte(`model: e2e
replies:
  - content: '{"thoughts":["done"],"tool_name":"response","tool_args":{"text":"All done."}}'
`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(exe, args...)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("exocortex %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return string(out), stderr.String()
	}

	_, stderr := run("run", "-p", "Answer.", "--model", "script:"+script)
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "plugin slowstart took") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("stderr has %d slow-start lines for slowstart, want 1:\n%s", len(lines), stderr)
	}
	for _, want := range []string{"warning: plugin slowstart took 1.", "more than 1s", "every run and session waits for it", "in the background"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the slow-start line lacks %q: %s", want, lines[0])
		}
	}

	out, _ := run("plugins", "status", "--json")
	var st []host.PluginStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("plugins status --json: %v\n%s", err, out)
	}
	found := false
	for _, p := range st {
		if p.Name == "slowstart" {
			found = true
			if p.StartMS < 1500 {
				t.Errorf("slowstart's start_ms is %d, want at least 1500", p.StartMS)
			}
		}
	}
	if !found {
		t.Errorf("plugins status --json lacks slowstart:\n%s", out)
	}
	text, _ := run("plugins", "status")
	if !strings.Contains(text, "slow: more than 1s") {
		t.Errorf("plugins status does not mark the slow start:\n%s", text)
	}
	if n := strings.Count(text, "  start:"); n < 2 {
		t.Errorf("plugins status shows %d start times, want one per running plugin:\n%s", n, text)
	}
}
