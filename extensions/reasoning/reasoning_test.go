package reasoning

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/extensions/internal/stagelog"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestThroughProtocol(t *testing.T) {
	home := t.TempDir()
	homeFn := func() (string, error) { return home, nil }
	staged := filepath.Join(home, stagelog.StagingFile)
	// An earlier session left a note and an episode.
	if _, err := stagelog.Append(context.Background(), staged, []stagelog.Entry{
		{Kind: "note", Session: "old", Payload: map[string]string{"title": "migration", "text": "invoices still on the old schema"}},
		{Kind: stagelog.KindMemorize, Session: "old", Payload: map[string]string{"user": "count the files", "response": "there are 3"}},
		{Kind: "note", Session: "sdktest-session", Payload: map[string]string{"text": "this session's own note"}},
	}, nil); err != nil {
		t.Fatal(err)
	}
	client := sdktest.Serve(t, sdk.Plugin{Name: "memory-tools", Extensions: []sdk.Extension{SessionInit{Home: homeFn}, State{}, Update{Home: homeFn}}})
	resp, err := client.MessageLoopPromptsBefore(t.Context(), &exocortexv1.MessageLoopPromptsBeforeRequest{Call: sdktest.Call("session_init")})
	if err != nil {
		t.Fatal(err)
	}
	bs := resp.GetPromptBlocks()
	if len(bs) != 1 || !strings.Contains(bs[0].GetContent(), "migration: invoices") || !strings.Contains(bs[0].GetContent(), "asked: count the files") || strings.Contains(bs[0].GetContent(), "own note") {
		t.Fatalf("session start %v", bs)
	}
	if strings.Index(bs[0].GetContent(), "[task") > strings.Index(bs[0].GetContent(), "[note") {
		t.Fatalf("not newest first: %s", bs[0].GetContent())
	}

	// A tool call produces artifacts; they are registered and staged once.
	var rs *exocortexv1.ReasoningState
	end := func(tc *exocortexv1.ToolCall, res *exocortexv1.ToolResult) {
		t.Helper()
		var entries []*exocortexv1.StateEntry
		if rs != nil {
			entries = append(entries, sdktest.State(key(), rs))
		}
		r, err := client.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{Call: sdktest.Call("reasoning_state_update", entries...), Iteration: 2, ToolCall: tc, ToolResult: res})
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := sdktest.Written(t, r.GetChanges(), key()); ok {
			rs = v
		}
	}
	build := &exocortexv1.ToolCall{Name: "code_execution", ArgsJson: `{"runtime":"terminal","code":"go build -o bin/app . && echo done > status.txt"}`}
	end(build, &exocortexv1.ToolResult{Content: "ok"})
	end(build, &exocortexv1.ToolResult{Content: "ok"})
	end(&exocortexv1.ToolCall{Name: "text_editor", ArgsJson: `{"action":"write","path":"notes.md","content":"x"}`}, &exocortexv1.ToolResult{Error: "permission denied"})
	if len(rs.GetArtifacts()) != 2 || rs.GetArtifacts()[0].GetTouches() != 2 {
		t.Fatalf("registry %v", rs)
	}
	n := 0
	_ = stagelog.Read(context.Background(), staged, 0, func(r stagelog.Record) error {
		if r.Kind == stagelog.KindArtifact {
			n++
		}
		return nil
	})
	if n != 2 {
		t.Fatalf("%d artifact records staged, want 2", n)
	}
	resp, err = client.MessageLoopPromptsBefore(t.Context(), &exocortexv1.MessageLoopPromptsBeforeRequest{Call: sdktest.Call("reasoning_state", sdktest.State(key(), rs))})
	if err != nil {
		t.Fatal(err)
	}
	if bs := resp.GetPromptBlocks(); len(bs) != 1 || !strings.Contains(bs[0].GetContent(), "- bin/app (written by code_execution, 2 times)") {
		t.Fatalf("artifacts block %v", bs)
	}
}
