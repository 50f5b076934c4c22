package loop

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/session"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// TestResumeKeepsCompression: a session is compressed twice (a summary of two
// parts), closed, and opened again as `exocortex --resume` does (a new agent
// and host on the session file). The resumed agent has the summary, its parts
// and the verbatim window it had; its first request neither compresses again
// nor re-sends the compressed turns, and repeats the last request before the
// resume as its prefix, message for message. A context record written before
// the summary had parts (the whole summary only) resumes with that summary as
// one part. A session file whose context record is unusable still resumes,
// and compresses again.
func TestResumeKeepsCompression(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var replies []scripted.Reply
	for i := 1; i <= 40; i++ {
		replies = append(replies, bigEcho(i, 700))
	}
	open := func() *session.Session {
		s, err := session.Open(ctx, dir, "resumed")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tools := []plugin{{name: "tools", tools: []string{"echo"}}}

	s1 := open()
	a1, _, srv1 := newAgentScript(t, setup{plugins: tools, opts: Options{MaxIterations: 1, NumCtx: 4096, Session: s1}},
		scripted.Script{Replies: replies})
	// Turns until a compression appends a second part to the summary: the
	// history is then far below its share, so the resumed request has no
	// reason to compress (even counted conservatively, before the resumed
	// agent has the model's counts).
	turns := 0
	for a1.Context().SummaryParts < 2 {
		turns++
		if turns > 35 {
			t.Fatalf("no summary of two parts in 35 turns: %+v", a1.Context())
		}
		runTurn(t, a1, turns, 300)
	}
	before := a1.Context()
	reqs := srv1.Requests()
	lastBefore := reqs[len(reqs)-1].Messages
	if before.Compressions == 0 || before.Summary == "" || before.Compressed == 0 {
		t.Fatalf("nothing compressed before the resume: %+v", before)
	}
	snap, err := a1.contextSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}

	// A copy of the session whose last context record is as written before
	// the summary had parts: the whole summary, the rest as it was. It
	// resumes with that summary as one part, and goes on without compressing.
	oldDir := t.TempDir()
	b, err := os.ReadFile(s1.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(oldDir, "resumed.jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	var old map[string]any
	if err := json.Unmarshal(snap, &old); err != nil {
		t.Fatal(err)
	}
	delete(old, "summaries")
	oldRecord, _ := json.Marshal(old)
	s4, err := session.Open(ctx, oldDir, "resumed")
	if err != nil {
		t.Fatal(err)
	}
	if err := s4.SaveContext(ctx, oldRecord); err != nil {
		t.Fatal(err)
	}
	if err := s4.Close(); err != nil {
		t.Fatal(err)
	}
	s4, err = session.Open(ctx, oldDir, "resumed")
	if err != nil {
		t.Fatal(err)
	}
	defer s4.Close()
	a4, rec4, srv4 := newAgentScript(t, setup{plugins: tools, opts: Options{MaxIterations: 1, NumCtx: 4096, Session: s4}},
		scripted.Script{Replies: replies})
	if r := a4.Context(); r.Summary != before.Summary || r.SummaryParts != 1 || r.Compressed != before.Compressed || r.Compressions != before.Compressions {
		t.Fatalf("resumed from a record without parts: %+v, want the summary of %+v as one part", r, before)
	}
	runTurn(t, a4, turns+1, 300)
	for _, e := range rec4.events {
		if e.Type == EventCompression {
			t.Errorf("resumed from a record without parts, the session compressed again: %+v", e.Compression)
		}
	}
	if m := srv4.Requests()[0].Messages[1]; m.Content != summaryMessage(0, before.Summary).Content {
		t.Errorf("resumed from a record without parts, the second message is %.200q; want the whole summary", m.Content)
	}

	s2 := open()
	defer s2.Close()
	a2, rec2, srv2 := newAgentScript(t, setup{plugins: tools, opts: Options{MaxIterations: 1, NumCtx: 4096, Session: s2}},
		scripted.Script{Replies: replies})
	after := a2.Context()
	if after.Summary != before.Summary || after.SummaryParts != before.SummaryParts || after.Compressions != before.Compressions || after.Compressed != before.Compressed ||
		after.Verbatim != before.Verbatim || !slices.Equal(after.ExpandedTools, before.ExpandedTools) {
		t.Fatalf("resumed context %+v, want %+v", after, before)
	}
	runTurn(t, a2, turns+1, 300)
	for _, e := range rec2.events {
		if e.Type == EventCompression {
			t.Errorf("the resumed session compressed again: %+v", e.Compression)
		}
	}
	first := srv2.Requests()[0].Messages
	if len(first) <= len(lastBefore) {
		t.Fatalf("the resumed request has %d messages, the last before %d", len(first), len(lastBefore))
	}
	for i, m := range lastBefore {
		if first[i].Role != m.Role || first[i].Content != m.Content {
			t.Fatalf("the resumed request differs from the last before the resume at message %d:\n%q\nwant\n%q", i, first[i].Content, m.Content)
		}
	}
	for _, m := range first {
		if strings.Contains(m.Content, "Turn 1. ") && m.Role != "system" {
			t.Errorf("the resumed request re-sends the compressed turn 1 verbatim")
		}
	}

	// An unusable context record: the session resumes (nothing is lost, the
	// history is whole) and compresses again.
	if err := s2.SaveContext(ctx, []byte(`{"verbatim_from": 100000}`)); err != nil {
		t.Fatal(err)
	}
	s2.Close()
	s3 := open()
	defer s3.Close()
	a3, _, _ := newAgentScript(t, setup{plugins: tools, opts: Options{MaxIterations: 1, NumCtx: 4096, Session: s3}},
		scripted.Script{Replies: replies})
	if r := a3.Context(); r.Compressions != 0 || r.Summary != "" || r.Verbatim != len(a3.History()) || len(a3.History()) < 2*(turns+1) {
		t.Errorf("with a bad context record: %d verbatim of %d messages, %d compressions; want the whole history verbatim", r.Verbatim, len(a3.History()), r.Compressions)
	}
	if b, err := os.ReadFile(s3.Path()); err != nil || !strings.Contains(string(b), session.KindContext) {
		t.Errorf("the session file has no %s record (%v)", session.KindContext, err)
	}
}

// TestResumeKeepsOncePerSession: a once-per-session extension that ran before
// the session was closed does not run again when it is resumed (the same
// session), and runs in a new session.
func TestResumeKeepsOncePerSession(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := plugin{name: "p", exts: []*exocortexv1.ExtensionSpec{{Name: "catalog", Hook: exocortexv1.Hook_HOOK_MESSAGE_LOOP_START, Order: 1, OncePerSession: true}}}
	tests := []struct {
		name    string
		session string
		want    int
	}{
		{"first run", "s", 1},
		{"resumed", "s", 0},
		{"another session", "t", 1},
	}
	for _, tt := range tests {
		s, err := session.Open(ctx, dir, tt.session)
		if err != nil {
			t.Fatal(err)
		}
		a, rec, _ := newAgent(t, setup{plugins: []plugin{p}, replies: []scripted.Reply{toolReply("x"), toolReply("y")}, opts: Options{MaxIterations: 2, Session: s}})
		_, _ = a.Monologue(ctx, "go")
		if n := len(rec.hook("catalog")); n != tt.want {
			t.Errorf("%s: the once-per-session extension ran %d times, want %d", tt.name, n, tt.want)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
