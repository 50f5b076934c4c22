package failures

import (
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestTrackerAndResetThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "supervision", Extensions: []sdk.Extension{Tracker{}, Reset{}}})
	var ft *exocortexv1.FailureTracker
	state := func() []*exocortexv1.StateEntry {
		if ft == nil {
			return nil
		}
		return []*exocortexv1.StateEntry{sdktest.State(key(), ft)}
	}
	format := func(tool string) {
		t.Helper()
		resp, err := client.ErrorFormat(t.Context(), &exocortexv1.ErrorFormatRequest{Call: sdktest.Call("failure_tracker", state()...), ToolName: tool})
		if err != nil {
			t.Fatal(err)
		}
		ft, _ = sdktest.Written(t, resp.GetChanges(), key())
	}
	format("text_editor")
	format("text_editor")
	format("")
	if ft.GetFailures()["text_editor"] != 2 || ft.GetFailures()[FormatKey] != 1 {
		t.Fatalf("tracker %v", ft)
	}
	// A failing tool result resets nothing; a success clears its tool and the
	// misformat streak.
	after := func(res *exocortexv1.ToolResult) *exocortexv1.ToolExecuteAfterResponse {
		t.Helper()
		resp, err := client.ToolExecuteAfter(t.Context(), &exocortexv1.ToolExecuteAfterRequest{Call: sdktest.Call("reset_failure_counter", state()...),
			ToolCall: &exocortexv1.ToolCall{Name: "text_editor"}, Result: res})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := after(&exocortexv1.ToolResult{Error: "boom"}); len(resp.GetChanges().GetWrites()) != 0 {
		t.Fatalf("a failure changed the tracker: %v", resp)
	}
	resp := after(&exocortexv1.ToolResult{Content: "ok"})
	got, ok := sdktest.Written(t, resp.GetChanges(), key())
	if !ok || len(got.GetFailures()) != 0 {
		t.Fatalf("after success: %v", got)
	}
}
