package loop

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/exocortex/exocortex/core/host"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// The tool-side hook points of Agent Zero v1.7 (issue 18). The tools run in
// plugins, so the core fires them around the call it makes:
//
//   - text_editor_{read,write,patch}_{before,after} around a call of the
//     text_editor tool, by its action (the tool's arguments are known: action,
//     path, content, old_text, new_text, line_from, line_to). A *_before
//     response may change what is written, or refuse the call; read_after may
//     change what the model sees of a read.
//   - tool_output_update for each piece of partial output the running tool
//     reports through the Host service (ReportToolOutput).
//   - hist_add_tool_result when the result is about to be added to the history,
//     after tool_execute_after; it may change the text stored.
//   - embedding_model_changed when a plugin reports that a memory store was
//     built with another embedding model (ReportEmbeddingModelChanged).

// EditorTool is the name of the tool the text_editor_* hooks fire around.
const EditorTool = "text_editor"

// editorActions maps the text_editor's actions, aliases included, to the
// three the hooks are named for; it is the tool's own table (extensions/editor).
var editorActions = map[string]string{
	"read": "read", "view": "read", "show": "read", "cat": "read", "open": "read",
	"write": "write", "create": "write", "overwrite": "write",
	"patch": "patch", "replace": "patch", "str_replace": "patch", "edit": "patch",
}

// editorCall is a text_editor call's arguments, as far as the hooks use them.
type editorCall struct {
	action             string
	args               map[string]any
	path               string
	content            string
	oldText, newText   string
	lineFrom, lineTo   int32
	hasContent, hasOld bool
}

// parseEditorCall returns tc's arguments when it is a text_editor call with a
// known action, and nil otherwise (the tool itself reports a bad call).
func parseEditorCall(tc *exocortexv1.ToolCall) *editorCall {
	if tc.GetName() != EditorTool {
		return nil
	}
	var args map[string]any
	if json.Unmarshal([]byte(tc.GetArgsJson()), &args) != nil {
		return nil
	}
	action, _ := args["action"].(string)
	op, ok := editorActions[strings.ToLower(strings.TrimSpace(action))]
	if !ok {
		return nil
	}
	e := &editorCall{action: op, args: args}
	e.path, _ = args["path"].(string)
	e.content, e.hasContent = args["content"].(string)
	e.oldText, e.hasOld = args["old_text"].(string)
	e.newText, _ = args["new_text"].(string)
	e.lineFrom, e.lineTo = argInt(args["line_from"]), argInt(args["line_to"])
	return e
}

func argInt(v any) int32 {
	switch n := v.(type) {
	case float64:
		return int32(n)
	case string:
		i, _ := strconv.Atoi(strings.TrimSpace(n))
		return int32(i)
	}
	return 0
}

// set changes one argument of the call and rewrites tc's arguments.
func (e *editorCall) set(tc *exocortexv1.ToolCall, key, value string) {
	e.args[key] = value
	b, _ := json.Marshal(e.args)
	tc.ArgsJson = string(b)
}

