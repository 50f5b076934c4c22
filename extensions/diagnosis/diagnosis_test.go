package diagnosis

import (
	"strings"
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestDiagnose(t *testing.T) {
	tests := []struct {
		name   string
		result *exocortexv1.ToolResult
		class  string
	}{
		{"success", &exocortexv1.ToolResult{Content: "3 files"}, None},
		{"missing file", &exocortexv1.ToolResult{Error: "open /x/y.txt: no such file or directory"}, "not_found"},
		{"traceback in output", &exocortexv1.ToolResult{Content: "Traceback (most recent call last):\n  File \"a.py\"\nModuleNotFoundError: No module named 'pandas'"}, "missing_dependency"},
		{"syntax", &exocortexv1.ToolResult{Error: "exit status 1", Content: "  File \"a.py\", line 3\nSyntaxError: invalid syntax"}, "syntax"},
		{"blocked", &exocortexv1.ToolResult{Error: "blocked by action_boundary: tier 4"}, "blocked"},
		{"timeout", &exocortexv1.ToolResult{Error: "context deadline exceeded"}, "timeout"},
		{"tests", &exocortexv1.ToolResult{Content: "--- FAIL: TestX (0.00s)\nFAIL\nexit status 1"}, "test_failure"},
		{"unknown", &exocortexv1.ToolResult{Error: "something odd"}, Unknown},
	}
	for _, tt := range tests {
		d := Diagnose("code_execution", tt.result)
		if d.GetErrorClass() != tt.class {
			t.Errorf("%s: class %q, want %q (%v)", tt.name, d.GetErrorClass(), tt.class, d)
		}
		if tt.class != None && (len(d.GetCausalChain()) == 0 || len(d.GetSuggestedActions()) == 0 || d.GetConfidence() <= 0) {
			t.Errorf("%s: incomplete diagnosis %v", tt.name, d)
		}
	}
}

func plugin() sdk.Plugin {
	return sdk.Plugin{Name: "supervision", Extensions: []sdk.Extension{Comprehension{}, Advisor{}, Logger{}}}
}

func TestComprehensionThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	gate := &exocortexv1.ActionGate{Active: true, Tier: 4, Action: "rm -rf /srv"}
	// A failure keeps the gate and writes the diagnosis.
	resp, err := client.ToolExecuteAfter(t.Context(), &exocortexv1.ToolExecuteAfterRequest{
		Call:     sdktest.Call("error_comprehension", sdktest.State(gateKey(), gate)),
		ToolCall: &exocortexv1.ToolCall{Name: "text_editor"},
		Result:   &exocortexv1.ToolResult{Error: "open notes.md: permission denied"},
	})
	if err != nil {
		t.Fatal(err)
	}
	d, ok := sdktest.Written(t, resp.GetChanges(), diagKey())
	if !ok || d.GetErrorClass() != "permission" || d.GetToolName() != "text_editor" || !strings.Contains(d.GetCausalChain()[0], "permission denied") {
		t.Fatalf("diagnosis %v", d)
	}
	if sdktest.WasReset(resp.GetChanges(), gateKey()) {
		t.Fatal("a failure cleared the action gate")
	}
	// A success clears the gate.
	resp, err = client.ToolExecuteAfter(t.Context(), &exocortexv1.ToolExecuteAfterRequest{
		Call:     sdktest.Call("error_comprehension", sdktest.State(gateKey(), gate)),
		ToolCall: &exocortexv1.ToolCall{Name: "code_execution"},
		Result:   &exocortexv1.ToolResult{Content: "ok"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := sdktest.Written(t, resp.GetChanges(), diagKey()); d.GetErrorClass() != None {
		t.Fatalf("success diagnosed as %v", d)
	}
	if !sdktest.WasReset(resp.GetChanges(), gateKey()) {
		t.Fatal("a success did not clear the action gate")
	}
}

func TestAdvisorBlocksExactRepeat(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	diag := Diagnose("text_editor", &exocortexv1.ToolResult{Error: "open a.txt: no such file or directory"})
	ledger := &exocortexv1.EvidenceLedger{Entries: []*exocortexv1.Evidence{{ToolName: "text_editor", ArgsJson: `{"op":"read", "path":"a.txt"}`, Ok: false}}}
	call := func(args string, d *exocortexv1.ErrorDiagnosis) *exocortexv1.ToolBlock {
		resp, err := client.ToolExecuteBefore(t.Context(), &exocortexv1.ToolExecuteBeforeRequest{
			Call:     sdktest.Call("tool_fallback_advisor", sdktest.State(diagKey(), d), sdktest.State(ledgerKey(), ledger)),
			ToolCall: &exocortexv1.ToolCall{Name: "text_editor", ArgsJson: args},
		})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetBlock()
	}
	b := call(`{"path":"a.txt","op":"read"}`, diag)
	if b == nil || b.GetNeedsApproval() || !strings.Contains(b.GetReason(), "not_found") || !strings.Contains(b.GetReason(), "list the directory") {
		t.Fatalf("block = %v", b)
	}
	if b := call(`{"path":"b.txt","op":"read"}`, diag); b != nil {
		t.Fatalf("other arguments were blocked: %v", b)
	}
	if b := call(`{"path":"a.txt","op":"read"}`, Diagnose("text_editor", &exocortexv1.ToolResult{Error: "timed out"})); b != nil {
		t.Fatalf("a transient failure blocked the retry: %v", b)
	}
}

func TestLoggerAdvisesFallback(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	fail := &exocortexv1.Evidence{ToolName: "web_search", Ok: false}
	call := func(entries ...*exocortexv1.Evidence) []string {
		resp, err := client.ToolExecuteAfter(t.Context(), &exocortexv1.ToolExecuteAfterRequest{
			Call: sdktest.Call("tool_fallback_logger",
				sdktest.State(ledgerKey(), &exocortexv1.EvidenceLedger{Entries: entries}),
				sdktest.State(bstKey(), &exocortexv1.BeliefState{PrimaryDomain: "research"}),
				sdktest.State(catalogKey(), &exocortexv1.ToolCatalog{Tools: []*exocortexv1.ToolSpec{{Name: "web_search"}, {Name: "library_search"}}})),
			ToolCall: &exocortexv1.ToolCall{Name: "web_search"},
			Result:   &exocortexv1.ToolResult{Error: "connection refused"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetAnnotations()
	}
	if a := call(fail); len(a) != 0 {
		t.Fatalf("advised after one failure: %v", a)
	}
	a := call(fail, fail)
	if len(a) != 1 || !strings.Contains(a[0], "library_search") || strings.Contains(a[0], "memory_load") {
		t.Fatalf("annotation %v: want library_search only (memory_load is not offered)", a)
	}
}
