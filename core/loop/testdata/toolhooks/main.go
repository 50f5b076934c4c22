// Command toolhooks is a test plugin for the tool-side hook points. It
// provides a text_editor tool of its own (read, write, patch on files under
// $TOOLHOOKS_DIR) and a tool "stream" that reports its output in pieces
// ($TOOLHOOKS_PIECES, split at "|", or three fixed ones) and an
// embedding model change through the Host service; its extension watches every
// tool-side hook, appends each call as a JSON line to $TOOLHOOKS_LOG, and
// changes what each allows:
//
//	text_editor_write_before  upper-cases the content; refuses forbidden.txt
//	text_editor_patch_before  upper-cases the replacement
//	text_editor_read_after    prefixes what the model sees with "[seen] "
//	tool_output_update        shows "secret" as "******"
//	hist_add_tool_result      appends " [stored]" to the stored text
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

var mu sync.Mutex

func logCall(hook string, fields map[string]any) {
	path := os.Getenv("TOOLHOOKS_LOG")
	if path == "" {
		return
	}
	fields["hook"] = hook
	b, _ := json.Marshal(fields)
	mu.Lock()
	defer mu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(b, '\n'))
}

func ptr(s string) *string { return &s }

type watcher struct{}

func (e watcher) Spec() sdk.Spec {
	return sdk.Spec{Name: "tool_watch", Hooks: []sdk.Hook{sdk.ToolExecuteAfter(e), sdk.HistAddToolResult(e), sdk.ToolOutputUpdate(e), sdk.TextEditorReadAfter(e), sdk.TextEditorWriteBefore(e), sdk.TextEditorWriteAfter(e), sdk.TextEditorPatchBefore(e), sdk.TextEditorPatchAfter(e), sdk.EmbeddingModelChanged(e)}, Order: 50, Description: "Records every tool-side hook call and changes what each allows."}
}

func (watcher) TextEditorWriteBefore(_ context.Context, _ *sdk.Call, req *exocortexv1.TextEditorWriteBeforeRequest) (*exocortexv1.TextEditorWriteBeforeResponse, error) {
	logCall("text_editor_write_before", map[string]any{"path": req.GetPath(), "content": req.GetContent()})
	if req.GetPath() == "forbidden.txt" {
		return &exocortexv1.TextEditorWriteBeforeResponse{Refuse: ptr("forbidden.txt is off limits")}, nil
	}
	return &exocortexv1.TextEditorWriteBeforeResponse{Content: ptr(strings.ToUpper(req.GetContent()))}, nil
}

func (watcher) TextEditorWriteAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.TextEditorWriteAfterRequest) (*exocortexv1.TextEditorWriteAfterResponse, error) {
	logCall("text_editor_write_after", map[string]any{"path": req.GetPath(), "content": req.GetContent(), "result": req.GetResult().GetContent(), "error": req.GetResult().GetError()})
	return nil, nil
}

func (watcher) TextEditorPatchBefore(_ context.Context, _ *sdk.Call, req *exocortexv1.TextEditorPatchBeforeRequest) (*exocortexv1.TextEditorPatchBeforeResponse, error) {
	logCall("text_editor_patch_before", map[string]any{"path": req.GetPath(), "old_text": req.GetOldText(), "new_text": req.GetNewText()})
	return &exocortexv1.TextEditorPatchBeforeResponse{NewText: ptr(strings.ToUpper(req.GetNewText()))}, nil
}

func (watcher) TextEditorPatchAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.TextEditorPatchAfterRequest) (*exocortexv1.TextEditorPatchAfterResponse, error) {
	logCall("text_editor_patch_after", map[string]any{"path": req.GetPath(), "old_text": req.GetOldText(), "new_text": req.GetNewText(), "result": req.GetResult().GetContent()})
	return nil, nil
}

func (watcher) TextEditorReadAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.TextEditorReadAfterRequest) (*exocortexv1.TextEditorReadAfterResponse, error) {
	logCall("text_editor_read_after", map[string]any{"path": req.GetPath(), "line_from": req.GetLineFrom(), "line_to": req.GetLineTo(), "content": req.GetContent()})
	return &exocortexv1.TextEditorReadAfterResponse{Content: ptr("[seen] " + req.GetContent())}, nil
}

