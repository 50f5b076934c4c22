// Command hello is the smallest complete Exocortex plugin: one extension that adds a
// prompt block and one tool.
//
// README: build with `go build -o ~/.exocortex/plugins/hello ./examples/hello`; the
// host starts it. The extension "hello" runs at message_loop_prompts_after and adds a
// block titled "HELLO" that names the iteration; the tool "hello_time" answers with
// the arguments it got, in a fixed format: `hello_time args=<JSON object, keys
// sorted>`.
package main

import (
	"context"
	"encoding/json"
	"fmt"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// hello adds the HELLO block to every prompt.
type hello struct{}

func (e hello) Spec() sdk.Spec {
	return sdk.Spec{
		Name:          "hello",
		Hooks:         []sdk.Hook{sdk.MessageLoopPromptsAfter(e)},
		Order:         500,
		InjectsPrompt: true,
		Description:   "Adds a HELLO block naming the iteration to every prompt.",
	}
}

func (hello) MessageLoopPromptsAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: []*exocortexv1.PromptBlock{{
		Title:   "HELLO",
		Content: fmt.Sprintf("Hello from the hello plugin, iteration %d.", req.GetIteration()),
	}}}, nil
}

// helloTime formats its arguments: the object re-encoded with sorted keys, so equal
// arguments always give the same text.
func helloTime(_ context.Context, _ *sdk.Call, args json.RawMessage) (*exocortexv1.ToolResult, error) {
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil {
		return nil, fmt.Errorf("hello_time: arguments must be a JSON object: %w", err)
	}
	if obj == nil {
		obj = map[string]any{}
	}
	canonical, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("hello_time: %w", err)
	}
	return &exocortexv1.ToolResult{Content: "hello_time args=" + string(canonical)}, nil
}

func plugin() sdk.Plugin {
	return sdk.Plugin{
		Name:       "hello",
		Version:    "1.0.0",
		Extensions: []sdk.Extension{hello{}},
		Tools: []sdk.Tool{{
			Name:        "hello_time",
			Description: "Answers with the arguments it got, as `hello_time args=<JSON object, keys sorted>`.",
			Parameters:  `{"type":"object","properties":{"name":{"type":"string"}},"additionalProperties":true}`,
			Category:    "demo",
			Returns:     `{"type":"string","description":"hello_time args=<the arguments as JSON>"}`,
			Run:         helloTime,
		}},
	}
}

func main() { sdk.Serve(plugin()) }
