// Command delegator is a test plugin whose delegate tool asks the host to run a
// subordinate agent, and which provides a response tool so monologues can end.
package main

import (
	"context"
	"encoding/json"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

func main() {
	sdk.Serve(sdk.Plugin{Name: "delegator", Version: "test", Tools: []sdk.Tool{
		{
			Name: "delegate", Description: "Hands a task to a subordinate.",
			Run: func(ctx context.Context, c *sdk.Call, args json.RawMessage) (*exocortexv1.ToolResult, error) {
				var a struct{ Task string }
				if err := json.Unmarshal(args, &a); err != nil {
					return nil, err
				}
				h, err := c.Host()
				if err != nil {
					return nil, err
				}
				r, err := h.RunSubordinate(ctx, &exocortexv1.RunSubordinateRequest{Context: c.Context(), Message: a.Task})
				if err != nil {
					return nil, err
				}
				return &exocortexv1.ToolResult{Content: "subordinate answered: " + r.GetResponse()}, nil
			},
		},
		{
			Name: "response", Description: "Ends the task.",
			Run: func(_ context.Context, _ *sdk.Call, args json.RawMessage) (*exocortexv1.ToolResult, error) {
				var a struct{ Text string }
				if err := json.Unmarshal(args, &a); err != nil {
					return nil, err
				}
				return &exocortexv1.ToolResult{Content: a.Text, BreakLoop: true}, nil
			},
		},
	}})
}
