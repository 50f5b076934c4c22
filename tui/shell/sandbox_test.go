package shell

import (
	"context"
	"os"
	"path/filepath"
	"testing"

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
