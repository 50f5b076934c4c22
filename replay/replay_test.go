package replay

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/loop"
)

func req(system string, blocks []loop.RequestBlock, history ...string) *loop.Request {
	r := &loop.Request{System: system, Blocks: blocks, Messages: []loop.RequestMessage{{Role: "system", Part: loop.PartSystem, Content: system}}}
	for _, h := range history {
		r.Messages = append(r.Messages, loop.RequestMessage{Role: "user", Part: loop.PartHistory, Content: h})
	}
	return r
}

// TestCompare checks each kind of difference, and that equal iterations
// have none.
func TestCompare(t *testing.T) {
	blk := func(ext, title, content string) loop.RequestBlock {
		return loop.RequestBlock{Hook: "message_loop_prompts_after", Extension: ext, Plugin: "p", Title: title, Content: content}
	}
	hook := func(ext string, writes []string, errText string) loop.Event {
		return loop.Event{Type: loop.EventHook, Hook: "message_loop_end", Extension: ext, Writes: writes, Error: errText}
	}
	base := &Iteration{N: 1, Request: req("sys", []loop.RequestBlock{blk("a", "A", "one")}, "hi"),
		Hooks: []loop.Event{hook("a", []string{"k"}, "")}, Calls: []loop.Event{{Tool: "t", Args: json.RawMessage(`{"x": 1}`)}}}
	tests := []struct {
		name string
		got  Iteration
		want []string // kind:what
	}{
		{"same", *base, nil},
		{"block added", Iteration{Request: req("sys", []loop.RequestBlock{blk("a", "A", "one"), blk("b", "B", "two")}, "hi"), Hooks: base.Hooks, Calls: base.Calls}, []string{BlockAdded + ":B"}},
		{"block removed", Iteration{Request: req("sys", nil, "hi"), Hooks: base.Hooks, Calls: base.Calls}, []string{BlockRemoved + ":A"}},
		{"block changed", Iteration{Request: req("sys", []loop.RequestBlock{blk("a", "A", "uno")}, "hi"), Hooks: base.Hooks, Calls: base.Calls}, []string{BlockChanged + ":A"}},
		{"system prompt", Iteration{Request: req("sys2", base.Request.Blocks, "hi"), Hooks: base.Hooks, Calls: base.Calls}, []string{SystemPrompt + ":line 1"}},
		{"history", Iteration{Request: req("sys", base.Request.Blocks, "hello"), Hooks: base.Hooks, Calls: base.Calls}, []string{History + ":message 1 of 1 (recorded 1)"}},
		{"state written", Iteration{Request: base.Request, Hooks: []loop.Event{hook("a", []string{"k", "k2"}, "")}, Calls: base.Calls}, []string{StateWritten + ":k2"}},
		{"signal", Iteration{Request: base.Request, Hooks: base.Hooks, Calls: base.Calls, Signals: []loop.Event{{Signal: "repeat"}}}, []string{SignalFired + ":repeat"}},
		{"tool call", Iteration{Request: base.Request, Hooks: base.Hooks, Calls: []loop.Event{{Tool: "t", Args: json.RawMessage(`{"x":2}`)}}}, []string{ToolCall + ":t", ToolCall + ":t"}},
		{"same call, other spacing", Iteration{Request: base.Request, Hooks: base.Hooks, Calls: []loop.Event{{Tool: "t", Args: json.RawMessage(`{"x":1}`)}}}, nil},
		{"extension error", Iteration{Request: base.Request, Hooks: append([]loop.Event{hook("a", []string{"k"}, "")}, hook("b", nil, "boom")), Calls: base.Calls}, []string{ExtensionError + ":"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, d := range Compare(base, &tt.got) {
				got = append(got, d.Kind+":"+d.What)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("differences %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRecorderRoundTrip records two requests sharing a message and reads
// them back: the shared content is stored once, and a changed blob is
// refused with the file named.
func TestRecorderRoundTrip(t *testing.T) {
	dir := t.TempDir()
	sess := filepath.Join(dir, "s.jsonl")
	r, err := NewRecorder(sess)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	reply := `{"tool_name":"response","tool_args":{"text":"hi"}}`
	events := []loop.Event{
		{Type: loop.EventMonologueStart, Text: "hello", Time: now},
		{Type: loop.EventIteration, Iteration: 1},
		{Type: loop.EventRequest, Iteration: 1, Request: req("sys", nil, "hello")},
		{Type: loop.EventLLMChunk, Iteration: 1, Text: "{"},
		{Type: loop.EventLLMReply, Iteration: 1, Text: reply},
		{Type: loop.EventToolExecuted, Iteration: 1, Tool: "response", Args: json.RawMessage(`{"text":"hi"}`), Result: "hi", BreakLoop: true},
		{Type: loop.EventResponse, Iteration: 1, Text: "hi"},
		{Type: loop.EventMonologueEnd, Iteration: 1, Time: now.Add(time.Second)},
		{Type: loop.EventMonologueStart, Text: "again", Time: now},
		{Type: loop.EventRequest, Iteration: 1, Request: req("sys", nil, "hello", "again")},
		{Type: loop.EventLLMReply, Iteration: 1, Text: reply},
		{Type: loop.EventMonologueEnd, Iteration: 1, Time: now.Add(time.Second)},
	}
	for _, e := range events {
		r.Observe(e)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	blobs, _ := filepath.Glob(filepath.Join(DirFor(sess), BlobsDir, "*", "*"))
	if len(blobs) != 3 { // "sys", "hello", "again"
		t.Errorf("%d blobs, want 3 (each content once): %v", len(blobs), blobs)
	}
	b, _ := os.ReadFile(filepath.Join(DirFor(sess), EventsFile))
	if strings.Contains(string(b), `"llm_chunk"`) || strings.Contains(string(b), `"content":"hello"`) {
		t.Errorf("the events file holds chunks or contents:\n%s", b)
	}
	rec, err := Load(DirFor(sess))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Turns) != 2 || rec.Turns[1].Iterations[0].Request.Messages[2].Content != "again" || !rec.Turns[0].Iterations[0].Responded {
		t.Fatalf("read back %+v", rec.Turns)
	}
	if s := rec.Script(); len(s.Replies) != 2 || s.Replies[0].Content != reply {
		t.Errorf("script %+v", s.Replies)
	}
	if err := os.WriteFile(blobs[0], []byte("tampered"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(DirFor(sess)); err == nil || !strings.Contains(err.Error(), "does not match its hash") {
		t.Errorf("a changed blob: %v", err)
	}
}

// TestLoadErrors checks that what cannot be replayed says why and what to do.
func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	sess := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(sess, []byte(`{"seq":1,"kind":"session.meta","payload":{}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, []byte(`{"type":"model"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.jsonl")
	if err := os.WriteFile(cut, []byte(`{"type":"monologue_start","text":"x"}`+"\n"+`{"type":"request","iteration":1,"request":{"system":"s","messages":[{"role":"user","part":"history","hash":"abcdef0123456789"}]}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		sess:                         "has no recording",
		empty:                        "holds no monologue",
		cut:                          "referenced before its content",
		filepath.Join(dir, "absent"): "give a session name",
	} {
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%s): %v, want %q", filepath.Base(path), err, want)
		}
	}
}
