// Command replayrefuse is the replay test's guard: at tool_execute_before it
// refuses every hello_time call whose name argument is "refuse-me", which
// makes a replayed session take another path at that call.
package main

import (
	"context"
	"encoding/json"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type refuse struct{}

func (e refuse) Spec() sdk.Spec {
	return sdk.Spec{Name: "replay_refuse", Hooks: []sdk.Hook{sdk.ToolExecuteBefore(e)}, Order: 40, Description: `Refuses hello_time calls named "refuse-me".`}
}

func (refuse) ToolExecuteBefore(_ context.Context, _ *sdk.Call, req *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error) {
	var args struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal([]byte(req.GetToolCall().GetArgsJson()), &args)
	if req.GetToolCall().GetName() != "hello_time" || args.Name != "refuse-me" {
		return nil, nil
	}
	return &exocortexv1.ToolExecuteBeforeResponse{Block: &exocortexv1.ToolBlock{Reason: "replay_refuse does not let this call through"}}, nil
}

func main() {
	sdk.Serve(sdk.Plugin{Name: "replayrefuse", Version: "1.0.0", Extensions: []sdk.Extension{refuse{}}})
}
