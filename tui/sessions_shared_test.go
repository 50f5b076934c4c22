package tui

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/memory/natsjournal"
	"github.com/exocortex/exocortex/memory/natsjournal/natssession"
	"github.com/exocortex/exocortex/memory/natsjournal/natstest"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/tui/slash"
)

// TestSessionsListsSharedSessions: with the sessions in the shared bucket,
// the terminal's /sessions lists a session another host began (and says
// where they are), and /resume-style opening reads its history.
func TestSessionsListsSharedSessions(t *testing.T) {
	ctx := context.Background()
	srv := natstest.Start(t)
	open := func() *natssession.Store {
		cfg, err := natsjournal.ParseURL(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		cfg.Logger = slog.New(slog.DiscardHandler)
		s, err := natssession.Open(ctx, cfg, filepath.Join(t.TempDir(), "sessions"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	other, mine := open(), open()
	s, err := other.Open(ctx, "from-serve")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, &exocortexv1.Message{Role: "user", Content: "begun elsewhere"}); err != nil {
		t.Fatal(err)
	}
	eng := NewEngine(Config{Sessions: mine})
	if !eng.SessionExists("from-serve") {
		t.Fatal("SessionExists: the shared session is not seen")
	}
	out, err := eng.Exec(ctx, slash.Invocation{Name: "sessions"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Text, "from-serve") || !strings.Contains(out.Text, "bucket EXO_MEMORY_SESSIONS") {
		t.Fatalf("/sessions:\n%s", out.Text)
	}
	got, err := eng.OpenSession(ctx, "from-serve")
	if err != nil {
		t.Fatal(err)
	}
	if h := got.History(); len(h) != 1 || h[0].GetContent() != "begun elsewhere" {
		t.Fatalf("the shared session's history in the terminal: %v", h)
	}
}
