package cmdhooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Decision is what one hook run decided, in Exocortex's terms.
type Decision struct {
	// Block stops the action (a tool call, the prompt, the end of the
	// monologue: there it makes the agent go on), with Reason for the model.
	Block  bool
	Reason string
	// Ask holds the tool call for the operator, whatever the approval mode.
	Ask bool
	// Allow is an explicit allow (it skips nothing in Exocortex: the other
	// guards still run).
	Allow bool
	// Input is the new tool input (updatedInput, Gemini's tool_input).
	Input map[string]any
	// Context is text for the model (additionalContext, plain stdout where
	// the event takes it, a PostToolUse block's reason).
	Context string
	// Output replaces the tool's result (updatedToolOutput).
	Output *string
	// Halt ends the monologue (continue: false), with HaltReason.
	Halt       bool
	HaltReason string
	// Warnings are for the operator: systemMessage, a non-blocking exit's
	// stderr.
	Warnings []string
}

type output struct {
	Continue       *bool  `json:"continue"`
	StopReason     string `json:"stopReason"`
	SuppressOutput bool   `json:"suppressOutput"`
	SystemMessage  string `json:"systemMessage"`
	Decision       string `json:"decision"`
	Reason         string `json:"reason"`
	Specific       struct {
		HookEventName            string          `json:"hookEventName"`
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             map[string]any  `json:"updatedInput"`
		AdditionalContext        string          `json:"additionalContext"`
		UpdatedToolOutput        json.RawMessage `json:"updatedToolOutput"`
		UpdatedMCPToolOutput     json.RawMessage `json:"updatedMCPToolOutput"`
		// Gemini CLI's BeforeTool: fields merged into the tool's input.
		ToolInput map[string]any `json:"tool_input"`
		// PermissionRequest's decision.
		Decision *permissionOutput `json:"decision"`
	} `json:"hookSpecificOutput"`
}

// takesPlainContext: the events whose plain stdout (exit 0, not JSON) is
// context for the model, as in Claude Code.
var takesPlainContext = map[string]bool{UserPromptSubmit: true, SessionStart: true}

// Decide reads a hook run: exit 0 with JSON (or plain text where the event
// takes it), exit 2 blocks with stderr as the reason, any other exit is a
// warning. Plain text where the event reads JSON is a warning; JSON that
// cannot be read, or a decision no tool defines, is a Failure.
func Decide(h Hook, r Run) (Decision, error) {
	var d Decision
	switch r.ExitCode {
	case 0:
	case 2:
		reason := strings.TrimSpace(string(r.Stderr))
		if reason == "" {
			reason = fmt.Sprintf("blocked by the command hook %s (exit 2, nothing on stderr)", h.Command)
		}
		if h.Event == PostToolUse || h.Event == PostToolUseFailure {
			d.Context = reason // the tool ran already: the model is told
			return d, nil
		}
		d.Block, d.Reason = true, reason
		return d, nil
	default:
		w := fmt.Sprintf("command hook %s (%s) exited %d", h.Ext(), h.Where(), r.ExitCode)
		if s := strings.TrimSpace(string(r.Stderr)); s != "" {
			w += ": " + s
		}
		d.Warnings = append(d.Warnings, w)
		return d, nil
	}
	out := bytes.TrimSpace(r.Stdout)
	if len(out) == 0 {
		return d, nil
	}
	if out[0] != '{' {
		if takesPlainContext[h.Event] {
			d.Context = string(out)
			return d, nil
		}
		// Claude Code shows such text in its transcript view only; it is
		// said here, never dropped without a word.
		d.Warnings = append(d.Warnings, fmt.Sprintf("command hook %s (%s) printed text that is not JSON (%.120q); at %s only a JSON object is read, so it was ignored: print logs to stderr", h.Ext(), h.Where(), out, h.NativeEvent))
		return d, nil
	}
	var o output
	if err := json.Unmarshal(out, &o); err != nil {
		return d, &Failure{Kind: Unparseable, Hook: h, Detail: fmt.Sprintf("printed JSON that cannot be read (%v): %.120q", err, out)}
	}
	if o.SystemMessage != "" {
		d.Warnings = append(d.Warnings, fmt.Sprintf("command hook %s: %s", h.Ext(), o.SystemMessage))
	}
	if o.Continue != nil && !*o.Continue {
		d.Halt, d.HaltReason = true, o.StopReason
		if d.HaltReason == "" {
			d.HaltReason = "stopped by the command hook " + h.Command
		}
	}
	s := o.Specific
	d.Context = s.AdditionalContext
	reason := o.Reason
	switch strings.ToLower(o.Decision) {
	case "block", "deny":
		if h.Event == PostToolUse || h.Event == PostToolUseFailure {
			d.Context = join(reason, d.Context)
		} else {
			d.Block, d.Reason = true, reason
		}
	case "approve", "allow":
		d.Allow = true
	case "ask":
		d.Ask, d.Reason = true, reason
	case "":
	default:
		return d, &Failure{Kind: Unparseable, Hook: h, Detail: fmt.Sprintf("decision %q is none of block, deny, approve, allow, ask", o.Decision)}
	}
	switch s.PermissionDecision {
	case "deny":
		d.Block, d.Reason = true, first(s.PermissionDecisionReason, reason)
	case "ask":
		d.Ask, d.Reason = true, first(s.PermissionDecisionReason, reason)
	case "allow":
		d.Allow = true
	case "":
	default:
		return d, &Failure{Kind: Unparseable, Hook: h, Detail: fmt.Sprintf("permissionDecision %q is none of allow, deny, ask", s.PermissionDecision)}
	}
	if s.Decision != nil {
		if err := s.Decision.apply(h, &d); err != nil {
			return d, err
		}
	}
	if d.Block && d.Reason == "" {
		d.Reason = "blocked by the command hook " + h.Command
	}
	d.Input = s.UpdatedInput
	if len(s.ToolInput) > 0 {
		if d.Input == nil {
			d.Input = map[string]any{}
		}
		for k, v := range s.ToolInput {
			d.Input[k] = v
		}
	}
	for _, raw := range []json.RawMessage{s.UpdatedToolOutput, s.UpdatedMCPToolOutput} {
		if len(raw) == 0 {
			continue
		}
		var text string
		if json.Unmarshal(raw, &text) != nil {
			text = string(raw)
		}
		d.Output = &text
	}
	return d, nil
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

// Combine folds the decisions of the hooks that matched one call, in their
// order: a block wins (the first one's reason, then the others'), an ask
// holds the call, contexts are joined in order, input changes are applied
// in order (a later hook's fields over an earlier one's), the last output
// replacement stands.
func Combine(ds []Decision) Decision {
	var c Decision
	var reasons []string
	for _, d := range ds {
		if d.Block {
			c.Block = true
			reasons = append(reasons, d.Reason)
		}
		if d.Ask && !c.Ask {
			c.Ask = true
			if !c.Block {
				c.Reason = d.Reason
			}
		}
		c.Allow = c.Allow || d.Allow
		c.Context = join(c.Context, d.Context)
		if d.Input != nil {
			if c.Input == nil {
				c.Input = map[string]any{}
			}
			for k, v := range d.Input {
				c.Input[k] = v
			}
		}
		if d.Output != nil {
			c.Output = d.Output
		}
		if d.Halt && !c.Halt {
			c.Halt, c.HaltReason = true, d.HaltReason
		}
		c.Warnings = append(c.Warnings, d.Warnings...)
	}
	if c.Block {
		c.Reason = strings.Join(reasons, "\n")
	}
	return c
}
