package orientation

import (
	"strings"
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "cognition", Extensions: []sdk.Extension{Extension{}}})
	call := func(entries ...*exocortexv1.StateEntry) string {
		hc := sdktest.Call("situational_orientation", entries...)
		hc.Context.Iteration = 1
		resp, err := client.MessageLoopPromptsAfter(t.Context(), &exocortexv1.MessageLoopPromptsAfterRequest{Call: hc})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetPromptBlocks()) == 0 {
			return ""
		}
		return resp.GetPromptBlocks()[0].GetContent()
	}
	if got := call(sdktest.State(diagKey(), &exocortexv1.ErrorDiagnosis{ErrorClass: "none"}), sdktest.State(bstKey(), &exocortexv1.BeliefState{CompoundSig: "coding"})); got != "" {
		t.Fatalf("nothing to act on, yet: %s", got)
	}
	got := call(
		sdktest.State(diagKey(), &exocortexv1.ErrorDiagnosis{ErrorClass: "not_found", ToolName: "text_editor", Confidence: 0.85,
			CausalChain: []string{"text_editor failed: a.txt does not exist"}, SuggestedActions: []string{"list the directory"}, AntiActions: []string{"retrying the same path"}}),
		sdktest.State(qualityKey(), &exocortexv1.CodeQuality{Verdict: "tests_failed", FailingTests: []string{"TestA"}}),
		sdktest.State(bstKey(), &exocortexv1.BeliefState{CompoundSig: "debugging+coding"}),
	)
	w := call(sdktest.State(writeLogKey(), &exocortexv1.WriteLog{Writes: []*exocortexv1.WriteRecord{{Path: "/p/a.json", Iteration: 0, Validated: true, Problem: "truncated: the JSON ends early"}}}))
	if !strings.Contains(w, "Your write to /p/a.json has a problem: truncated") {
		t.Errorf("write problem not shown: %q", w)
	}
	for _, want := range []string{"text_editor call failed: not_found (confidence 0.85)", "Do: list the directory.", "Avoid: retrying the same path.", "Failing tests: TestA", "debugging+coding"} {
		if !strings.Contains(got, want) {
			t.Errorf("block lacks %q:\n%s", want, got)
		}
	}
}
