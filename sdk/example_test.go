package sdk_test

import (
	"context"
	"fmt"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// failureCounter counts consecutive failures per tool in failure_tracker.
type failureCounter struct{}

func (e failureCounter) Spec() sdk.Spec {
	return sdk.Spec{
		Name:   "failure_counter",
		Hooks:  []sdk.Hook{sdk.ToolExecuteAfter(e)},
		Order:  20,
		Reads:  []sdk.KeyRef{tracker()},
		Writes: []sdk.KeyRef{tracker()},
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
	if name := req.GetToolCall().GetName(); req.GetResult().GetError() != "" {
		ft.Failures[name]++
	} else {
		delete(ft.Failures, name)
	}
	tracker().Set(c, ft)
	return nil, nil
}

// An extension served in the same process, called as the host calls it. A plugin's
// main calls sdk.Serve with the same Plugin instead.
func Example() {
	srv, err := sdk.NewServer(sdk.Plugin{Name: "failures", Extensions: []sdk.Extension{failureCounter{}}})
	if err != nil {
		panic(err)
	}
	m, _ := srv.Manifest(context.Background(), &exocortexv1.ManifestRequest{ProtocolVersion: sdk.ProtocolVersion})
	for _, e := range m.GetExtensions() {
		fmt.Println(e.GetName(), sdk.HookName(e.GetHook()), e.GetOrder(), e.GetReads(), e.GetWrites())
	}

	resp, err := srv.ToolExecuteAfter(context.Background(), &exocortexv1.ToolExecuteAfterRequest{
		Call:     &exocortexv1.HookCall{Extension: "failure_counter"},
		ToolCall: &exocortexv1.ToolCall{Name: "shell"},
		Result:   &exocortexv1.ToolResult{Error: "exit status 1"},
	})
	if err != nil {
		panic(err)
	}
	w := resp.GetChanges().GetWrites()[0]
	var ft exocortexv1.FailureTracker
	_ = w.GetValue().UnmarshalTo(&ft)
	fmt.Println(w.GetKey(), ft.GetFailures())
	// Output:
	// failure_counter tool_execute_after 20 [failure_tracker] [failure_tracker]
	// failure_tracker map[shell:1]
}
