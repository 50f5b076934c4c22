package sessions

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/loop"
)

// asked waits for the registry to hold one call of session and returns it.
func asked(t *testing.T, a *Approvals, session string) Pending {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if p := a.List(session); len(p) == 1 {
			return p[0]
		}
	}
	t.Fatalf("no call of %s was held", session)
	return Pending{}
}

func TestApprovals(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answer   string // "" answers nothing
		reason   string
		want     loop.Decision
		refusal  string // in the *loop.Refused reason
		timeout  time.Duration
		approved bool
	}{
		{name: "granted once", answer: "allow_once", want: loop.AllowOnce, timeout: time.Minute},
		{name: "granted for the session", answer: "allow_session", want: loop.AllowSession, timeout: time.Minute},
		{name: "refused with a reason", answer: "deny", reason: "not today", want: loop.Deny, refusal: "refused by the operator (key ops): not today", timeout: time.Minute},
		{name: "timed out", want: loop.Deny, refusal: "serve.approval_timeout", timeout: 50 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewApprovals(tc.timeout)
			other := a.approver("other", nil)
			go func() { _, _ = other.Approve(t.Context(), loop.Approval{Tool: "shell", Action: "ls"}) }()
			asked(t, a, "other")
			type result struct {
				d   loop.Decision
				err error
			}
			done := make(chan result, 1)
			go func() {
				d, err := a.approver("mine", nil).Approve(context.Background(), loop.Approval{Tool: "shell", Action: "rm -rf /", Reason: "destructive"})
				done <- result{d, err}
			}()
			p := asked(t, a, "mine")
			if p.Tool != "shell" || p.Action != "rm -rf /" || p.Session != "mine" || !p.Deadline.After(p.Asked) {
				t.Fatalf("the held call: %+v", p)
			}
			if tc.answer != "" {
				d, err := ParseDecision(tc.answer)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := a.Answer(p.ID, d, tc.reason, "ops"); err != nil {
					t.Fatal(err)
				}
			}
			r := <-done
			var refused *loop.Refused
			if r.d != tc.want || (tc.refusal == "") != (r.err == nil) {
				t.Fatalf("decision %v, %v; want %v", r.d, r.err, tc.want)
			}
			if tc.refusal != "" && (!errors.As(r.err, &refused) || !strings.Contains(refused.Reason, tc.refusal)) {
				t.Errorf("refusal %v, want one saying %q", r.err, tc.refusal)
			}
			if _, err := a.Answer(p.ID, loop.AllowOnce, "", "ops"); !errors.Is(err, ErrNoApproval) {
				t.Errorf("answering again: %v, want ErrNoApproval", err)
			}
			// The other session's call is untouched (unless its own deadline passed too).
			if got := a.List("other"); tc.timeout > time.Second && len(got) != 1 {
				t.Errorf("the other session's call: %v", got)
			}
		})
	}
	if _, err := ParseDecision("maybe"); err == nil {
		t.Error("ParseDecision(maybe) accepted")
	}
}