func (watcher) ToolOutputUpdate(_ context.Context, _ *sdk.Call, req *exocortexv1.ToolOutputUpdateRequest) (*exocortexv1.ToolOutputUpdateResponse, error) {
	logCall("tool_output_update", map[string]any{"tool": req.GetToolCall().GetName(), "delta": req.GetDelta(), "output": req.GetOutput()})
	return &exocortexv1.ToolOutputUpdateResponse{Display: ptr(strings.ReplaceAll(req.GetOutput(), "secret", "******"))}, nil
}

func (watcher) HistAddToolResult(_ context.Context, _ *sdk.Call, req *exocortexv1.HistAddToolResultRequest) (*exocortexv1.HistAddToolResultResponse, error) {
	logCall("hist_add_tool_result", map[string]any{"tool": req.GetToolCall().GetName(), "text": req.GetText()})
	return &exocortexv1.HistAddToolResultResponse{Text: ptr(req.GetText() + " [stored]")}, nil
}

func (watcher) EmbeddingModelChanged(_ context.Context, _ *sdk.Call, req *exocortexv1.EmbeddingModelChangedRequest) (*exocortexv1.EmbeddingModelChangedResponse, error) {
	logCall("embedding_model_changed", map[string]any{"old": req.GetOldModel(), "new": req.GetNewModel(), "old_dims": req.GetOldDims(), "new_dims": req.GetNewDims(), "store": req.GetStore()})
	return nil, nil
}

func (watcher) ToolExecuteAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	logCall("tool_execute_after", map[string]any{"tool": req.GetToolCall().GetName()})
	return nil, nil
}

func editor(_ context.Context, _ *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
	var a struct {
		Action, Path, Content string
		OldTextJSON           string `json:"old_text"`
		NewTextJSON           string `json:"new_text"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, err
	}
	p := filepath.Join(os.Getenv("TOOLHOOKS_DIR"), a.Path)
	switch a.Action {
	case "write":
		if err := os.WriteFile(p, []byte(a.Content), 0o644); err != nil {
			return nil, err
		}
		return &exocortexv1.ToolResult{Content: "wrote " + a.Path}, nil
	case "patch":
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out := strings.Replace(string(b), a.OldTextJSON, a.NewTextJSON, 1)
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			return nil, err
		}
		return &exocortexv1.ToolResult{Content: "patched " + a.Path}, nil
	case "read":
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		return &exocortexv1.ToolResult{Content: "1: " + string(b)}, nil
	}
	return nil, fmt.Errorf("unknown action %q", a.Action)
}

func stream(ctx context.Context, c *sdk.Call, _ json.RawMessage) (*exocortexv1.ToolResult, error) {
	var shown []string
	pieces := []string{"one ", "secret ", "three"}
	if p := os.Getenv("TOOLHOOKS_PIECES"); p != "" {
		pieces = strings.Split(p, "|") // the pieces a test wants reported
	}
	for _, piece := range pieces {
		d, err := c.ReportOutput(ctx, piece)
		if err != nil {
			return nil, err
		}
		shown = append(shown, d)
	}
	if err := c.ReportEmbeddingModelChanged(ctx, "/tmp/store", "glove-100d", 100, "nomic-embed-text", 768); err != nil {
		return nil, err
	}
	return &exocortexv1.ToolResult{Content: "streamed; shown: " + strings.Join(shown, " | ")}, nil
}

func respond(_ context.Context, _ *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
	var a struct{ Text string }
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, err
	}
	return &exocortexv1.ToolResult{Content: a.Text, BreakLoop: true}, nil
}

func main() {
	sdk.Serve(sdk.Plugin{Name: "toolhooks", Version: "test",
		Extensions: []sdk.Extension{watcher{}},
		Tools: []sdk.Tool{
			{Name: "text_editor", Description: "Reads, writes and patches files (test).", Run: editor},
			{Name: "stream", Description: "Reports its output in pieces (test).", Run: stream},
			{Name: "response", Description: "Ends the monologue with text (test).", Run: respond},
		}})
}
