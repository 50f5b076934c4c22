// Command toolwatch is the end-to-end test's plugin for the tool-side hook
// points: an extension at each of them that changes nothing (so the trace
// shows where each fires around the built-in text_editor and the tool below),
// and a tool "progress" that reports its output in two pieces and an embedding
// model change through the host's services, as code_execution and the memory
// tools do.
package main

import (
	"context"
	"encoding/json"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type watcher struct{}

func (e watcher) Spec() sdk.Spec {
	return sdk.Spec{Name: "tool_watch", Hooks: []sdk.Hook{sdk.HistAddToolResult(e), sdk.ToolOutputUpdate(e), sdk.TextEditorReadAfter(e), sdk.TextEditorWriteBefore(e), sdk.TextEditorWriteAfter(e), sdk.TextEditorPatchBefore(e), sdk.TextEditorPatchAfter(e), sdk.EmbeddingModelChanged(e)}, Order: 50, Description: "Watches every tool-side hook and changes nothing."}
}

func (watcher) TextEditorReadAfter(context.Context, *sdk.Call, *exocortexv1.TextEditorReadAfterRequest) (*exocortexv1.TextEditorReadAfterResponse, error) {
	return nil, nil
}

func (watcher) TextEditorWriteBefore(context.Context, *sdk.Call, *exocortexv1.TextEditorWriteBeforeRequest) (*exocortexv1.TextEditorWriteBeforeResponse, error) {
	return nil, nil
}

func (watcher) TextEditorWriteAfter(context.Context, *sdk.Call, *exocortexv1.TextEditorWriteAfterRequest) (*exocortexv1.TextEditorWriteAfterResponse, error) {
	return nil, nil
}

func (watcher) TextEditorPatchBefore(context.Context, *sdk.Call, *exocortexv1.TextEditorPatchBeforeRequest) (*exocortexv1.TextEditorPatchBeforeResponse, error) {
	return nil, nil
}

func (watcher) TextEditorPatchAfter(context.Context, *sdk.Call, *exocortexv1.TextEditorPatchAfterRequest) (*exocortexv1.TextEditorPatchAfterResponse, error) {
	return nil, nil
}

func (watcher) ToolOutputUpdate(context.Context, *sdk.Call, *exocortexv1.ToolOutputUpdateRequest) (*exocortexv1.ToolOutputUpdateResponse, error) {
	return nil, nil
}

func (watcher) HistAddToolResult(context.Context, *sdk.Call, *exocortexv1.HistAddToolResultRequest) (*exocortexv1.HistAddToolResultResponse, error) {
	return nil, nil
}

func (watcher) EmbeddingModelChanged(context.Context, *sdk.Call, *exocortexv1.EmbeddingModelChangedRequest) (*exocortexv1.EmbeddingModelChangedResponse, error) {
	return nil, nil
}

func progress(ctx context.Context, c *sdk.Call, _ json.RawMessage) (*exocortexv1.ToolResult, error) {
	for _, piece := range []string{"half done\n", "done\n"} {
		if _, err := c.ReportOutput(ctx, piece); err != nil {
			return nil, err
		}
	}
	if err := c.ReportEmbeddingModelChanged(ctx, "/tmp/e2e-store", "glove-100d", 100, "nomic-embed-text", 768); err != nil {
		return nil, err
	}
	return &exocortexv1.ToolResult{Content: "half done\ndone"}, nil
}

func main() {
	sdk.Serve(sdk.Plugin{Name: "toolwatch", Version: "test", Extensions: []sdk.Extension{watcher{}},
		Tools: []sdk.Tool{{Name: "progress", Description: "Reports its progress in pieces (test).", Run: progress}}})
}
