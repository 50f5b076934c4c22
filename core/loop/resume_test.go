package loop

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/session"
)

// TestResumeKeepsCompression: a session is compressed, closed, and opened
// again as `exocortex --resume` does (a new agent and host on the session
// file). The resumed agent has the summary and the verbatim window it had; its
// first request neither compresses again nor re-sends the compressed turns,
// and repeats the last request before the resume as its prefix, message for
// message. A session file whose context record is unusable still resumes,
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
	a1, rec1, srv1 := newAgentScript(t, setup{plugins: tools, opts: Options{MaxIterations: 1, NumCtx: 4096, Session: s1}},
		scripted.Script{Replies: replies})
	// Turns until one compresses, then one more: the history is far below
	// its share, so the resumed request has no reason to compress.
	turns := 0
	for compressed := false; !compressed; {
		turns++
		if turns > 30 {
			t.Fatal("no compression in 30 turns")
		}
		runTurn(t, a1, turns, 300)
		for _, e := range rec1.events {
			compressed = compressed || e.Type == EventCompression
		}
	}
	turns++
	runTurn(t, a1, turns, 300)
	before := a1.Context()
	reqs := srv1.Requests()
	lastBefore := reqs[len(reqs)-1].Messages
	if before.Compressions == 0 || before.Summary == "" || before.Compressed == 0 {
		t.Fatalf("nothing compressed before the resume: %+v", before)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}

	s2 := open()
	defer s2.Close()
	a2, rec2, srv2 := newAgentScript(t, setup{plugins: tools, opts: Options{MaxIterations: 1, NumCtx: 4096, Session: s2}},
		scripted.Script{Replies: replies})
	after := a2.Context()
	if after.Summary != before.Summary || after.Compressions != before.Compressions || after.Compressed != before.Compressed ||
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
