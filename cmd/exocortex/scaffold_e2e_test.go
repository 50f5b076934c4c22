package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/sdk/python"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestScaffoldDevLoopOutsideTheCheckout follows the README as a new user
// would, in a directory outside the checkout, with exocortex not on PATH:
// two plugins scaffolded at the same hook get different orders and both
// load, and `make dev` in the second runs the binary that wrote it.
func TestScaffoldDevLoopOutsideTheCheckout(t *testing.T) {
	if _, err := os.Stat(python.Interpreter); err != nil {
		t.Skipf("skipping: %s is not installed", python.Interpreter)
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("skipping: make is not installed")
	}
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home := t.TempDir()
	work := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	// A PATH without the binary's directory: only the Makefile can find it.
	t.Setenv("PATH", "/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin")

	orders := map[string]int{}
	for _, name := range []string{"first", "second"} {
		out, stderr, code := runExo(t, exe, work, home, "plugins", "new", name, "--lang", "python", "--json")
		if code != 0 {
			t.Fatalf("plugins new %s: %d %s", name, code, stderr)
		}
		var r struct{ Order int }
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		orders[name] = r.Order
		mk, _ := os.ReadFile(filepath.Join(work, name, "Makefile"))
		if !strings.Contains(string(mk), "EXOCORTEX ?= "+exe+"\n") {
			t.Errorf("%s's Makefile does not name the binary that wrote it:\n%s", name, mk)
		}
		if name == "first" {
			cmd := exec.Command("make", "build")
			cmd.Dir = filepath.Join(work, name)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("make build: %v\n%s", err, out)
			}
		}
	}
	if orders["first"] == orders["second"] {
		t.Fatalf("both plugins got order %d at the same hook", orders["first"])
	}

	// make dev: the binary is found, the plugin installed.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dev := exec.CommandContext(ctx, "make", "dev")
	dev.Dir = filepath.Join(work, "second")
	dev.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dev.Cancel = func() error { return syscall.Kill(-dev.Process.Pid, syscall.SIGKILL) }
	out := &syncBuf{}
	dev.Stdout, dev.Stderr = out, out
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() { _ = dev.Wait(); close(stopped) }()
	defer func() {
		_ = syscall.Kill(-dev.Process.Pid, syscall.SIGTERM)
		select {
		case <-stopped:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-dev.Process.Pid, syscall.SIGKILL)
			<-stopped
		}
	}()
	waitFor(t, "make dev to install the plugin", func() bool {
		select {
		case <-stopped:
			return true
		default:
		}
		return strings.Contains(out.String(), "installed second")
	})
	if !strings.Contains(out.String(), "installed second") {
		t.Fatalf("make dev:\n%s", out)
	}

	// Both load side by side: no order collision refuses the second.
	list, stderr, code := runExo(t, exe, work, home, "plugins", "list", "--json")
	if code != 0 {
		t.Fatalf("plugins list: %d %s", code, stderr)
	}
	var st []struct {
		Name  string `json:"name"`
		State string `json:"state"`
	}
	if err := json.Unmarshal([]byte(list), &st); err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, p := range st {
		states[p.Name] = p.State
	}
	if states["first"] != "running" || states["second"] != "running" {
		t.Errorf("states: first %q, second %q (stderr %s)", states["first"], states["second"], stderr)
	}
}
