package tui

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/memory/natsjournal"
	"github.com/exocortex/exocortex/memory/natsjournal/natssession"
	"github.com/exocortex/exocortex/memory/natsjournal/natstest"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// sharedStore is one host's sessions in the bucket of the server at url.
func sharedStore(t *testing.T, url string) *natssession.Store {
	t.Helper()
	cfg, err := natsjournal.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	s, err := natssession.Open(context.Background(), cfg, filepath.Join(t.TempDir(), "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestTurnStartsFromSharedCopy drives the terminal (the Bubble Tea program,
// the real agent loop and gate plugin, a scripted model) on a session in the
// shared bucket while another host appends to it:
//   - a turn written elsewhere between two of the terminal's turns is in the
//     next turn's request (the model checks it), and the terminal says so;
//   - a turn written elsewhere while the terminal's turn runs makes that
//     turn's save a conflict, reported as such; nothing of the other host's
//     turn is overwritten and the terminal's next turn starts from the
//     fresh copy, with it.
func TestTurnStartsFromSharedCopy(t *testing.T) {
	ctx := context.Background()
	srv := natstest.Start(t)
	mine, other := sharedStore(t, srv.URL()), sharedStore(t, srv.URL())
	slow := answer("third answer")
	slow.ChunkSize, slow.Delay = 4, 40*time.Millisecond
	e := newEnv(t)
	eng, model := e.engine(t, "shared",
		answer("first answer"),
		func() scripted.Reply {
			r := answer("second answer")
			r.ExpectInRequest = "the deploy is green now"
			return r
		}(),
		slow,
		func() scripted.Reply {
			r := answer("fourth answer")
			r.ExpectInRequest = "rollback started on serve"
			return r
		}(),
	)
	eng.cfg.Sessions = mine
	u := start(t, eng)

	u.submit("hello from the terminal")
	u.waitPrinted("first answer")
	u.idle()

	// Another host (a serve replica) continues the session in between.
	elsewhere := func(text string) {
		t.Helper()
		s, err := other.Open(ctx, "shared")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Append(ctx, &exocortexv1.Message{Role: "user", Content: text}); err != nil {
			t.Fatal(err)
		}
	}
	elsewhere("note from serve: the deploy is green now")
	u.submit("what did serve say?")
	u.waitPrinted("second answer", "1 message another host wrote to session shared")
	u.idle()

	// Another host writes while the terminal's turn streams its reply.
	u.submit("and now?")
	deadlineAt := time.Now().Add(deadline)
	for len(model.Requests()) < 3 {
		if time.Now().After(deadlineAt) {
			t.Fatal("the third turn's request never reached the model")
		}
		time.Sleep(5 * time.Millisecond)
	}
	elsewhere("rollback started on serve")
	u.waitPrinted("another host wrote to session shared while this turn ran")
	u.idle()
	u.submit("status?")
	u.waitPrinted("fourth answer")
	u.idle()
	if f := model.Failures(); len(f) > 0 {
		t.Fatalf("the model was not sent what another host wrote: %v", f)
	}

	// The session as a third host reads it: every message once, in order,
	// the other host's two among them.
	s, err := sharedStore(t, srv.URL()).Open(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, m := range s.History() {
		if m.GetRole() == "user" {
			users = append(users, m.GetContent())
		}
	}
	want := []string{"hello from the terminal", "note from serve: the deploy is green now", "what did serve say?", "and now?", "rollback started on serve", "status?"}
	if strings.Join(users, "|") != strings.Join(want, "|") {
		t.Fatalf("the shared session's user messages:\n%q\nwant\n%q", users, want)
	}
}
