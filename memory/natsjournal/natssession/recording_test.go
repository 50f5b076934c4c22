package natssession_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/memory/natsjournal/natstest"
	"github.com/exocortex/exocortex/replay"
)

// recordTurn records one turn of s (its request naming every user text so
// far) through a recorder mirrored to the session's backend, as serve does.
func recordTurn(t *testing.T, s *session.Session, r *replay.Recorder, user string, history []string) {
	t.Helper()
	req := &loop.Request{System: "you are a test"}
	for _, h := range append(history, user) {
		req.Messages = append(req.Messages, loop.RequestMessage{Role: "user", Part: loop.PartHistory, Content: h})
	}
	now := time.Now()
	for _, e := range []loop.Event{
		{Type: loop.EventMonologueStart, Time: now, Text: user},
		{Type: loop.EventRequest, Time: now, Iteration: 1, Request: req},
		{Type: loop.EventLLMReply, Time: now, Iteration: 1, Text: "answer to " + user},
		{Type: loop.EventMonologueEnd, Time: now},
	} {
		r.Observe(e)
	}
}

func recorder(t *testing.T, dir string, s *session.Session) *replay.Recorder {
	t.Helper()
	r, err := replay.NewRecorder(filepath.Join(dir, s.Name()+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := s.Backend().(replay.Mirror)
	if !ok {
		t.Fatalf("a shared session's backend %T is no replay.Mirror", s.Backend())
	}
	r.MirrorTo(m)
	t.Cleanup(func() { r.Close() })
	return r
}

// TestSharedRecording: two hosts record turns of one session in turn (a's
// recorder behind b's lines: it moves after them); a third host's copy,
// brought up with replay.Sync, loads as every turn in order with each
// request's contents; a second Sync fetches only the new turn.
func TestSharedRecording(t *testing.T) {
	ctx := context.Background()
	srv := natstest.Start(t)
	a, b, c := openHost(t, srv.URL()), openHost(t, srv.URL()), openHost(t, srv.URL())
	sa, err := a.Open(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Open(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	ra, rb := recorder(t, t.TempDir(), sa), recorder(t, t.TempDir(), sb)
	recordTurn(t, sa, ra, "one", nil)
	recordTurn(t, sb, rb, "two", []string{"one"})
	recordTurn(t, sa, ra, "three", []string{"one", "two"})

	dir := filepath.Join(t.TempDir(), "ops.replay")
	if err := replay.Sync(ctx, c, "ops", dir); err != nil {
		t.Fatal(err)
	}
	rec, err := replay.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"one", "two", "three"}
	if len(rec.Turns) != len(want) {
		t.Fatalf("the shared recording has %d turns, want %d", len(rec.Turns), len(want))
	}
	for i, tr := range rec.Turns {
		req := tr.Iterations[0].Request
		if tr.User != want[i] || !tr.Ended || len(req.Messages) != i+1 || req.Messages[i].Content != want[i] || *tr.Iterations[0].Reply != "answer to "+want[i] {
			t.Fatalf("turn %d: user %q, ended %v, request %+v", i+1, tr.User, tr.Ended, req.Messages)
		}
	}
	if err := replay.Sync(ctx, c, "nobody", filepath.Join(t.TempDir(), "x.replay")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("syncing a session without a recording: %v; want fs.ErrNotExist", err)
	}
	recordTurn(t, sb, rb, "four", want)
	if err := replay.Sync(ctx, c, "ops", dir); err != nil {
		t.Fatal(err)
	}
	if rec, err := replay.Load(dir); err != nil || len(rec.Turns) != 4 || rec.Turns[3].User != "four" {
		t.Fatalf("after a second sync: %v turns, %v", len(rec.Turns), err)
	}
}
