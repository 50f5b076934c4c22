// Command slowplugin is a plugin with slow extensions, for the test of time
// budgets:
//
//	slow_display at response_stream_chunk sleeps SLOW_CHUNK (default 80ms) per call;
//	slow_end at message_loop_end sleeps SLOW_END (default 150ms).
//
// testdata/slowplugin_py/main.py is the same plugin written with the Python SDK.
package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"time"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

func pause(env string, def time.Duration) {
	d, err := time.ParseDuration(os.Getenv(env))
	if err != nil {
		d = def
	}
	time.Sleep(d)
}

type display struct{}

func (e display) Spec() sdk.Spec {
	return sdk.Spec{Name: "slow_display", Hooks: []sdk.Hook{sdk.ResponseStreamChunk(e)}, Order: 10, Description: "Shows the reply in capitals, slowly."}
}

func (display) ResponseStreamChunk(_ context.Context, _ *sdk.Call, req *exocortexv1.ResponseStreamChunkRequest) (*exocortexv1.ResponseStreamChunkResponse, error) {
	pause("SLOW_CHUNK", 80*time.Millisecond)
	shown := strings.ToUpper(req.GetText() + req.GetDelta())
	return &exocortexv1.ResponseStreamChunkResponse{Display: &shown}, nil
}

type end struct{}

func (e end) Spec() sdk.Spec {
	return sdk.Spec{Name: "slow_end", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 10, Description: "Takes its time at the end of each iteration."}
}

func (end) MessageLoopEnd(context.Context, *sdk.Call, *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	pause("SLOW_END", 150*time.Millisecond)
	return nil, nil
}

func main() {
	respond := sdk.Tool{Name: "response", Description: "Ends the monologue with its text.",
		Run: func(context.Context, *sdk.Call, json.RawMessage) (*exocortexv1.ToolResult, error) {
			return &exocortexv1.ToolResult{Content: "done", BreakLoop: true}, nil
		}}
	sdk.Serve(sdk.Plugin{Name: "slow", Version: "1", Extensions: []sdk.Extension{display{}, end{}}, Tools: []sdk.Tool{respond}})
}
