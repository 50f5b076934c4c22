package evidence

import (
	"strings"
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func plugin() sdk.Plugin {
	return sdk.Plugin{Name: "supervision", Extensions: []sdk.Extension{Recorder{}, Integrity{}}}
}

func TestRecorderThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	resp, err := client.ToolExecuteAfter(t.Context(), &exocortexv1.ToolExecuteAfterRequest{
		Call:     sdktest.Call("evidence_ledger_recorder", sdktest.State(loopKey(), &exocortexv1.LoopActive{Active: true})),
		ToolCall: &exocortexv1.ToolCall{Name: "code_execution", ArgsJson: `{"code":"wc -l main.go"}`},
		Result:   &exocortexv1.ToolResult{Content: "42 main.go"},
	})
	if err != nil {
		t.Fatal(err)
	}
	l, ok := sdktest.Written(t, resp.GetChanges(), LedgerKey())
	if !ok || len(l.GetEntries()) != 1 {
		t.Fatalf("ledger %v", l)
	}
	e := l.GetEntries()[0]
	if !e.GetOk() || !e.GetLoopPeriod() || e.GetToolName() != "code_execution" || !contains(e.GetValues(), "42") || !contains(e.GetValues(), "main.go") {
		t.Fatalf("entry %v", e)
	}
	// The response tool's result is the answer, not evidence.
	resp, err = client.ToolExecuteAfter(t.Context(), &exocortexv1.ToolExecuteAfterRequest{
		Call:     sdktest.Call("evidence_ledger_recorder"),
		ToolCall: &exocortexv1.ToolCall{Name: "response"},
		Result:   &exocortexv1.ToolResult{Content: "done", BreakLoop: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sdktest.Written(t, resp.GetChanges(), LedgerKey()); ok {
		t.Fatal("recorded the response tool")
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func TestCheck(t *testing.T) {
	ledger := &exocortexv1.EvidenceLedger{Entries: []*exocortexv1.Evidence{
		{ToolName: "code_execution", ArgsJson: `{"code":"wc -l main.go"}`, Values: []string{"42", "main.go"}, Excerpt: "42 main.go", Ok: true},
		{ToolName: "code_execution", Values: []string{"17"}, Excerpt: "17", Ok: true, LoopPeriod: true},
	}}
	tests := []struct {
		answer  string
		claims  int
		flagged []string
	}{
		{"main.go has 42 lines.", 1, nil},
		{"main.go has 43 lines.", 1, []string{"43 lines"}},
		{"The config lives in /etc/app.yaml.", 1, []string{"/etc/app.yaml"}},
		{"It might have 99 lines. Does it have 5?", 0, nil},
		{"1. main.go has 42 lines.", 1, nil},
		{"There are 17 open issues.", 1, []string{"weak:17 open issues"}},
		{"You asked about 7781 tickets.", 1, nil}, // the operator said it
		{"I verified it works.", 1, nil},
		// Not facts about the world: list numbering, a step's number, a
		// digit inside a word, a word of the operator's, code.
		{"1. Open the file.\n2. Read it.\n13. Close it.", 0, nil},
		{"Step 3 is the hard one, see section 12.", 0, nil},
		{"Saved TURN2-DONE.", 0, nil},
		{"Run this:\n\n```sh\ncat /etc/app.yaml | head -n 40 lines\n```", 0, nil},
		// Facts about the world: units, counts, versions, paths.
		{"The build took 12 ms and used 3.5 GB.", 1, []string{"12 ms", "3.5 GB"}},
		{"Coverage is 40%.", 1, []string{"40%"}},
		{"It needs Go 1.26.0 and grpc v1.79.", 1, []string{"1.26.0", "v1.79"}},
		{"There are 13 open warnings.", 1, []string{"13 open warnings"}},
	}
	for _, tt := range tests {
		claims, fs := Check(tt.answer, ledger, []string{"What about the 7781 tickets? Save TURN2-DONE."}, nil)
		var got []string
		for _, f := range fs {
			got = append(got, f.Missing...)
			for _, w := range f.Weak {
				got = append(got, "weak:"+w)
			}
		}
		if claims != tt.claims || strings.Join(got, ",") != strings.Join(tt.flagged, ",") {
			t.Errorf("Check(%q) = %d claims, flagged %v; want %d, %v", tt.answer, claims, got, tt.claims, tt.flagged)
		}
	}
	// Verification without any successful tool call; tests claimed passing
	// against a failing verdict.
	if _, fs := Check("I ran the tests and they pass.", nil, nil, nil); len(fs) != 1 || fs[0].Problem == "" {
		t.Errorf("verification without tools: %v", fs)
	}
	if _, fs := Check("All tests pass.", ledger, nil, &exocortexv1.CodeQuality{Verdict: "tests_failed"}); len(fs) != 1 || !strings.Contains(fs[0].Problem, "tests_failed") {
		t.Errorf("contradicted tests claim: %v", fs)
	}
}

func TestIntegrityThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	resp, err := client.MonologueEnd(t.Context(), &exocortexv1.MonologueEndRequest{
		Call:          sdktest.Call("epistemic_integrity", sdktest.State(bstKey(), &exocortexv1.BeliefState{PrimaryDomain: "investigation"})),
		FinalResponse: "README.md has 120 lines and mentions Ollama.",
		History:       []*exocortexv1.Message{{Role: "user", SenderId: "operator", Content: "How long is README.md?"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := resp.GetNotices(); len(n) != 1 || !strings.Contains(n[0], "no tool output shows 120") || strings.Contains(n[0], "readme.md,") {
		t.Fatalf("notices %q", n)
	}
	// A stopped monologue is not checked.
	resp, err = client.MonologueEnd(t.Context(), &exocortexv1.MonologueEndRequest{
		Call: sdktest.Call("epistemic_integrity"), FinalResponse: "Stopped after 25 iterations.", StopReason: "max_iterations",
	})
	if err != nil || len(resp.GetNotices()) != 0 {
		t.Fatalf("stopped monologue: %v %v", resp, err)
	}
}
