package main

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestManifest(t *testing.T) {
	m, err := sdktest.Serve(t, plugin()).Manifest(t.Context(), &exocortexv1.ManifestRequest{ProtocolVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := &exocortexv1.ExtensionSpec{Name: "hello", Hook: exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER, Order: 500,
		InjectsPrompt: true, Description: "Adds a HELLO block naming the iteration to every prompt."}
	if len(m.GetExtensions()) != 1 || !proto.Equal(m.GetExtensions()[0], want) {
		t.Errorf("extensions: %v", m.GetExtensions())
	}
	if len(m.GetTools()) != 1 || m.GetTools()[0].GetName() != "hello_time" || !m.GetTools()[0].GetImplemented() {
		t.Errorf("tools: %v", m.GetTools())
	}
}

func TestHelloBlock(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	for _, it := range []int32{1, 4} {
		resp, err := client.MessageLoopPromptsAfter(t.Context(), &exocortexv1.MessageLoopPromptsAfterRequest{
			Call: sdktest.Call("hello"), Iteration: it})
		if err != nil {
			t.Fatal(err)
		}
		blocks := resp.GetPromptBlocks()
		if len(blocks) != 1 || blocks[0].GetTitle() != "HELLO" || !strings.Contains(blocks[0].GetContent(), fmt.Sprintf("iteration %d.", it)) {
			t.Errorf("iteration %d: %v", it, blocks)
		}
	}
}

func TestHelloTime(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	tests := []struct{ args, content, err string }{
		{`{"name":"Ada","b":[1,2],"a":true}`, `hello_time args={"a":true,"b":[1,2],"name":"Ada"}`, ""},
		{``, `hello_time args={}`, ""},
		{`null`, `hello_time args={}`, ""},
		{`[1]`, "", "arguments must be a JSON object"},
	}
	for _, tt := range tests {
		resp, err := client.ExecuteTool(t.Context(), &exocortexv1.ExecuteToolRequest{
			Call: sdktest.Call("hello_time"), ToolCall: &exocortexv1.ToolCall{Name: "hello_time", ArgsJson: tt.args}})
		if err != nil {
			t.Fatalf("%s: %v", tt.args, err)
		}
		r := resp.GetResult()
		if r.GetContent() != tt.content || !strings.Contains(r.GetError(), tt.err) || (tt.err == "") != (r.GetError() == "") {
			t.Errorf("%s: got content %q error %q", tt.args, r.GetContent(), r.GetError())
		}
	}
}
