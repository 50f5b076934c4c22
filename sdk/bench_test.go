package sdk_test

import (
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// benchRequest is a tool_execute_after call carrying failure_tracker, answered with
// a write: the SDK's whole path (lookup, decode, encode, changes).
func benchRequest() *exocortexv1.ToolExecuteAfterRequest {
	return &exocortexv1.ToolExecuteAfterRequest{
		Call: sdktest.Call("failure_counter", sdktest.State(tracker(),
			&exocortexv1.FailureTracker{Failures: map[string]int32{"shell": 1, "search": 2}})),
		ToolCall: &exocortexv1.ToolCall{Name: "shell", ArgsJson: `{"command":"ls"}`},
		Result:   &exocortexv1.ToolResult{Content: "a\nb\n", Error: "exit status 1"},
	}
}

func benchPlugin() sdk.Plugin {
	return sdk.Plugin{Name: "bench", Extensions: []sdk.Extension{failureCounter{}}}
}

// BenchmarkHookInProcess calls the service returned by NewServer directly.
func BenchmarkHookInProcess(b *testing.B) {
	srv, err := sdk.NewServer(benchPlugin())
	if err != nil {
		b.Fatal(err)
	}
	req := benchRequest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := srv.ToolExecuteAfter(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHookOverGRPC makes the same call over go-plugin's gRPC connection on a
// Unix socket, in one process (no process switch).
func BenchmarkHookOverGRPC(b *testing.B) {
	client := sdktest.Serve(b, benchPlugin())
	req := benchRequest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := client.ToolExecuteAfter(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}
