// Command streaming is a test plugin: code_execution and data_analyze as the
// built-in agent-tools plugin serves them, beside an extension that appends every call
// of tool_output_update and tool_execute_after as a JSON line to
// $STREAMING_LOG, and shows the operator the output upper-cased.
package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/exocortex/exocortex/extensions/codeexec"
	"github.com/exocortex/exocortex/extensions/datatools"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sandbox"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/toolsettings"
)

type watcher struct{ mu *sync.Mutex }

func (w watcher) log(fields map[string]any) {
	b, _ := json.Marshal(fields)
	w.mu.Lock()
	defer w.mu.Unlock()
	f, err := os.OpenFile(os.Getenv("STREAMING_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(b, '\n'))
}

func (e watcher) Spec() sdk.Spec {
	return sdk.Spec{Name: "output_watch", Hooks: []sdk.Hook{sdk.ToolExecuteAfter(e), sdk.ToolOutputUpdate(e)}, Order: 50, Description: "Records the partial output of tools and shows it upper-cased."}
}

func (w watcher) ToolOutputUpdate(_ context.Context, _ *sdk.Call, req *exocortexv1.ToolOutputUpdateRequest) (*exocortexv1.ToolOutputUpdateResponse, error) {
	w.log(map[string]any{"hook": "tool_output_update", "tool": req.GetToolCall().GetName(), "delta": req.GetDelta(), "output": req.GetOutput(),
		"at": time.Now().UnixMilli()})
	shown := strings.ToUpper(req.GetOutput())
	return &exocortexv1.ToolOutputUpdateResponse{Display: &shown}, nil
}

func (w watcher) ToolExecuteAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	w.log(map[string]any{"hook": "tool_execute_after", "tool": req.GetToolCall().GetName(), "result": req.GetResult().GetContent(),
		"at": time.Now().UnixMilli()})
	return nil, nil
}

func main() {
	// The shells run through this executable re-executed as the sandbox's
	// launcher or reaper, as the exocortex binary does.
	sandbox.Launch()
	shells := codeexec.New(codeexec.Fixed(toolsettings.CodeExecution{Timeout: toolsettings.Duration(time.Minute), WorkDir: os.Getenv("STREAMING_DIR")}))
	data := datatools.New(func() (toolsettings.Data, error) {
		return toolsettings.Data{Timeout: toolsettings.Duration(time.Minute), BaseDir: os.Getenv("STREAMING_DIR")}, nil
	})
	sdk.Serve(sdk.Plugin{Name: "streaming", Version: "test", Close: shells.Close,
		Extensions: []sdk.Extension{watcher{mu: &sync.Mutex{}}},
		Tools: []sdk.Tool{shells.Tool(), data.Analyze(),
			{Name: "response", Description: "Ends the monologue with text (test).", Run: func(_ context.Context, _ *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
				var a struct{ Text string }
				if err := json.Unmarshal(raw, &a); err != nil {
					return nil, err
				}
				return &exocortexv1.ToolResult{Content: a.Text, BreakLoop: true}, nil
			}},
		}})
}
