package orchestration

import (
	"strings"
	"testing"

	"github.com/exocortex/exocortex/extensions/internal/hooktest"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestSubtasks(t *testing.T) {
	if got := Subtasks("Please:\n1. read the logs\n2. find the error\n3. write a report\n"); len(got) != 3 || got[2] != "write a report" {
		t.Errorf("list: %q", got)
	}
	if got := Subtasks("Fetch the page, then summarise it and then email it to me."); len(got) != 3 {
		t.Errorf("then-chain: %q", got)
	}
	if got := Subtasks("What time is it?"); got != nil {
		t.Errorf("single: %q", got)
	}
}

func TestGateAndModeThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "cognition", Extensions: []sdk.Extension{Gate{}, Mode{}}})
	msgs := hooktest.Msgs("user", "- collect the logs of web1\n- collect the logs of web2\n- compare the two")
	resp, err := client.MessageLoopStart(t.Context(), &exocortexv1.MessageLoopStartRequest{Call: hooktest.Call("orchestration_gate", 1, msgs), Iteration: 1})
	if err != nil {
		t.Fatal(err)
	}
	o, ok := sdktest.Written(t, resp.GetChanges(), key())
	if !ok || o.GetMode() != Delegate || len(o.GetSubtasks()) != 3 || o.GetMessageId() != "m1" {
		t.Fatalf("decision %v", o)
	}
	// The mode block, with and without call_subordinate on offer.
	block := func(cat *exocortexv1.ToolCatalog) string {
		entries := []*exocortexv1.StateEntry{sdktest.State(key(), o)}
		if cat != nil {
			entries = append(entries, sdktest.State(catalogKey(), cat))
		}
		r, err := client.MessageLoopPromptsAfter(t.Context(), &exocortexv1.MessageLoopPromptsAfterRequest{Call: sdktest.Call("orchestration_mode", entries...)})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.GetPromptBlocks()) != 1 {
			t.Fatalf("blocks %v", r.GetPromptBlocks())
		}
		return r.GetPromptBlocks()[0].GetContent()
	}
	if b := block(&exocortexv1.ToolCatalog{Tools: []*exocortexv1.ToolSpec{{Name: "call_subordinate"}}}); !strings.Contains(b, "call_subordinate") || !strings.Contains(b, "3. compare the two") {
		t.Fatalf("block: %s", b)
	}
	if b := block(nil); strings.Contains(b, "call_subordinate") {
		t.Fatalf("suggested a tool that is not offered: %s", b)
	}
	// A direct task switches to delegate when the supervisor reaches tier 2.
	direct := hooktest.Msgs("user", "why is the disk full?")
	resp, err = client.MessageLoopStart(t.Context(), &exocortexv1.MessageLoopStartRequest{
		Call: hooktest.Call("orchestration_gate", 4, direct, sdktest.State(key(), &exocortexv1.Orchestration{Mode: Direct, MessageId: "m1"}),
			sdktest.State(supKey(), &exocortexv1.SupervisorState{LoopTier: 2})), Iteration: 4})
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := sdktest.Written(t, resp.GetChanges(), key()); o.GetMode() != Delegate || !strings.Contains(o.GetReason(), "tier 2") {
		t.Fatalf("stuck switch: %v", o)
	}
}
