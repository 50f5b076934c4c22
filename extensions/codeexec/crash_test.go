package codeexec

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exocortex/exocortex/config"
)

// helperEnv makes the test binary act as a plugin process that runs one command
// in a session and then waits to be killed.
const helperEnv = "EXOCORTEX_CODEEXEC_HELPER"

// helperCode is the command the helper runs.
const helperCode = "EXOCORTEX_CODEEXEC_HELPER_CODE"

func TestHelperPlugin(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("helper process for TestPluginCrashKillsTheSession")
	}
	r := New(Fixed(config.CodeExecution{WorkDir: os.TempDir(), Timeout: config.Duration(10 * time.Second)}))
	cfg := config.CodeExecution{}
	switch os.Getenv(helperEnv) {
	case "unconfined":
		cfg.Confine.Off = true
	case "unavailable":
		r.probe = forcedUnavailable
	}
	s, _, err := r.session("crash", 0, cfg.WithDefaults(os.TempDir()))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	out := s.exec(context.Background(), RuntimeTerminal, "", os.Getenv(helperCode), 10*time.Second, time.Second, nil)
	text, _, _ := out.output.text(1000)
	fmt.Print(text)
	fmt.Println("ready")
	time.Sleep(time.Minute)
	os.Exit(0)
}

// When the plugin process dies without any chance to clean up (the host killed
// it), the session's shell and the jobs it left in the background die too.
func TestPluginCrashKillsTheSession(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the session watcher is Linux-only")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPlugin$")
	cmd.Env = append(os.Environ(), helperEnv+"=unconfined", helperCode+"=sleep 100 & echo bg $!\necho shell $$")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	pids := map[string]int{}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if line == "ready" {
			break
		}
		if k, v, ok := strings.Cut(line, " "); ok {
			if n, err := strconv.Atoi(v); err == nil {
				pids[k] = n
			}
		}
	}
	if pids["bg"] == 0 || pids["shell"] == 0 {
		t.Fatalf("the helper did not report its pids: %v (%v)", pids, sc.Err())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for _, name := range []string{"shell", "bg"} {
		waitGone(t, pids[name])
	}
}
