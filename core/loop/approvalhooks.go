package loop

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/exocortex/exocortex/core/host"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// The approval hooks. A tool call a guard holds for approval
// (ToolBlock.needs_approval at tool_execute_before) is first offered to the
// extensions at tool_approval_request, in every approval mode, yolo
// included, and whatever the session's earlier answers: a refusal denies it
// (a refusal wins over any allow), an allow lets it pass without asking the
// operator. tool_approval_request is a gate: an extension that fails there
// (an error, a crash, a deadline) has allowed nothing, and the call is
// denied with the failure as the reason (guards fail closed) unless it
// declared fail_open. When nothing settles the call and the operator is
// asked, operator_notification tells the extensions first (advisory).
// Claude Code's PermissionRequest and Notification hooks run at these two
// (extensions/cmdhooks). The terminal, `run` and served sessions all decide
// held calls here (decide), so the hooks hold in each.

// approvalHooks fires tool_approval_request; ok says it settled the call.
func (a *Agent) approvalHooks(ctx context.Context, t *turn, tc *exocortexv1.ToolCall, req Approval, mode ApprovalMode) (Decision, string, bool) {
	var refused, allowedBy, why string
	t.takeGate()
	err := fire(ctx, a, t, exocortexv1.Hook_HOOK_TOOL_APPROVAL_REQUEST,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.ToolApprovalRequestRequest {
			return &exocortexv1.ToolApprovalRequestRequest{Call: c, ToolCall: tc, Action: req.Action, Reason: req.Reason,
				Extension: req.Extension, Mode: string(mode), AlwaysAsk: req.AlwaysAsk}
		}, exocortexv1.PluginClient.ToolApprovalRequest,
		func(ext *host.Extension, r *exocortexv1.ToolApprovalRequestResponse) error {
			switch {
			case r.Refuse != nil && refused == "":
				refused = fmt.Sprintf("refused by %s: %s", ext.Name(), r.GetRefuse())
			case r.GetAllow() && allowedBy == "":
				allowedBy, why = ext.Name(), r.GetMessage()
			}
			return nil
		})
	if g := t.takeGate(); g != nil {
		a.emit(Event{Type: EventNotice, Iteration: t.iteration, Tool: tc.GetName(), Extension: g.ext.Name(), Error: g.err.Error(),
			Text: tc.GetName() + " call denied: " + g.reason()})
		return Deny, g.reason(), true
	}
	switch {
	case err != nil:
		return Deny, "the approval hooks failed: " + err.Error(), true
	case refused != "":
		return Deny, refused, true
	case allowedBy != "":
		s := "allowed by " + allowedBy
		if why != "" {
			s += ": " + why
		}
		return AllowOnce, s, true
	}
	return Deny, "", false
}

// NotificationPermission is operator_notification's kind when a held call
// waits for the operator (Claude Code's notification_type permission_prompt).
const NotificationPermission = "permission_prompt"

// notifyOperator fires operator_notification before the operator is asked.
// It is advisory: a failure is reported as at any hook, and the operator is
// asked all the same.
func (a *Agent) notifyOperator(ctx context.Context, t *turn, tc *exocortexv1.ToolCall, req Approval) {
	msg := fmt.Sprintf("Exocortex needs your permission to use %s: %s", req.Tool, req.Action)
	err := fire(ctx, a, t, exocortexv1.Hook_HOOK_OPERATOR_NOTIFICATION,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.OperatorNotificationRequest {
			return &exocortexv1.OperatorNotificationRequest{Call: c, Kind: NotificationPermission, Title: "Permission needed", Message: msg, ToolCall: tc}
		}, exocortexv1.PluginClient.OperatorNotification, nil)
	if err != nil {
		a.log.Warn("operator_notification failed", "err", err)
	}
}

// OperatorCall is the operator's own tool call (a !command in the terminal),
// reviewed at tool_execute_before and tool_execute_after by the extensions
// Only selects (the terminal passes the command hooks: the operator's own
// scripts review the operator's commands; the agent's guards do not).
type OperatorCall struct {
	Call *exocortexv1.ToolCall
	Only func(*host.Extension) bool
}

// OperatorBefore fires tool_execute_before for c. It returns the reason the
// call may not run ("" when it may); the arguments are rewritten in place.
// A selected extension that fails has allowed nothing (guards fail closed),
// and a call held for approval is not run either: the operator is told why
// and may change the command. Call it only while the agent is not running a
// monologue (the terminal's !commands run between turns).
func (a *Agent) OperatorBefore(ctx context.Context, c OperatorCall) (string, error) {
	t := &turn{tool: c.Call.GetName(), only: c.Only}
	var block *exocortexv1.ToolBlock
	var blocker string
	err := fire(ctx, a, t, exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE,
		func(hc *exocortexv1.HookCall, _ fields) *exocortexv1.ToolExecuteBeforeRequest {
			return &exocortexv1.ToolExecuteBeforeRequest{Call: hc, ToolCall: c.Call}
		}, exocortexv1.PluginClient.ToolExecuteBefore,
		func(ext *host.Extension, r *exocortexv1.ToolExecuteBeforeResponse) error {
			if r.ArgsJson != nil {
				if !json.Valid([]byte(r.GetArgsJson())) {
					return &HookError{Plugin: ext.Plugin.Name(), Extension: ext.Name(), Hook: ext.Hook.Name, Problem: "rewrote the tool arguments to invalid JSON"}
				}
				c.Call.ArgsJson = r.GetArgsJson()
			}
			if b := r.GetBlock(); b != nil && block == nil {
				block, blocker = b, ext.Name()
			}
			return nil
		})
	if err != nil {
		return "", err
	}
	if g := t.takeGate(); g != nil {
		return g.reason(), nil
	}
	if block != nil {
		if block.GetNeedsApproval() {
			return fmt.Sprintf("%s holds it for approval: %s (run it in a shell of your own if you mean it)", blocker, block.GetReason()), nil
		}
		return fmt.Sprintf("blocked by %s: %s", blocker, block.GetReason()), nil
	}
	return "", nil
}

// OperatorAfter fires tool_execute_after for c and its result: what the
// selected extensions say is added to the result (its annotations), or
// replaces its content.
func (a *Agent) OperatorAfter(ctx context.Context, c OperatorCall, result *exocortexv1.ToolResult) error {
	t := &turn{tool: c.Call.GetName(), only: c.Only}
	return fire(ctx, a, t, exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER,
		func(hc *exocortexv1.HookCall, _ fields) *exocortexv1.ToolExecuteAfterRequest {
			return &exocortexv1.ToolExecuteAfterRequest{Call: hc, ToolCall: c.Call, Result: result}
		}, exocortexv1.PluginClient.ToolExecuteAfter,
		func(_ *host.Extension, r *exocortexv1.ToolExecuteAfterResponse) error {
			if r.Content != nil {
				result.Content = r.GetContent()
			}
			result.Annotations = append(result.Annotations, r.GetAnnotations()...)
			return nil
		})
}
