package htn

import (
	"strings"
	"testing"

	"github.com/exocortex/exocortex/extensions/internal/hooktest"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "cognition", Extensions: []sdk.Extension{Selector{}}})
	bst := &exocortexv1.BeliefState{PrimaryDomain: "debugging"}
	ledger := &exocortexv1.EvidenceLedger{Entries: []*exocortexv1.Evidence{
		{ToolName: "code_execution", Ok: true, Iteration: 1}, // reproduce
		{ToolName: "text_editor", Ok: false, Iteration: 2},   // locate: failed, no progress
		{ToolName: "text_editor", Ok: true, Iteration: 3},    // locate
		{ToolName: "code_execution", Ok: true, Iteration: 4}, // not "fix it"
	}}
	resp, err := client.MessageLoopPromptsBefore(t.Context(), &exocortexv1.MessageLoopPromptsBeforeRequest{
		Call: hooktest.Call("htn_plan_selector", 5, hooktest.Msgs("user", "the build fails since yesterday, please fix it"),
			sdktest.State(bstKey(), bst), sdktest.State(ledgerKey(), ledger)),
	})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := sdktest.Written(t, resp.GetChanges(), key())
	if !ok || p.GetCurrent() != 2 || !p.GetSteps()[1].GetDone() || p.GetSteps()[1].GetDoneIteration() != 3 {
		t.Fatalf("plan %v", p)
	}
	b := resp.GetPromptBlocks()
	if len(b) != 1 || !strings.Contains(b[0].GetContent(), "3. [now] Fix it: change the code") || !strings.Contains(b[0].GetContent(), "1. [done] Reproduce") {
		t.Fatalf("block %v", b)
	}
	// A short question or a domain without a plan gets none.
	for _, tc := range []struct{ text, domain string }{{"fix it", "debugging"}, {"write me a long poem about the sea please", "writing"}} {
		resp, err := client.MessageLoopPromptsBefore(t.Context(), &exocortexv1.MessageLoopPromptsBeforeRequest{
			Call: hooktest.Call("htn_plan_selector", 1, hooktest.Msgs("user", tc.text), sdktest.State(bstKey(), &exocortexv1.BeliefState{PrimaryDomain: tc.domain})),
		})
		if err != nil || len(resp.GetPromptBlocks()) != 0 {
			t.Fatalf("%q: %v %v", tc.text, resp, err)
		}
	}
}
