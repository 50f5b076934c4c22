package sessions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/exocortex/exocortex/core/loop"
)

// Pending is a held tool call waiting for an answer.
type Pending struct {
	ID        string    `json:"id"`
	Session   string    `json:"session"`
	Tool      string    `json:"tool"`
	Action    string    `json:"action"`
	Reason    string    `json:"reason"`
	Extension string    `json:"extension"`
	Asked     time.Time `json:"asked"`
	Deadline  time.Time `json:"deadline"`

	answer chan answer
}

type answer struct {
	d      loop.Decision
	reason string
	by     string
}

// ErrNoApproval is Answer's error for an id that waits for nothing (never
// asked, already answered or past its deadline).
var ErrNoApproval = errors.New("no approval is waiting with this id")

// Approvals holds the tool calls waiting for an answer, across sessions.
type Approvals struct {
	timeout time.Duration
	// onAsk, when set, is told of every new pending call (the session's log).
	mu      sync.Mutex
	pending map[string]*Pending
}

// NewApprovals returns a registry whose calls wait at most timeout.
func NewApprovals(timeout time.Duration) *Approvals {
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	return &Approvals{timeout: timeout, pending: map[string]*Pending{}}
}

// Timeout is how long a held call waits.
func (a *Approvals) Timeout() time.Duration { return a.timeout }

// approver is the loop.Approver of one session: it registers the call and
// waits for Answer, the deadline or ctx.
func (a *Approvals) approver(session string, asked func(Pending)) loop.Approver {
	return loop.ApproverFunc(func(ctx context.Context, req loop.Approval) (loop.Decision, error) {
		now := time.Now()
		p := &Pending{ID: uuid.NewString(), Session: session, Tool: req.Tool, Action: req.Action, Reason: req.Reason,
			Extension: req.Extension, Asked: now, Deadline: now.Add(a.timeout), answer: make(chan answer, 1)}
		a.mu.Lock()
		a.pending[p.ID] = p
		a.mu.Unlock()
		defer func() {
			a.mu.Lock()
			delete(a.pending, p.ID)
			a.mu.Unlock()
		}()
		if asked != nil {
			asked(*p)
		}
		timer := time.NewTimer(a.timeout)
		defer timer.Stop()
		select {
		case ans := <-p.answer:
			if ans.d == loop.Deny {
				why := "refused by the operator (key " + ans.by + ")"
				if ans.reason != "" {
					why += ": " + ans.reason
				}
				return loop.Deny, &loop.Refused{Reason: why}
			}
			return ans.d, nil
		case <-timer.C:
			return loop.Deny, &loop.Refused{Reason: fmt.Sprintf("no operator answered within %s (serve.approval_timeout), so the call was refused; do without it or ask the user to approve it", a.timeout)}
		case <-ctx.Done():
			return loop.Deny, ctx.Err()
		}
	})
}

// List returns the calls waiting, oldest first; session "" lists every session's.
func (a *Approvals) List(session string) []Pending {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := []Pending{} // none is [], not null
	for _, p := range a.pending {
		if session == "" || p.Session == session {
			out = append(out, *p)
		}
	}
	slices.SortFunc(out, func(x, y Pending) int { return x.Asked.Compare(y.Asked) })
	return out
}

// Answer decides the call id: by names the key that answered, reason (for a
// refusal) is given to the model.
func (a *Approvals) Answer(id string, d loop.Decision, reason, by string) (Pending, error) {
	a.mu.Lock()
	p, ok := a.pending[id]
	if ok {
		delete(a.pending, id)
	}
	a.mu.Unlock()
	if !ok {
		return Pending{}, fmt.Errorf("approval %q: %w", id, ErrNoApproval)
	}
	p.answer <- answer{d: d, reason: reason, by: by}
	return *p, nil
}

// ParseDecision reads "allow_once", "allow_session" or "deny" (also "allow"
// and "refuse").
func ParseDecision(s string) (loop.Decision, error) {
	switch s {
	case "allow_once", "allow", "approve":
		return loop.AllowOnce, nil
	case "allow_session":
		return loop.AllowSession, nil
	case "deny", "refuse":
		return loop.Deny, nil
	}
	return loop.Deny, fmt.Errorf("decision %q: use allow_once, allow_session or deny", s)
}
