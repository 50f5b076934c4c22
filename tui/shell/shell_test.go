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
	r := &Runner{Approver: ap, Mode: func() loop.ApprovalMode { return mode }, Shell: "/bin/sh"}

	if _, err := r.Run(ctx, "echo one"); !errors.Is(err, ErrDenied) {
		t.Fatalf("denied command: err = %v", err)
	}
	res, err := r.Run(ctx, "echo two")
	if err != nil || res.Output != "two\n" || res.Decision != "allowed once" {
		t.Fatalf("allowed once: %+v %v", res, err)
	}
	if _, err := r.Run(ctx, "echo three"); err != nil {
		t.Fatal(err)
	}
	// Allowed for the session: the same command runs without asking again.
	res, err = r.Run(ctx, "echo three")
	if err != nil || res.Decision != "allowed earlier for this session" {
		t.Fatalf("session memo: %+v %v", res, err)
	}
	if len(ap.asked) != 3 {
		t.Fatalf("asked %d times, want 3", len(ap.asked))
	}
	if got := ap.asked[1]; got.Tool != Tool || got.Action != "echo two" {
		t.Errorf("the request does not carry the exact command: %+v", got)
	}
	// Yolo runs without asking, auto-edit does not apply to commands.
	mode = loop.ApprovalYolo
	if res, err := r.Run(ctx, "echo four"); err != nil || res.Decision != "approval mode yolo" {
		t.Fatalf("yolo: %+v %v", res, err)
	}
	mode = loop.ApprovalAutoEdit
	if _, err := (&Runner{Mode: func() loop.ApprovalMode { return mode }}).Run(ctx, "echo five"); !errors.Is(err, ErrDenied) {
		t.Fatalf("auto-edit without an operator: %v", err)
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
