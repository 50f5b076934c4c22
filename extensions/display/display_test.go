package display

import (
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestStreamingAndFinal(t *testing.T) {
	for in, want := range map[string]string{
		"The answer is 4":                     "The answer is 4",
		`{"thoughts": ["look at the fi`:       "… look at the fi",
		"```json\n{\"headline\": \"Reading":   "▸ Reading",
		`{"thou`:                              "…",
		`{"headline":"a \"quoted\" word","x"`: `▸ a "quoted" word`,
	} {
		if got := Streaming(in); got != want {
			t.Errorf("Streaming(%q) = %q, want %q", in, got, want)
		}
	}
	got := Final(`{"thoughts":["one","two"],"headline":"Reading","tool_name":"text_editor","tool_args":{"path":"a.go","action":"read"}}`)
	want := "Reading\n• one\n• two\n→ text_editor(action=\"read\", path=\"a.go\")"
	if got != want {
		t.Errorf("Final = %q, want %q", got, want)
	}
	if got := Final(`{"broken": `); got != `{"broken": ` {
		t.Errorf("invalid JSON display = %q", got)
	}
}

func TestThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "supervision", Extensions: []sdk.Extension{PlainText{}, ClearGenerating{}}})
	c, err := client.ResponseStreamChunk(t.Context(), &exocortexv1.ResponseStreamChunkRequest{Call: sdktest.Call("plain_text_response"), Delta: "ing", Text: `{"headline": "Think`})
	if err != nil || c.GetDisplay() != "▸ Think" {
		t.Fatalf("chunk: %v %v", c, err)
	}
	e, err := client.ResponseStreamEnd(t.Context(), &exocortexv1.ResponseStreamEndRequest{Call: sdktest.Call("clear_generating_content"), Text: `{"headline":"Done","tool_name":"response","tool_args":{"text":"hi"}}`})
	if err != nil || e.GetDisplay() != "Done\n→ response(text=\"hi\")" {
		t.Fatalf("end: %v %v", e, err)
	}
}
