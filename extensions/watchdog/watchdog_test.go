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

// undeclared is the watchdog without its ReadsPrompt declaration.
type undeclared struct{ Context }

func (u undeclared) Spec() sdk.Spec {
	s := u.Context.Spec()
	s.ReadsPrompt = false
	return s
}

// TestReadsThePromptSoFar: the host sends prompt_tokens only to extensions
// that declare ReadsPrompt, and a batch shared with one that does not clears it
// for that one. The watchdog declares it, so it measures the fill in a batch
// too; without the declaration it would see an empty prompt and never warn.
func TestReadsThePromptSoFar(t *testing.T) {
	batch := func(ext sdk.Extension) (*exocortexv1.MessageLoopPromptsAfterResponse, *exocortexv1.ContextFill) {
		t.Helper()
		client := sdktest.Serve(t, sdk.Plugin{Name: "supervision", Extensions: []sdk.Extension{ext}})
		resp, err := client.RunBatch(t.Context(), &exocortexv1.BatchRequest{
			Request: &exocortexv1.BatchRequest_MessageLoopPromptsAfter{MessageLoopPromptsAfter: &exocortexv1.MessageLoopPromptsAfterRequest{
				Iteration: 2, NumCtx: 8192, PromptTokens: 7000,
				Extras: []*exocortexv1.PromptBlock{{Title: "MEMORY RECALL", Content: "a block an earlier extension added"}},
			}},
			Calls: []*exocortexv1.HookCall{sdktest.Call("context_watchdog")},
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(resp.GetResults()); n != 1 || resp.GetResults()[0].GetError() != "" {
			t.Fatalf("batch results: %v", resp.GetResults())
		}
		r := resp.GetResults()[0].GetMessageLoopPromptsAfter()
		v, ok := sdktest.Written(t, r.GetChanges(), fill())
		if !ok {
			t.Fatalf("context_fill not written: %v", r)
		}
		return r, v
	}

	r, v := batch(Context{})
	if v.GetPromptTokens() != 7000 || !v.GetWarned() || len(r.GetPromptBlocks()) != 1 || !strings.Contains(r.GetPromptBlocks()[0].GetContent(), "85% full") {
		t.Fatalf("declared: fill %v, blocks %v; want 7000 tokens measured and a warning", v, r.GetPromptBlocks())
	}

	r, v = batch(undeclared{})
	if v.GetPromptTokens() != 0 || v.GetWarned() || len(r.GetPromptBlocks()) != 0 {
		t.Fatalf("undeclared: fill %v, blocks %v; want the prompt so far withheld (0 tokens, no warning)", v, r.GetPromptBlocks())
	}
}
