// Command writer is the writing half of the statepair example: a plugin whose
// extension counts consecutive failures per tool in the built-in failure_tracker key.
//
// README: build with `go build ./examples/statepair/writer` together with
// examples/statepair/reader; the extension "statepair_failure_counter" runs at
// tool_execute_after (order 500), adds one to the tool's count when
// ToolResult.error is set and removes the tool's entry when it succeeds.
package main

import (
	"context"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// failureCounter keeps failure_tracker up to date after every tool call.
type failureCounter struct{}

func tracker() sdk.Key[*exocortexv1.FailureTracker] { return sdk.KeyOf[*exocortexv1.FailureTracker]() }

func (e failureCounter) Spec() sdk.Spec {
	return sdk.Spec{
		Name:        "statepair_failure_counter",
		Hooks:       []sdk.Hook{sdk.ToolExecuteAfter(e)},
		Order:       500,
		Reads:       []sdk.KeyRef{tracker()},
		Writes:      []sdk.KeyRef{tracker()},
		Description: "Counts consecutive failures per tool name in failure_tracker; a success clears the tool's count.",
	}
}

func (failureCounter) ToolExecuteAfter(_ context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	ft, ok := tracker().Get(c)
	if !ok {
		ft = &exocortexv1.FailureTracker{}
	}
	if ft.Failures == nil {
		ft.Failures = map[string]int32{}
	}
	name := req.GetToolCall().GetName()
	if req.GetResult().GetError() != "" {
		ft.Failures[name]++
	} else {
		delete(ft.Failures, name)
	}
	tracker().Set(c, ft)
	c.Logger().Info("failure count", "tool", name, "consecutive_failures", ft.Failures[name])
	return nil, nil
}

func plugin() sdk.Plugin {
	return sdk.Plugin{
		Name:       "statepair_writer",
		Version:    "1.0.0",
		Extensions: []sdk.Extension{failureCounter{}},
	}
}

func main() { sdk.Serve(plugin()) }
