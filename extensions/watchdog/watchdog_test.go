package watchdog

import (
	"strings"
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "supervision", Extensions: []sdk.Extension{Context{}}})
	call := func(tokens, ctx int32) *exocortexv1.MessageLoopPromptsAfterResponse {
		resp, err := client.MessageLoopPromptsAfter(t.Context(), &exocortexv1.MessageLoopPromptsAfterRequest{Call: sdktest.Call("context_watchdog"), NumCtx: ctx, PromptTokens: tokens})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := call(1000, 8192)
	if v, ok := sdktest.Written(t, resp.GetChanges(), fill()); !ok || v.GetWarned() || len(resp.GetPromptBlocks()) != 0 {
		t.Fatalf("low fill: %v", resp)
	}
	resp = call(7000, 8192)
	v, _ := sdktest.Written(t, resp.GetChanges(), fill())
	if !v.GetWarned() || len(resp.GetPromptBlocks()) != 1 || !strings.Contains(resp.GetPromptBlocks()[0].GetContent(), "85% full") {
		t.Fatalf("high fill: %v", resp)
	}
}
