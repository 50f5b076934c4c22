package paramgate

import (
	"encoding/json"
	"reflect"
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

const editorSchema = `{"type":"object","properties":{"action":{"type":"string","enum":["read","write","patch"]},"path":{"type":"string"},"line_from":{"type":"integer"},"content":{"type":"string"}},"required":["action","path"]}`

func TestCorrect(t *testing.T) {
	tests := []struct {
		args, schema, want string
		fixes              int
	}{
		{`{"Action":"Write","file":"a.go","line_from":"3","content":"` + "```go\\npackage a\\n```" + `"}`, editorSchema,
			`{"action":"write","content":"package a","line_from":3,"path":"a.go"}`, 5},
		{`{"action":"read","path":"a.go"}`, editorSchema, `{"action":"read","path":"a.go"}`, 0},
		{`{"tags":"a, b","limit":"5","exact":"yes","opts":"{\"x\":1}"}`, `{"properties":{"tags":{"type":"array","items":{"type":"string"}},"limit":{"type":"number"},"exact":{"type":"boolean"},"opts":{"type":"object"}}}`,
			`{"exact":true,"limit":5,"opts":{"x":1},"tags":["a","b"]}`, 4},
		{`{"name": 7}`, `{"properties":{"name":{"type":"string"}}}`, `{"name":"7"}`, 1},
		{`not json`, editorSchema, `not json`, 0},
	}
	for _, tt := range tests {
		got, fixes := Correct(tt.args, tt.schema)
		if len(fixes) != tt.fixes || !sameJSON(got, tt.want) {
			t.Errorf("Correct(%s) = %s %q; want %s with %d fixes", tt.args, got, fixes, tt.want, tt.fixes)
		}
	}
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	return reflect.DeepEqual(x, y)
}

func TestThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "safety", Extensions: []sdk.Extension{Gate{}}})
	cat := &exocortexv1.ToolCatalog{Tools: []*exocortexv1.ToolSpec{{Name: "text_editor", ParametersJsonSchema: editorSchema}}}
	resp, err := client.ToolExecuteBefore(t.Context(), &exocortexv1.ToolExecuteBeforeRequest{
		Call: sdktest.Call("meta_reasoning_gate", sdktest.State(catalogKey(), cat)), ToolCall: &exocortexv1.ToolCall{Name: "text_editor", ArgsJson: `{"action":"READ","file_path":"x.md"}`},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.ArgsJson == nil || !sameJSON(resp.GetArgsJson(), `{"action":"read","path":"x.md"}`) {
		t.Fatalf("args %v", resp.ArgsJson)
	}
	resp, err = client.ToolExecuteBefore(t.Context(), &exocortexv1.ToolExecuteBeforeRequest{
		Call: sdktest.Call("meta_reasoning_gate", sdktest.State(catalogKey(), cat)), ToolCall: &exocortexv1.ToolCall{Name: "other", ArgsJson: `{"X":1}`},
	})
	if err != nil || resp.ArgsJson != nil {
		t.Fatalf("unknown tool rewritten: %v %v", resp, err)
	}
}
