// Command greeter (version 1) is the plugin the hot-reload end-to-end test starts
// a session with. Its extension adds a prompt block naming its version and
// records the version in a state key, so the loop's events show which version
// served each iteration; its tools let the scripted model run several
// iterations and then end the monologue.
package main

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/types/known/wrapperspb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

const version = "v1"

func servedBy() sdk.Key[*wrapperspb.StringValue] {
	return sdk.NewKey[*wrapperspb.StringValue]("greeter_version", exocortexv1.Scope_SCOPE_MONOLOGUE, "The greeter version that served the iteration.")
}

type greeter struct{}

func (e greeter) Spec() sdk.Spec {
	return sdk.Spec{Name: "greeter", Hooks: []sdk.Hook{sdk.MessageLoopPromptsAfter(e)}, Order: 50, InjectsPrompt: true, Writes: []sdk.KeyRef{servedBy()},
		Description: "Adds a GREETER block naming the plugin version."}
}

func (greeter) MessageLoopPromptsAfter(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	servedBy().Set(c, wrapperspb.String(version))
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: []*exocortexv1.PromptBlock{{
		Title: "GREETER", Content: fmt.Sprintf("greetings from %s, iteration %d", version, req.GetIteration()),
	}}}, nil
}

func main() {
	sdk.Serve(sdk.Plugin{
		Name: "greeter", Version: version,
		Extensions: []sdk.Extension{greeter{}},
		Tools: []sdk.Tool{
			{Name: "note", Description: "Notes its arguments.", Run: func(_ context.Context, _ *sdk.Call, args json.RawMessage) (*exocortexv1.ToolResult, error) {
				return &exocortexv1.ToolResult{Content: version + " noted " + string(args)}, nil
			}},
			{Name: "finish", Description: "Ends the monologue.", Run: func(_ context.Context, _ *sdk.Call, _ json.RawMessage) (*exocortexv1.ToolResult, error) {
				return &exocortexv1.ToolResult{Content: "finished by " + version, BreakLoop: true}, nil
			}},
		},
	})
}
