package cmdhooks

import (
	"fmt"
	"strings"
)

// permissionOutput is PermissionRequest's hookSpecificOutput.decision:
// behavior allow or deny, with a message for a denial. updatedInput and
// interrupt are read so that they are never ignored without a word: a held
// call's input is not rewritten at approval (rewrite it at PreToolUse), and
// interrupt asks to stop the whole turn, which a hook cannot do here: the
// call is denied and the operator told.
type permissionOutput struct {
	Behavior     string         `json:"behavior"`
	Message      string         `json:"message"`
	UpdatedInput map[string]any `json:"updatedInput"`
	Interrupt    bool           `json:"interrupt"`
}

func (p *permissionOutput) apply(h Hook, d *Decision) error {
	if h.Event != PermissionRequest {
		return &Failure{Kind: Unparseable, Hook: h, Detail: fmt.Sprintf("hookSpecificOutput.decision is PermissionRequest's, not %s's", h.NativeEvent)}
	}
	switch strings.ToLower(p.Behavior) {
	case "allow":
		d.Allow = true
		d.Reason = p.Message
	case "deny":
		d.Block = true
		d.Reason = first(p.Message, "denied by the command hook "+h.Command)
	default:
		return &Failure{Kind: Unparseable, Hook: h, Detail: fmt.Sprintf("hookSpecificOutput.decision.behavior %q is neither allow nor deny", p.Behavior)}
	}
	if len(p.UpdatedInput) > 0 {
		d.Warnings = append(d.Warnings, fmt.Sprintf("command hook %s (%s) gave updatedInput at PermissionRequest: a held call's input is not rewritten at approval, so it was not applied (rewrite it at PreToolUse)", h.Ext(), h.Where()))
	}
	if p.Interrupt {
		d.Allow, d.Block = false, true
		d.Reason = first(p.Message, "interrupted by the command hook "+h.Command)
		d.Warnings = append(d.Warnings, fmt.Sprintf("command hook %s asked to interrupt: the held call is denied; the turn goes on", h.Ext()))
	}
	return nil
}
