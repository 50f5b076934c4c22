package shell

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/loop"
)

// answering is an approver that records the requests and answers from a list.
type answering struct {
	mu      sync.Mutex
	answers []loop.Decision
	asked   []loop.Approval
}

func (a *answering) Approve(_ context.Context, req loop.Approval) (loop.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req)
	d := a.answers[0]
	a.answers = a.answers[1:]
	return d, nil
}

func TestApprovalRules(t *testing.T) {
	ctx := context.Background()
	ap := &answering{answers: []loop.Decision{loop.Deny, loop.AllowOnce, loop.AllowSession}}
	mode := loop.ApprovalDefault
	r := &Runner{Approver: ap, Mode: func() loop.ApprovalMode { return mode }, Shell: "/bin/sh", Dir: t.TempDir()}

	// Commands that change files (tier 2) ask.
	if _, err := r.Run(ctx, "touch one"); !errors.Is(err, ErrDenied) {
		t.Fatalf("denied command: err = %v", err)
	}
	res, err := r.Run(ctx, "echo two | tee two.txt")
	if err != nil || res.Output != "two\n" || res.Decision != "allowed once" {
		t.Fatalf("allowed once: %+v %v", res, err)
	}
	if _, err := r.Run(ctx, "mkdir three"); err != nil {
		t.Fatal(err)
	}
	// Allowed for the session: the same command runs without asking again.
	res, err = r.Run(ctx, "mkdir three")
	if err != nil || res.Decision != "allowed earlier for this session" {
		t.Fatalf("session memo: %+v %v", res, err)
	}
	if len(ap.asked) != 3 {
		t.Fatalf("asked %d times, want 3", len(ap.asked))
	}
	if got := ap.asked[1]; got.Tool != Tool || got.Action != "echo two | tee two.txt" || !strings.Contains(got.Reason, "tier 2 (tee inside the work directory)") {
		t.Errorf("the request does not carry the exact command and its tier: %+v", got)
	}
	// Yolo runs without asking, auto-edit does not apply to commands.
	mode = loop.ApprovalYolo
	if res, err := r.Run(ctx, "touch four"); err != nil || res.Decision != "approval mode yolo" {
		t.Fatalf("yolo: %+v %v", res, err)
	}
	mode = loop.ApprovalAutoEdit
	if _, err := (&Runner{Mode: func() loop.ApprovalMode { return mode }}).Run(ctx, "touch five"); !errors.Is(err, ErrDenied) {
		t.Fatalf("auto-edit without an operator: %v", err)
	}
}

// TestTiers: the operator's commands take the agent's tiers (the action
// boundary's classifier): read-only ones run without asking in every mode,
// the rest are asked for unless yolo; a machine without the sandbox asks for
// every command.
func TestTiers(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		command string
		mode    loop.ApprovalMode
		asks    bool
	}{
		{"ls -la", loop.ApprovalDefault, false},
		{"cat /etc/hostname | grep -c .", loop.ApprovalDefault, false},
		{"git status", loop.ApprovalAutoEdit, false},
		{"echo hi", loop.ApprovalDefault, false},
		{"echo hi > out.txt", loop.ApprovalDefault, true},
		{"rm -rf sub", loop.ApprovalDefault, true},
		{"curl -sS http://127.0.0.1:1/", loop.ApprovalAutoEdit, true},
		{"touch x", loop.ApprovalYolo, false},
	}
	for _, tc := range tests {
		t.Run(tc.command, func(t *testing.T) {
			ap := &answering{answers: []loop.Decision{loop.Deny}}
			r := &Runner{Approver: ap, Mode: func() loop.ApprovalMode { return tc.mode }, Shell: "/bin/sh", Dir: dir}
			res, err := r.Run(context.Background(), tc.command)
			if asked := len(ap.asked) == 1; asked != tc.asks {
				t.Fatalf("asked: %t, want %t (decision %q, err %v)", asked, tc.asks, res.Decision, err)
			}
			if !tc.asks && err != nil {
				t.Fatalf("err = %v", err)
			}
			if !tc.asks && tc.mode != loop.ApprovalYolo && !strings.HasPrefix(res.Decision, "read-only (tier 1") {
				t.Errorf("decision %q", res.Decision)
			}
		})
	}
}

func TestExitCodeOutputAndLimit(t *testing.T) {
	r := &Runner{Mode: func() loop.ApprovalMode { return loop.ApprovalYolo }, Shell: "/bin/sh", MaxOutput: 10}
	res, err := r.Run(context.Background(), "printf 'aaaaaaaaaaaaaaaaaaaa'; echo err >&2; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || !res.Truncated || len(res.Output) != 10 {
		t.Fatalf("result %+v", res)
	}
	if _, err := r.Run(context.Background(), "   "); err == nil {
		t.Fatal("an empty command ran")
	}
}

func TestCancelStopsTheProcessGroup(t *testing.T) {
	r := &Runner{Mode: func() loop.ApprovalMode { return loop.ApprovalYolo }, Shell: "/bin/sh"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := r.Run(ctx, "sleep 30 | cat; echo never")
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "stopped") {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the command outlived its cancel")
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("cancel took %s", d)
	}
}
