package shell

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/sandbox"
)

// TestMain lets the test binary act as the sandbox launcher, as the exocortex
// binary does.
func TestMain(m *testing.M) {
	sandbox.Launch()
	os.Exit(m.Run())
}

// TestYoloCommandsStayConfined: yolo lifts the question, not the sandbox; the
// sandbox-off setting lifts the sandbox.
func TestYoloCommandsStayConfined(t *testing.T) {
	if st := sandbox.Probe(""); !st.Available {
		t.Skip(st.String())
	}
	for _, off := range []bool{false, true} {
		project, outside := t.TempDir(), t.TempDir()
		canary := filepath.Join(outside, "canary")
		os.WriteFile(canary, []byte("alive"), 0o644)
		c := config.CodeExecution{Confine: config.Confinement{Off: off}}.WithDefaults(project)
		r := &Runner{Mode: func() loop.ApprovalMode { return loop.ApprovalYolo }, Dir: project, Shell: "/bin/sh", Confine: &c.Confine}
		res, err := r.Run(context.Background(), "echo in > inside.txt; H="+outside+"; rm -rf $H")
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(project, "inside.txt")); string(b) != "in\n" {
			t.Errorf("off=%v: the write inside the project failed: %q (%s)", off, b, res.Output)
		}
		_, err = os.Stat(canary)
		if gone := err != nil; gone != off {
			t.Errorf("off=%v: canary gone=%v, output %q", off, gone, res.Output)
		}
	}
}

// TestNoSandboxAsksEvenInYolo: where the machine cannot sandbox, a !command is
// asked for whatever the mode.
func TestNoSandboxAsksEvenInYolo(t *testing.T) {
	asked := 0
	c := config.CodeExecution{}.WithDefaults(t.TempDir())
	r := &Runner{
		Mode:     func() loop.ApprovalMode { return loop.ApprovalYolo },
		Approver: loop.ApproverFunc(func(context.Context, loop.Approval) (loop.Decision, error) { asked++; return loop.Deny, nil }),
		Confine:  &c.Confine,
		Probe:    func() sandbox.Status { return sandbox.Status{Reason: "no Landlock (test)"} },
	}
	if _, err := r.Run(context.Background(), "true"); err == nil || asked != 1 {
		t.Errorf("err %v, asked %d times: want one question and a denial", err, asked)
	}
}

// TestUnconfinedCommandsLeaveNothingBehind: with the sandbox off or missing, a
// !command's setsid and nohup children die with it, when it ends and when it is
// stopped, as they do inside the sandbox's PID namespace.
func TestUnconfinedCommandsLeaveNothingBehind(t *testing.T) {
	for _, tc := range []struct {
		name        string
		off         bool
		unavailable bool
		stop        bool
	}{
		{name: "off, ends", off: true},
		{name: "off, stopped", off: true, stop: true},
		{name: "unavailable, ends", unavailable: true},
		{name: "unavailable, stopped", unavailable: true, stop: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			project := t.TempDir()
			pidFile := filepath.Join(project, "escaped.pid")
			c := config.CodeExecution{Confine: config.Confinement{Off: tc.off}}.WithDefaults(project)
			r := &Runner{Mode: func() loop.ApprovalMode { return loop.ApprovalYolo }, Dir: project, Shell: "/bin/sh", Confine: &c.Confine,
				Approver: loop.ApproverFunc(func(context.Context, loop.Approval) (loop.Decision, error) { return loop.AllowOnce, nil })}
			if tc.unavailable {
				r.Probe = func() sandbox.Status { return sandbox.Status{Reason: "no Landlock (test)"} }
			}
			command := "setsid nohup sh -c 'echo $$ > " + pidFile + "; exec sleep 300' >/dev/null 2>&1 & while [ ! -s " + pidFile + " ]; do sleep 0.05; done;"
			ctx := context.Background()
			if tc.stop {
				command += " sleep 300"
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
			}
			if _, err := r.Run(ctx, command); (err != nil) != tc.stop {
				t.Fatalf("run: %v", err)
			}
			var pid int
			for deadline := time.Now().Add(5 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
					pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				}
			}
			if pid == 0 {
				t.Fatal("the escaped child never wrote its pid")
			}
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
				if err != nil || strings.Contains(string(b), ") Z ") {
					return
				}
				if time.Now().After(deadline) {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Fatalf("process %d (setsid nohup sleep) outlived its !command", pid)
				}
			}
		})
	}
}
