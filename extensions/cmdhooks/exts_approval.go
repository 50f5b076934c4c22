package cmdhooks

import (
	"context"
	"fmt"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// preCompact is a PreCompact (Gemini's PreCompress) hook at
// history_compress_before: its additionalContext (or a block's reason, which
// cannot hold an automatic compression back) is kept in the summary.
type preCompact struct {
	b *Bridge
	h Hook
}

func (p preCompact) Spec() sdk.Spec { return spec(p.h, sdk.HistoryCompressBefore(p)) }

func (p preCompact) HistoryCompressBefore(ctx context.Context, c *sdk.Call, req *exocortexv1.HistoryCompressBeforeRequest) (*exocortexv1.HistoryCompressBeforeResponse, error) {
	sel := func(o Hook) (map[string]any, bool) {
		m, _ := compileMatcher(o.Matcher) // checked at Load; Claude Code matches the trigger
		if !m.match(req.GetTrigger()) {
			return nil, false
		}
		return map[string]any{"trigger": req.GetTrigger(), "custom_instructions": req.GetCustomInstructions()}, true
	}
	key := fmt.Sprintf("compact\x00%s\x00%d\x00%d", c.Context().GetRequestId(), c.Context().GetIteration(), req.GetFrom())
	d, ran, err := p.b.runGroup(ctx, c, key, p.h, sel)
	if err != nil || !ran {
		return &exocortexv1.HistoryCompressBeforeResponse{}, err
	}
	out := &exocortexv1.HistoryCompressBeforeResponse{}
	if d.Context != "" {
		out.Keep = []string{d.Context}
	}
	if d.Block || d.Halt {
		r := fmt.Sprintf("command hook %s: %s", p.h.Ext(), first(d.Reason, d.HaltReason))
		out.Hold = &r
	}
	return out, nil
}

// permission is a PermissionRequest hook at tool_approval_request: it may
// allow or deny a held call, in every approval mode.
type permission struct {
	b *Bridge
	h Hook
}

func (p permission) Spec() sdk.Spec { return spec(p.h, sdk.ToolApprovalRequest(p)) }

func (p permission) ToolApprovalRequest(ctx context.Context, c *sdk.Call, req *exocortexv1.ToolApprovalRequestRequest) (*exocortexv1.ToolApprovalRequestResponse, error) {
	tc := req.GetToolCall()
	if _, _, ok, err := toolFields(p.b, p.h, tc); err != nil || !ok {
		return &exocortexv1.ToolApprovalRequestResponse{}, err
	}
	d, _, err := p.b.runGroup(ctx, c, "permission\x00"+occurrence(c, tc), p.h, func(o Hook) (map[string]any, bool) {
		_, f, ok, err := toolFields(p.b, o, tc)
		if ok && err == nil {
			f["permission_suggestions"] = []any{}
		}
		return f, ok && err == nil
	})
	if err != nil {
		return nil, err
	}
	out := &exocortexv1.ToolApprovalRequestResponse{}
	switch {
	case d.Block || d.Halt:
		r := fmt.Sprintf("command hook %s (%s): %s", p.h.Ext(), p.h.Command, first(d.Reason, d.HaltReason))
		out.Refuse = &r
	case d.Allow:
		out.Allow = true
		out.Message = strings.TrimSpace(fmt.Sprintf("command hook %s %s", p.h.Ext(), d.Reason))
	}
	return out, nil
}

// notification is a Notification hook at operator_notification: it is told
// when the operator is asked (notification_type permission_prompt); what it
// answers is advisory.
type notification struct {
	b *Bridge
	h Hook
}

func (n notification) Spec() sdk.Spec { return spec(n.h, sdk.OperatorNotification(n)) }

func (n notification) OperatorNotification(ctx context.Context, c *sdk.Call, req *exocortexv1.OperatorNotificationRequest) (*exocortexv1.OperatorNotificationResponse, error) {
	sel := func(o Hook) (map[string]any, bool) {
		m, _ := compileMatcher(o.Matcher) // Claude Code matches the notification type
		if !m.match(req.GetKind()) {
			return nil, false
		}
		f := map[string]any{"message": req.GetMessage(), "notification_type": req.GetKind(), "title": req.GetTitle()}
		if o.Dialect == "gemini" {
			f["details"] = map[string]any{"tool_name": req.GetToolCall().GetName()}
		}
		return f, true
	}
	key := fmt.Sprintf("notify\x00%s\x00%d\x00%s\x00%s", c.Context().GetRequestId(), c.Context().GetIteration(), req.GetToolCall().GetId(), req.GetKind())
	_, _, err := n.b.runGroup(ctx, c, key, n.h, sel)
	return &exocortexv1.OperatorNotificationResponse{}, err
}
