package belief

import (
	"testing"

	"github.com/exocortex/exocortex/extensions/internal/hooktest"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		text, sig, primary string
	}{
		{"The build fails with a panic in the parser, please fix it", "debugging", "debugging"},
		{"Refactor the parser code and fix the failing test", "coding+debugging", "coding"},
		{"Compare the benchmark results in results.csv and plot the trend", "analysis", "analysis"},
		{"hello there", "conversation", "conversation"},
		{"Tell me about the weather", General, General},
		{"Investigate why the deploy to the server failed", "investigation+operations", "investigation"},
	}
	for _, tt := range tests {
		bs := Classify(tt.text)
		if bs.GetCompoundSig() != tt.sig || bs.GetPrimaryDomain() != tt.primary {
			t.Errorf("Classify(%q) = %s / %s (scores %v), want %s / %s", tt.text, bs.GetCompoundSig(), bs.GetPrimaryDomain(), Scores(tt.text), tt.sig, tt.primary)
		}
	}
}

func TestTrackerThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "cognition", Extensions: []sdk.Extension{Tracker{}}})
	k := key()
	call := func(state *exocortexv1.BeliefState, msgs []*exocortexv1.Message) (*exocortexv1.BeliefState, bool) {
		var entries []*exocortexv1.StateEntry
		if state != nil {
			entries = append(entries, sdktest.State(k, state))
		}
		resp, err := client.MessageLoopStart(t.Context(), &exocortexv1.MessageLoopStartRequest{
			Call: hooktest.Call("belief_state_tracker", 1, msgs, entries...), Iteration: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		return sdktest.Written(t, resp.GetChanges(), k)
	}
	first, ok := call(nil, hooktest.Msgs("user", "the tests fail with a traceback"))
	if !ok || first.GetPrimaryDomain() != "debugging" || first.GetUserMsgCount() != 1 || first.GetCompoundTurns() != 1 || first.GetMessageId() != "m1" {
		t.Fatalf("first turn: %v", first)
	}
	// The same message again (a later iteration): no change.
	if _, ok := call(first, hooktest.Msgs("user", "the tests fail with a traceback")); ok {
		t.Fatal("a later iteration of the same message reclassified it")
	}
	// A new message of the same signature: momentum grows.
	msgs := hooktest.Msgs("user", "the tests fail with a traceback", "assistant", "{}", "user", "the tests still fail with an error")
	second, ok := call(first, msgs)
	if !ok || second.GetCompoundTurns() != 2 || second.GetUserMsgCount() != 2 || second.GetMessageId() != "m3" {
		t.Fatalf("second turn: %v", second)
	}
	// Core messages (signals) are not the operator's.
	if _, ok := call(nil, hooktest.Msgs("signal:repeat", "You repeated yourself")); ok {
		t.Fatal("classified a signal message")
	}
}