// editorBefore fires text_editor_write_before or text_editor_patch_before.
// It returns the refusal (a result) when an extension refused the call.
func (a *Agent) editorBefore(ctx context.Context, t *turn, tc *exocortexv1.ToolCall, e *editorCall) (refused *exocortexv1.ToolResult, err error) {
	refuse := func(ext *host.Extension, hook, reason string) {
		if refused == nil {
			refused = &exocortexv1.ToolResult{Error: "refused by " + ext.Name() + " at " + hook + ": " + reason}
		}
	}
	// A guard that failed refuses the edit (failclosed.go), after the others
	// at the hook have answered.
	defer func() {
		if g := t.takeGate(); g != nil && refused == nil && err == nil {
			refused = &exocortexv1.ToolResult{Error: "refused by " + g.ext.Name() + " at " + g.ext.Hook.Name + ": " + g.reason()}
			a.emit(Event{Type: EventNotice, Iteration: t.iteration, Tool: tc.GetName(), Extension: g.ext.Name(), Error: g.err.Error(), Text: "text_editor " + e.action + " refused: " + g.reason()})
		}
	}()
	t.takeGate()
	switch {
	case e.action == "write" && e.hasContent:
		err = fire(ctx, a, t, exocortexv1.Hook_HOOK_TEXT_EDITOR_WRITE_BEFORE,
			func(c *exocortexv1.HookCall, _ fields) *exocortexv1.TextEditorWriteBeforeRequest {
				return &exocortexv1.TextEditorWriteBeforeRequest{Call: c, ToolCall: tc, Path: e.path, Content: e.content}
			}, exocortexv1.PluginClient.TextEditorWriteBefore,
			func(ext *host.Extension, r *exocortexv1.TextEditorWriteBeforeResponse) error {
				if r.Content != nil {
					e.content = r.GetContent()
					e.set(tc, "content", e.content)
				}
				if r.Refuse != nil {
					refuse(ext, ext.Hook.Name, r.GetRefuse())
				}
				return nil
			})
	case e.action == "patch" && e.hasOld:
		err = fire(ctx, a, t, exocortexv1.Hook_HOOK_TEXT_EDITOR_PATCH_BEFORE,
			func(c *exocortexv1.HookCall, _ fields) *exocortexv1.TextEditorPatchBeforeRequest {
				return &exocortexv1.TextEditorPatchBeforeRequest{Call: c, ToolCall: tc, Path: e.path, OldText: e.oldText, NewText: e.newText}
			}, exocortexv1.PluginClient.TextEditorPatchBefore,
			func(ext *host.Extension, r *exocortexv1.TextEditorPatchBeforeResponse) error {
				if r.OldText != nil {
					e.oldText = r.GetOldText()
					e.set(tc, "old_text", e.oldText)
				}
				if r.NewText != nil {
					e.newText = r.GetNewText()
					e.set(tc, "new_text", e.newText)
				}
				if r.Refuse != nil {
					refuse(ext, ext.Hook.Name, r.GetRefuse())
				}
				return nil
			})
	}
	return refused, err
}

// editorAfter fires text_editor_read_after, _write_after or _patch_after with
// the tool's result; read_after may replace the result's content.
func (a *Agent) editorAfter(ctx context.Context, t *turn, tc *exocortexv1.ToolCall, e *editorCall, result *exocortexv1.ToolResult) error {
	switch e.action {
	case "read":
		if result.GetError() != "" {
			return nil // nothing was read
		}
		return fire(ctx, a, t, exocortexv1.Hook_HOOK_TEXT_EDITOR_READ_AFTER,
			func(c *exocortexv1.HookCall, _ fields) *exocortexv1.TextEditorReadAfterRequest {
				return &exocortexv1.TextEditorReadAfterRequest{Call: c, ToolCall: tc, Path: e.path, LineFrom: e.lineFrom, LineTo: e.lineTo, Content: result.GetContent()}
			}, exocortexv1.PluginClient.TextEditorReadAfter,
			func(_ *host.Extension, r *exocortexv1.TextEditorReadAfterResponse) error {
				if r.Content != nil {
					result.Content = r.GetContent()
				}
				return nil
			})
	case "write":
		return fire(ctx, a, t, exocortexv1.Hook_HOOK_TEXT_EDITOR_WRITE_AFTER,
			func(c *exocortexv1.HookCall, _ fields) *exocortexv1.TextEditorWriteAfterRequest {
				return &exocortexv1.TextEditorWriteAfterRequest{Call: c, ToolCall: tc, Path: e.path, Content: e.content, Result: result}
			}, exocortexv1.PluginClient.TextEditorWriteAfter,
			func(*host.Extension, *exocortexv1.TextEditorWriteAfterResponse) error { return nil })
	case "patch":
		return fire(ctx, a, t, exocortexv1.Hook_HOOK_TEXT_EDITOR_PATCH_AFTER,
			func(c *exocortexv1.HookCall, _ fields) *exocortexv1.TextEditorPatchAfterRequest {
				return &exocortexv1.TextEditorPatchAfterRequest{Call: c, ToolCall: tc, Path: e.path, OldText: e.oldText, NewText: e.newText, Result: result}
			}, exocortexv1.PluginClient.TextEditorPatchAfter,
			func(*host.Extension, *exocortexv1.TextEditorPatchAfterResponse) error { return nil })
	}
	return nil
}

