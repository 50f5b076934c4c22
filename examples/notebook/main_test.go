package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/service"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestNotes serves the plugin with a real store behind the memory service, as
// the host serves it (core/host/memory_test.go starts it as a process, with the
// host's checks of its declarations).
func TestNotes(t *testing.T) {
	store, err := memory.Open(t.Context(), filepath.Join(t.TempDir(), "memory"), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	client := sdktest.ServeMemory(t, plugin(), service.NewServer(store, "none"))
	run := func(tool, args string) *exocortexv1.ToolResult {
		t.Helper()
		resp, err := client.ExecuteTool(t.Context(), &exocortexv1.ExecuteToolRequest{
			Call: sdktest.Call(tool), ToolCall: &exocortexv1.ToolCall{Name: tool, ArgsJson: args}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetResult()
	}
	if res := run("note_add", `{"text":"Standup moved to 9:30 on Tuesdays"}`); !strings.HasSuffix(res.GetContent(), " in area notes.") {
		t.Fatalf("note_add: %q, error %q", res.GetContent(), res.GetError())
	}
	if res := run("note_find", `{"query":"when is standup"}`); !strings.Contains(res.GetContent(), "Standup moved to 9:30 on Tuesdays (why: ") {
		t.Errorf("note_find: %q, error %q", res.GetContent(), res.GetError())
	}
	if res := run("note_find", `{"query":"lunch"}`); res.GetContent() != `No note matches "lunch".` {
		t.Errorf("note_find without a match: %q, error %q", res.GetContent(), res.GetError())
	}
	if res := run("note_add", `{"text":" "}`); !strings.Contains(res.GetError(), `"text" is empty`) {
		t.Errorf("an empty note: %q", res.GetError())
	}
}
