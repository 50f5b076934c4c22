package quality

import (
	"strings"
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func plugin() sdk.Plugin {
	return sdk.Plugin{Name: "supervision", Extensions: []sdk.Extension{Finalizer{}, Gate{}}}
}

func TestClean(t *testing.T) {
	in := "\x1b[32mok\x1b[0m   \n\n\n\nprogress 10%\rprogress 100%\ndone"
	if got := Clean(in); got != "ok\n\nprogress 100%\ndone" {
		t.Fatalf("Clean = %q", got)
	}
	long := strings.Repeat("a", MaxContent) + "THE END"
	got := Clean(long)
	if !strings.HasSuffix(got, "THE END") || !strings.Contains(got, "characters left out") || len([]rune(got)) > MaxContent {
		t.Fatalf("long content: %d runes, tail %q", len([]rune(got)), got[len(got)-20:])
	}
}

func TestFinalizerThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	resp, err := client.ToolExecuteAfter(t.Context(), &exocortexv1.ToolExecuteAfterRequest{
		Call: sdktest.Call("response_finalizer"), ToolCall: &exocortexv1.ToolCall{Name: "code_execution"},
		Result: &exocortexv1.ToolResult{Content: "\x1b[1mbold\x1b[0m"},
	})
	if err != nil || resp.GetContent() != "bold" {
		t.Fatalf("%v %v", resp, err)
	}
	resp, err = client.ToolExecuteAfter(t.Context(), &exocortexv1.ToolExecuteAfterRequest{
		Call: sdktest.Call("response_finalizer"), ToolCall: &exocortexv1.ToolCall{Name: "x"},
		Result: &exocortexv1.ToolResult{Content: "clean"},
	})
	if err != nil || resp.Content != nil {
		t.Fatalf("clean content replaced: %v %v", resp, err)
	}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		out, err, verdict string
		failing           []string
	}{
		{"--- FAIL: TestParse (0.00s)\n--- FAIL: TestLex (0.00s)\nFAIL\tgithub.com/x/y\t0.1s\n[exit status 1]", "exit status 1", "tests_failed", []string{"TestParse", "TestLex"}},
		{"ok  \tgithub.com/x/y\t0.1s\nok  \tgithub.com/x/z\t0.1s", "", "tests_passed", nil},
		{"FAILED tests/test_a.py::test_one - assert 1 == 2\n1 failed, 3 passed in 0.1s", "", "tests_failed", []string{"tests/test_a.py::test_one"}},
		{"a.py:3: DeprecationWarning: old api\nresult 4", "", "warnings", nil},
		{"Traceback (most recent call last):\nValueError", "", "errors", nil},
		{"4", "", "clean", nil},
	}
	for _, tt := range tests {
		q := Judge("code_execution", &exocortexv1.ToolResult{Content: tt.out, Error: tt.err})
		if q.GetVerdict() != tt.verdict || strings.Join(q.GetFailingTests(), ",") != strings.Join(tt.failing, ",") {
			t.Errorf("Judge(%q) = %v", tt.out, q)
		}
	}
}

func TestGateThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	resp, err := client.ToolExecuteAfter(t.Context(), &exocortexv1.ToolExecuteAfterRequest{
		Call: sdktest.Call("code_quality_gate"), ToolCall: &exocortexv1.ToolCall{Name: "code_execution"},
		Result: &exocortexv1.ToolResult{Content: "--- FAIL: TestX (0.00s)\nFAIL", Error: "exit status 1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	q, ok := sdktest.Written(t, resp.GetChanges(), qualityKey())
	if !ok || q.GetVerdict() != "tests_failed" || len(resp.GetAnnotations()) != 1 || !strings.Contains(resp.GetAnnotations()[0], "TestX") {
		t.Fatalf("%v %v", q, resp.GetAnnotations())
	}
	// Other tools are not judged.
	resp, err = client.ToolExecuteAfter(t.Context(), &exocortexv1.ToolExecuteAfterRequest{
		Call: sdktest.Call("code_quality_gate"), ToolCall: &exocortexv1.ToolCall{Name: "text_editor"},
		Result: &exocortexv1.ToolResult{Error: "warning"},
	})
	if err != nil || len(resp.GetChanges().GetWrites()) != 0 {
		t.Fatalf("text_editor judged: %v %v", resp, err)
	}
}
