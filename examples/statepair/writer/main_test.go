package main

import (
	"maps"
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestCountsConsecutiveFailuresAndResetsOnSuccess(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	steps := []struct {
		tool, err string
		want      map[string]int32
	}{
		{"shell", "exit status 1", map[string]int32{"shell": 1}},
		{"search", "", map[string]int32{"shell": 1}},
		{"shell", "exit status 2", map[string]int32{"shell": 2}},
		{"search", "timeout", map[string]int32{"shell": 2, "search": 1}},
		{"shell", "", map[string]int32{"search": 1}},
	}
	var state []*exocortexv1.StateEntry // what the host would hand back
	for i, s := range steps {
		resp, err := client.ToolExecuteAfter(t.Context(), &exocortexv1.ToolExecuteAfterRequest{
			Call:     sdktest.Call("statepair_failure_counter", state...),
			ToolCall: &exocortexv1.ToolCall{Name: s.tool},
			Result:   &exocortexv1.ToolResult{Content: "out", Error: s.err},
		})
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		ft, ok := sdktest.Written(t, resp.GetChanges(), tracker())
		if !ok {
			t.Fatalf("step %d: failure_tracker not written", i)
		}
		if !maps.Equal(ft.GetFailures(), s.want) {
			t.Errorf("step %d (%s, %q): failures %v, want %v", i, s.tool, s.err, ft.GetFailures(), s.want)
		}
		if resp.GetContent() != "" || len(resp.GetAnnotations()) != 0 {
			t.Errorf("step %d: the tool result was changed: %v", i, resp)
		}
		state = []*exocortexv1.StateEntry{sdktest.State(tracker(), ft)}
	}
}
