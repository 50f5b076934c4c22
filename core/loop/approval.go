package loop

import (
	"context"
	"errors"
	"fmt"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// ApprovalMode says which held tool calls pass without asking the operator, as in
// gemini-cli.
type ApprovalMode string

const (
	// ApprovalDefault asks the operator for every held call.
	ApprovalDefault ApprovalMode = "default"
	// ApprovalAutoEdit lets file edits (the text_editor tool) pass and asks for the rest.
	ApprovalAutoEdit ApprovalMode = "auto_edit"
	// ApprovalYolo lets every held call pass.
	ApprovalYolo ApprovalMode = "yolo"
)

// ParseApprovalMode reads a mode name ("auto-edit" is accepted too).
func ParseApprovalMode(s string) (ApprovalMode, error) {
	switch s {
	case "", "default":
		return ApprovalDefault, nil
	case "auto_edit", "auto-edit":
		return ApprovalAutoEdit, nil
	case "yolo":
		return ApprovalYolo, nil
	}
	return "", fmt.Errorf("approval mode %q: use default, auto-edit or yolo", s)
}

// Approval is a tool call an extension holds for the operator (the seed's
// action-boundary tier 4).
type Approval struct {
	Tool      string
	Action    string // the exact command or action
	Reason    string
	Extension string
	// AlwaysAsk asks the operator whatever the mode (the call would run
	// outside the sandbox); an answer "for this session" still counts.
	AlwaysAsk bool
}

// Decision is the operator's answer.
type Decision int

const (
	Deny Decision = iota
	AllowOnce
	AllowSession
)

func (d Decision) String() string {
	switch d {
	case AllowOnce:
		return "allow_once"
	case AllowSession:
		return "allow_session"
	}
	return "deny"
}

// Approver asks the operator.
type Approver interface {
	Approve(ctx context.Context, req Approval) (Decision, error)
}

// Refused is an Approver's error for a call refused with a reason the model
// should be given as it is (an operator's reason, a deadline that passed),
// rather than as a failed approval.
type Refused struct{ Reason string }

func (r *Refused) Error() string { return r.Reason }

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, req Approval) (Decision, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req Approval) (Decision, error) {
	return f(ctx, req)
}

// SetApprovalMode changes the mode for the rest of the session (/approval).
func (a *Agent) SetApprovalMode(m ApprovalMode) {
	a.mu.Lock()
	a.opts.ApprovalMode = m
	a.mu.Unlock()
}

// decide returns the decision for a held call, asking the operator when the mode
// and the session's earlier answers do not settle it.
// Before the mode decides, tool_approval_request offers the held call to the
// extensions (approvalhooks.go): a refusal denies it in every mode, yolo
// included; an allow lets it pass without asking.
func (a *Agent) decide(ctx context.Context, t *turn, tc *exocortexv1.ToolCall, req Approval) (Decision, string) {
	a.mu.Lock()
	mode := a.opts.ApprovalMode
	memo := a.sessionAllo[req.Tool+"\x00"+req.Action]
	a.mu.Unlock()
	if d, why, ok := a.approvalHooks(ctx, t, tc, req, mode); ok {
		return d, why
	}
	if req.AlwaysAsk {
		mode = ApprovalDefault
	}
	switch {
	case mode == ApprovalYolo:
		return AllowOnce, "approval mode yolo"
	case mode == ApprovalAutoEdit && req.Tool == "text_editor":
		return AllowOnce, "approval mode auto-edit"
	case memo:
		return AllowOnce, "allowed earlier for this session"
	case a.opts.Approver == nil:
		return Deny, "no operator to ask (run interactively, or choose --approval yolo)"
	}
	a.notifyOperator(ctx, t, tc, req)
	d, err := a.opts.Approver.Approve(ctx, req)
	var refused *Refused
	if errors.As(err, &refused) {
		return Deny, refused.Reason
	}
	if err != nil {
		return Deny, "the approval failed: " + err.Error()
	}
	if d == AllowSession {
		a.mu.Lock()
		a.sessionAllo[req.Tool+"\x00"+req.Action] = true
		a.mu.Unlock()
	}
	return d, "the operator answered"
}
