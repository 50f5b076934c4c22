package loop

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/exocortex/exocortex/core/host"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/signals"
)

// runTool runs tool_execute_before, the tool, tool_execute_after, and adds the
// result to the history. It returns nil when the tool was not found or blocked
// (the model was told why).
func (a *Agent) runTool(ctx context.Context, t *turn, tc *exocortexv1.ToolCall) (*exocortexv1.ToolResult, error) {
	tool, ok := a.opts.Host.Tool(tc.GetName())
	if !ok {
		_, err := a.injectSignal(ctx, t, signals.ToolNotFound, map[string]any{"tool_name": tc.GetName(), "tools": a.toolNames()})
		return nil, err
	}
	if !a.expanded[tc.GetName()] && !a.opts.FullToolDocs {
		a.expandTool(tc.GetName())
		if isHelp(tc.GetArgsJson()) {
			// Asked for the documentation, not a call: the next prompt has it.
			m := a.newMessage("user", "exocortex", "The full documentation of the tool "+tc.GetName()+" is now in the system prompt, under Tools. Call the tool as it describes.")
			return nil, a.addMessage(ctx, t, m)
		}
	}
	a.emit(Event{Type: EventToolCall, Iteration: t.iteration, Tool: tc.GetName(), Args: json.RawMessage(tc.GetArgsJson())})

	var block *exocortexv1.ToolBlock
	var blocker string
	t.tool = tc.GetName() // for the extensions' for_tools, at both tool hooks
	defer func() { t.tool = "" }()
	t.takeGate()
	err := fire(ctx, a, t, exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.ToolExecuteBeforeRequest {
			return &exocortexv1.ToolExecuteBeforeRequest{Call: c, ToolCall: tc}
		}, exocortexv1.PluginClient.ToolExecuteBefore,
		func(ext *host.Extension, r *exocortexv1.ToolExecuteBeforeResponse) error {
			if r.ArgsJson != nil {
				if !json.Valid([]byte(r.GetArgsJson())) {
					return &HookError{Plugin: ext.Plugin.Name(), Extension: ext.Name(), Hook: ext.Hook.Name, Problem: "rewrote the tool arguments to invalid JSON"}
				}
				tc.ArgsJson = r.GetArgsJson()
			}
			if b := r.GetBlock(); b != nil && block == nil {
				block, blocker = b, ext.Name()
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	if g := t.takeGate(); g != nil {
		// A guard that failed has allowed nothing: a block no approval lifts.
		block, blocker = &exocortexv1.ToolBlock{Reason: g.reason()}, g.ext.Name()
		a.emit(Event{Type: EventNotice, Iteration: t.iteration, Tool: tc.GetName(), Extension: blocker, Error: g.err.Error(), Text: tc.GetName() + " call stopped: " + g.reason()})
	}
	if block != nil {
		reason := block.GetReason()
		allowed := false
		if block.GetNeedsApproval() {
			action := block.GetAction()
			if action == "" {
				action = tc.GetName() + " " + tc.GetArgsJson()
			}
			d, why := a.decide(ctx, t, tc, Approval{Tool: tc.GetName(), Action: action, Reason: reason, Extension: blocker, AlwaysAsk: block.GetAlwaysAsk()})
			a.emit(Event{Type: EventApproval, Iteration: t.iteration, Tool: tc.GetName(), Extension: blocker, Text: action, Result: d.String() + ": " + why})
			allowed = d != Deny
			if !allowed {
				reason += " (" + why + ")"
			}
		}
		if !allowed {
			_, err := a.injectSignal(ctx, t, signals.ToolBlocked, map[string]any{"tool_name": tc.GetName(), "reason": reason})
			return &exocortexv1.ToolResult{Error: "blocked by " + blocker + ": " + reason}, err
		}
	}

	// text_editor_write_before / _patch_before may change what is written,
	// or refuse the call.
	edit := parseEditorCall(tc)
	var result *exocortexv1.ToolResult
	if edit != nil {
		if result, err = a.editorBefore(ctx, t, tc, edit); err != nil {
			return nil, err
		}
	}
	if result == nil {
		result, err = a.execute(ctx, t, func(ctx context.Context) (*exocortexv1.ExecuteToolResponse, error) {
			return a.executeTool(ctx, t, tool, tc, a.toolTimeout(tc.GetName()))
		}, tc)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			result = &exocortexv1.ToolResult{Error: err.Error()}
		}
		if result == nil {
			result = &exocortexv1.ToolResult{}
		}
		if edit != nil {
			if err := a.editorAfter(ctx, t, tc, edit, result); err != nil {
				return result, err
			}
		}
	}
	// A plugin that opened the memory store for the tool may have reported an
	// embedding model change.
	if err := a.fireEmbeddingChanges(ctx, t); err != nil {
		return result, err
	}

	err = fire(ctx, a, t, exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.ToolExecuteAfterRequest {
			return &exocortexv1.ToolExecuteAfterRequest{Call: c, ToolCall: tc, Result: result}
		}, exocortexv1.PluginClient.ToolExecuteAfter,
		func(_ *host.Extension, r *exocortexv1.ToolExecuteAfterResponse) error {
			if r.Content != nil {
				result.Content = r.GetContent()
			}
			result.Annotations = append(result.Annotations, r.GetAnnotations()...)
			return nil
		})
	if err != nil {
		return result, err
	}
	a.emit(Event{Type: EventToolResult, Iteration: t.iteration, Tool: tc.GetName(), Result: result.GetContent(), Error: result.GetError()})
	if result.GetBreakLoop() {
		return result, nil
	}
	text, err := a.histAddToolResult(ctx, t, tc, result)
	if err != nil {
		return result, err
	}
	m := a.newMessage("tool", tc.GetName(), text)
	m.ToolName = tc.GetName()
	return result, a.addMessage(ctx, t, m)
}

// isHelp reports whether a tool call's arguments are {"help": true}: the
// model asks for the tool's full documentation (the tools prompt says how).
func isHelp(args string) bool {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil || len(m) != 1 {
		return false
	}
	v, ok := m["help"].(bool)
	return ok && v
}

// resultText is what the model sees of a tool result.
func resultText(r *exocortexv1.ToolResult) string {
	var b strings.Builder
	b.WriteString(r.GetContent())
	if r.GetError() != "" {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("Error: " + r.GetError())
	}
	for _, n := range r.GetAnnotations() {
		b.WriteString("\n\nNote: " + n)
	}
	return b.String()
}

func (a *Agent) toolTimeout(name string) time.Duration {
	if d, ok := a.opts.ToolTimeouts[name]; ok && d > 0 {
		return d
	}
	return a.opts.ToolTimeout
}
