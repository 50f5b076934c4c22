package profile

import (
	"strings"
	"testing"

	"github.com/exocortex/exocortex/extensions/internal/hooktest"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestFold(t *testing.T) {
	p := &exocortexv1.OperatorProfile{}
	Fold(p, "Hi, my name is Dana and I'm a data engineer at Acme. I prefer short answers. Always use metric units.", "analysis")
	Fold(p, "Sorry. I prefer short answers with code.", "coding")
	if p.GetName() != "Dana" || p.GetRole() != "data engineer" || p.GetMessages() != 2 {
		t.Fatalf("profile %v", p)
	}
	if len(p.GetPreferences()) != 2 || p.GetPreferences()[1] != "I prefer short answers with code." {
		t.Fatalf("preferences %q", p.GetPreferences())
	}
}

// TestThroughProtocol sends what the host sends an extension that does not
// declare ReadsHistory: the recent messages in the context, no history.
func TestThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "cognition", Extensions: []sdk.Extension{Extension{}}})
	recent := hooktest.Msgs("user", "Call me Sam. Never use emojis.", "assistant", "{}", "signal:repeat", "I'm Loop")
	call := func(recent []*exocortexv1.Message, state ...*exocortexv1.StateEntry) *exocortexv1.MessageLoopPromptsBeforeResponse {
		t.Helper()
		resp, err := client.MessageLoopPromptsBefore(t.Context(), &exocortexv1.MessageLoopPromptsBeforeRequest{
			Call: hooktest.Call("operator_profile", 1, recent, state...),
		})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := call(recent, sdktest.State(bstKey(), &exocortexv1.BeliefState{MessageId: "m1", PrimaryDomain: "writing"}))
	p, ok := sdktest.Written(t, resp.GetChanges(), key())
	if !ok || p.GetName() != "Sam" || p.GetLastMessageId() != "m1" || p.GetDomainCounts()["writing"] != 1 {
		t.Fatalf("profile %v", p)
	}
	if bs := resp.GetPromptBlocks(); len(bs) != 1 || !strings.Contains(bs[0].GetContent(), "Never use emojis.") {
		t.Fatalf("blocks %v", bs)
	}
	// A later iteration with no new operator message shows the block without
	// folding anything again.
	resp = call(recent, sdktest.State(key(), p))
	if _, ok := sdktest.Written(t, resp.GetChanges(), key()); ok || len(resp.GetPromptBlocks()) != 1 {
		t.Fatalf("second iteration: %v", resp)
	}
	// The next monologue's message is folded, once, after the one already folded.
	next := append(recent, hooktest.Msgs("assistant", "{}", "user", "I prefer short answers.")...)
	next[len(next)-2].Id, next[len(next)-1].Id = "m4", "m5"
	resp = call(next, sdktest.State(key(), p))
	p2, ok := sdktest.Written(t, resp.GetChanges(), key())
	if !ok || p2.GetMessages() != 2 || p2.GetLastMessageId() != "m5" || len(p2.GetPreferences()) != 2 {
		t.Fatalf("next monologue: %v", p2)
	}
	// When the message last folded has left the recent messages, only the latest
	// operator message is folded (the earlier ones were folded when they were new).
	resp = call([]*exocortexv1.Message{next[3], next[4]}, sdktest.State(key(), p))
	p3, ok := sdktest.Written(t, resp.GetChanges(), key())
	if !ok || p3.GetMessages() != 2 || p3.GetLastMessageId() != "m5" {
		t.Fatalf("folded message out of the window: %v", p3)
	}
	// Nothing known: no block.
	if resp := call(hooktest.Msgs("user", "list the files")); len(resp.GetPromptBlocks()) != 0 {
		t.Fatalf("empty profile: %v", resp)
	}
}
