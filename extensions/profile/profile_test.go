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

func TestThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "cognition", Extensions: []sdk.Extension{Extension{}}})
	hist := hooktest.Msgs("user", "Call me Sam. Never use emojis.", "assistant", "{}", "signal:repeat", "I'm Loop")
	resp, err := client.MessageLoopPromptsBefore(t.Context(), &exocortexv1.MessageLoopPromptsBeforeRequest{
		Call:    sdktest.Call("operator_profile", sdktest.State(bstKey(), &exocortexv1.BeliefState{MessageId: "m1", PrimaryDomain: "writing"})),
		History: hist,
	})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := sdktest.Written(t, resp.GetChanges(), key())
	if !ok || p.GetName() != "Sam" || p.GetLastMessageId() != "m1" || p.GetDomainCounts()["writing"] != 1 {
		t.Fatalf("profile %v", p)
	}
	if bs := resp.GetPromptBlocks(); len(bs) != 1 || !strings.Contains(bs[0].GetContent(), "Never use emojis.") {
		t.Fatalf("blocks %v", bs)
	}
	// A later iteration with no new operator message shows the block without
	// folding anything again.
	resp, err = client.MessageLoopPromptsBefore(t.Context(), &exocortexv1.MessageLoopPromptsBeforeRequest{
		Call: sdktest.Call("operator_profile", sdktest.State(key(), p)), History: hist,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sdktest.Written(t, resp.GetChanges(), key()); ok || len(resp.GetPromptBlocks()) != 1 {
		t.Fatalf("second iteration: %v", resp)
	}
	// Nothing known: no block.
	resp, err = client.MessageLoopPromptsBefore(t.Context(), &exocortexv1.MessageLoopPromptsBeforeRequest{
		Call: sdktest.Call("operator_profile"), History: hooktest.Msgs("user", "list the files"),
	})
	if err != nil || len(resp.GetPromptBlocks()) != 0 {
		t.Fatalf("empty profile: %v %v", resp, err)
	}
}
