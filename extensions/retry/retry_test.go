package retry

import (
	"strings"
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestFault(t *testing.T) {
	for reply, want := range map[string]string{
		"   ":                                   FaultEmpty,
		"I think the answer is 4.":              FaultNoObject,
		`{"tool_name": "x", "tool_args": {"a":`: FaultTruncated,
		`{"tool_name": "x", "tool_args": {}, }`: FaultInvalidJSON,
		`{"thoughts": ["hm"]}`:                  FaultMissingTool,
		`{"tool_name": "x", "tool_args": "a"}`:  FaultBadArgs,
		`{"text": "a } b", "tool": "x"`:         FaultTruncated,
	} {
		if got := Fault(reply); got != want {
			t.Errorf("Fault(%q) = %s, want %s", reply, got, want)
		}
	}
}

func TestThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "supervision", Extensions: []sdk.Extension{Structured{}}})
	resp, err := client.ErrorFormat(t.Context(), &exocortexv1.ErrorFormatRequest{
		Call:  sdktest.Call("structured_retry"),
		Reply: "The file has 12 lines.", Error: "no JSON object: the reply has no '{'", Signal: "misformat",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := resp.GetCorrection()
	for _, want := range []string{`"tool_name":"response"`, `"text":"The file has 12 lines."`, "(Parser: no JSON object"} {
		if !strings.Contains(got, want) {
			t.Errorf("correction lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Attempt") {
		t.Errorf("first failure marked as a repeat attempt: %s", got)
	}
	// The second failure in a row for the same tool is stricter.
	resp, err = client.ErrorFormat(t.Context(), &exocortexv1.ErrorFormatRequest{
		Call:  sdktest.Call("structured_retry", sdktest.State(tracker(), &exocortexv1.FailureTracker{Failures: map[string]int32{"text_editor": 1}})),
		Reply: `{"tool_name": "text_editor", "tool_args": {"path": "a", "content": "x`, ToolName: "text_editor",
	})
	if err != nil {
		t.Fatal(err)
	}
	got = resp.GetCorrection()
	for _, want := range []string{"Attempt 2", "cut off", "no code fence"} {
		if !strings.Contains(got, want) {
			t.Errorf("correction lacks %q:\n%s", want, got)
		}
	}
}