// histAddToolResult fires hist_add_tool_result with the text about to be
// stored and returns the text to store.
func (a *Agent) histAddToolResult(ctx context.Context, t *turn, tc *exocortexv1.ToolCall, result *exocortexv1.ToolResult) (string, error) {
	text := resultText(result)
	err := fire(ctx, a, t, exocortexv1.Hook_HOOK_HIST_ADD_TOOL_RESULT,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.HistAddToolResultRequest {
			return &exocortexv1.HistAddToolResultRequest{Call: c, ToolCall: tc, Result: result, Text: text}
		}, exocortexv1.PluginClient.HistAddToolResult,
		func(_ *host.Extension, r *exocortexv1.HistAddToolResultResponse) error {
			if r.Text != nil {
				text = r.GetText()
			}
			return nil
		})
	return text, err
}

// executeTool runs the tool and, while it runs, fires tool_output_update for
// every piece of output it reports (in this goroutine, between the reports:
// the hooks never run beside one another).
func (a *Agent) executeTool(ctx context.Context, t *turn, tool *host.Tool, tc *exocortexv1.ToolCall, timeout time.Duration) (*exocortexv1.ExecuteToolResponse, error) {
	req := &exocortexv1.ExecuteToolRequest{
		Call:     &exocortexv1.HookCall{Context: a.context(t, toolHook())},
		ToolCall: tc,
	}
	outputs, stop := a.opts.Host.Services().WatchToolOutput(req.GetCall().GetContext().GetContextId())
	defer stop()
	type answer struct {
		resp *exocortexv1.ExecuteToolResponse
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := a.opts.Host.ExecuteTool(ctx, tool, req, timeout)
		done <- answer{resp, err}
	}()
	// The partial output is masked as a stream (secrets.Stream): a value split
	// across two reports is masked too, its start held back until the next
	// report settles it; the result, masked whole, brings any tail still held.
	outMask := a.masker().NewStream()
	var output strings.Builder
	for {
		select {
		case ans := <-done:
			return ans.resp, ans.err
		case o := <-outputs:
			delta := outMask.Write(o.Delta)
			output.WriteString(delta)
			display := output.String()
			err := fire(ctx, a, t, exocortexv1.Hook_HOOK_TOOL_OUTPUT_UPDATE,
				func(c *exocortexv1.HookCall, _ fields) *exocortexv1.ToolOutputUpdateRequest {
					return &exocortexv1.ToolOutputUpdateRequest{Call: c, ToolCall: tc, Delta: delta, Output: output.String()}
				}, exocortexv1.PluginClient.ToolOutputUpdate,
				func(_ *host.Extension, r *exocortexv1.ToolOutputUpdateResponse) error {
					if r.Display != nil {
						display = r.GetDisplay()
					}
					return nil
				})
			if err != nil {
				a.log.Warn("tool_output_update failed", "tool", tc.GetName(), "err", err)
			}
			a.emit(Event{Type: EventToolOutput, Iteration: t.iteration, Tool: tc.GetName(), Text: display})
			o.Reply <- display
		}
	}
}

// ReportEmbeddingChange queues a plugin's report that a memory store was built
// with another embedding model; the agent fires embedding_model_changed at its
// next point between hooks (after message_loop_prompts_after, after a tool
// call). Plug it in with host.Services().SetEmbeddingSink.
func (a *Agent) ReportEmbeddingChange(c *host.EmbeddingChange) {
	a.mu.Lock()
	a.embedChanges = append(a.embedChanges, c)
	a.mu.Unlock()
}

// fireEmbeddingChanges fires embedding_model_changed for each queued report.
func (a *Agent) fireEmbeddingChanges(ctx context.Context, t *turn) error {
	a.mu.Lock()
	queued := a.embedChanges
	a.embedChanges = nil
	a.mu.Unlock()
	for _, c := range queued {
		a.emit(Event{Type: EventNotice, Iteration: t.iteration, Text: "memory store " + c.GetStore() + ": embedding model changed from " + c.GetOldModel() + " to " + c.GetNewModel()})
		err := fire(ctx, a, t, exocortexv1.Hook_HOOK_EMBEDDING_MODEL_CHANGED,
			func(hc *exocortexv1.HookCall, _ fields) *exocortexv1.EmbeddingModelChangedRequest {
				return &exocortexv1.EmbeddingModelChangedRequest{Call: hc, OldModel: c.GetOldModel(), NewModel: c.GetNewModel(),
					OldDims: c.GetOldDims(), NewDims: c.GetNewDims(), Store: c.GetStore()}
			}, exocortexv1.PluginClient.EmbeddingModelChanged,
			func(*host.Extension, *exocortexv1.EmbeddingModelChangedResponse) error { return nil })
		if err != nil {
			return err
		}
	}
	return nil
}
