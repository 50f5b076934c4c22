// Command embedwatch is a test plugin: the memory tools as the built-in
// memory-tools plugin serves them (the store in $EXOCORTEX_HOME/memory, the
// embedder from $EXOCORTEX_EMBEDDER), beside an extension that appends every
// call of embedding_model_changed and tool_execute_after as a JSON line to
// $EMBEDWATCH_LOG.
package main

import (
	"context"
	"encoding/json"
	"os"
	"sync"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/extensions/memorytools"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type watcher struct{ mu *sync.Mutex }

func (w watcher) log(fields map[string]any) {
	b, _ := json.Marshal(fields)
	w.mu.Lock()
	defer w.mu.Unlock()
	f, err := os.OpenFile(os.Getenv("EMBEDWATCH_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(b, '\n'))
}

func (e watcher) Spec() sdk.Spec {
	return sdk.Spec{Name: "embedding_watch", Hooks: []sdk.Hook{sdk.ToolExecuteAfter(e), sdk.EmbeddingModelChanged(e)}, Order: 50, Description: "Records embedding model changes and tool calls."}
}

func (w watcher) EmbeddingModelChanged(_ context.Context, _ *sdk.Call, req *exocortexv1.EmbeddingModelChangedRequest) (*exocortexv1.EmbeddingModelChangedResponse, error) {
	w.log(map[string]any{"hook": "embedding_model_changed", "old": req.GetOldModel(), "old_dims": req.GetOldDims(),
		"new": req.GetNewModel(), "new_dims": req.GetNewDims(), "store": req.GetStore()})
	return nil, nil
}

func (w watcher) ToolExecuteAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	w.log(map[string]any{"hook": "tool_execute_after", "tool": req.GetToolCall().GetName(), "result": req.GetResult().GetContent(), "error": req.GetResult().GetError()})
	return nil, nil
}

func main() {
	stores := memorytools.New(config.LoadToolsFromEnv, nil)
	tools := append(stores.Tools(), sdk.Tool{Name: "response", Description: "Ends the monologue with text (test).",
		Run: func(_ context.Context, _ *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
			var a struct{ Text string }
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, err
			}
			return &exocortexv1.ToolResult{Content: a.Text, BreakLoop: true}, nil
		}})
	sdk.Serve(sdk.Plugin{Name: "embedwatch", Version: "test", Close: stores.Close, Files: memorytools.Files(),
		Extensions: []sdk.Extension{watcher{mu: &sync.Mutex{}}}, Tools: tools})
}
