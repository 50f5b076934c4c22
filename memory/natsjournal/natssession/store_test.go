package natssession_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/memory/natsjournal"
	"github.com/exocortex/exocortex/memory/natsjournal/natssession"
	"github.com/exocortex/exocortex/memory/natsjournal/natstest"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// openHost is one host's session store on the server (its own home dir).
func openHost(t *testing.T, url string) *natssession.Store {
	t.Helper()
	cfg, err := natsjournal.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	s, err := natssession.Open(context.Background(), cfg, filepath.Join(t.TempDir(), "sessions"))
	if err != nil {
		t.Fatalf("natssession.Open(%s): %v", url, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func contents(ms []*exocortexv1.Message) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.GetContent())
	}
	return out
}

func say(t *testing.T, s *session.Session, texts ...string) {
	t.Helper()
	for _, c := range texts {
		if err := s.Append(context.Background(), &exocortexv1.Message{Role: "user", Content: c}); err != nil {
			t.Fatalf("appending %q to %s: %v", c, s.Name(), err)
		}
	}
}

func names(t *testing.T, s session.Store) []string {
	t.Helper()
	list, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, in := range list {
		out = append(out, in.Name)
	}
	return out
}

// TestSessionContinuesOnAnotherHost: a session begun on host a is opened on
// host b with its history, state, context and id; b's turn is seen by a's
// open copy on Refresh; both hosts list it.
func TestSessionContinuesOnAnotherHost(t *testing.T) {
	ctx := context.Background()
	srv := natstest.Start(t)
	a, b := openHost(t, srv.URL()), openHost(t, srv.URL())

	sa, err := a.Open(ctx, "ops.v1")
	if err != nil {
		t.Fatal(err)
	}
	say(t, sa, "hello", "the deploy is blue")
	if err := sa.SaveState(ctx, []byte(`{"k":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := sa.SaveContext(ctx, []byte(`{"verbatim_from":1}`)); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.Exists(ctx, "ops.v1"); err != nil || !ok {
		t.Fatalf("b.Exists(ops.v1) = %v, %v", ok, err)
	}
	sb, err := b.Open(ctx, "ops.v1")
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(sb.History()); !slices.Equal(got, []string{"hello", "the deploy is blue"}) {
		t.Fatalf("b's history: %q", got)
	}
	if sb.ID() != sa.ID() || string(sb.State()) != `{"k":1}` || string(sb.Context()) != `{"verbatim_from":1}` {
		t.Fatalf("b's copy: id %s (a %s), state %s, context %s", sb.ID(), sa.ID(), sb.State(), sb.Context())
	}
	say(t, sb, "what colour is the deploy?")
	changed, err := sa.Refresh(ctx)
	if err != nil || !changed {
		t.Fatalf("a.Refresh = %v, %v; want the record b wrote", changed, err)
	}
	if got := contents(sa.History()); len(got) != 3 || got[2] != "what colour is the deploy?" {
		t.Fatalf("a's history after refresh: %q", got)
	}
	if changed, err := sa.Refresh(ctx); err != nil || changed {
		t.Fatalf("a second Refresh = %v, %v; want nothing new", changed, err)
	}
	for _, s := range []session.Store{a, b} {
		if got := names(t, s); !slices.Equal(got, []string{"ops.v1"}) {
			t.Fatalf("%s lists %q", s.Location(), got)
		}
	}
	if last, _ := b.Last(ctx); last != "ops.v1" {
		t.Fatalf("b's last session: %q", last)
	}
}

// TestConcurrentWritersConflict: two hosts with one session open both append
// after the same record; the second is refused with ErrConflict (nothing of
// the first is overwritten), and after a refresh its append lands after the
// first's. Every message is in the session once, in order.
func TestConcurrentWritersConflict(t *testing.T) {
	ctx := context.Background()
	srv := natstest.Start(t)
	a, b := openHost(t, srv.URL()), openHost(t, srv.URL())
	sa, err := a.Open(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	say(t, sa, "one")
	sb, err := b.Open(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	say(t, sa, "two from a")
	err = sb.Append(ctx, &exocortexv1.Message{Role: "user", Content: "two from b"})
	if !errors.Is(err, session.ErrConflict) {
		t.Fatalf("b's stale append: %v; want session.ErrConflict", err)
	}
	if got := contents(sb.History()); !slices.Equal(got, []string{"one"}) {
		t.Fatalf("a refused append changed b's history: %q", got)
	}
	if changed, err := sb.Refresh(ctx); err != nil || !changed {
		t.Fatalf("b.Refresh = %v, %v", changed, err)
	}
	say(t, sb, "three from b")
	fresh, err := openHost(t, srv.URL()).Open(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(fresh.History()); !slices.Equal(got, []string{"one", "two from a", "three from b"}) {
		t.Fatalf("the session as a third host reads it: %q", got)
	}
}

// TestRenameAndTrash: a rename keeps the history under the new name (and is
// refused onto a name in use); a trashed session leaves the list.
func TestRenameAndTrash(t *testing.T) {
	ctx := context.Background()
	srv := natstest.Start(t)
	a, b := openHost(t, srv.URL()), openHost(t, srv.URL())
	for _, n := range []string{"first", "taken"} {
		s, err := a.Open(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		say(t, s, "in "+n)
	}
	if err := a.Rename(ctx, "first", "taken"); !errors.Is(err, session.ErrConflict) {
		t.Fatalf("rename onto a taken name: %v; want ErrConflict", err)
	}
	if err := a.Rename(ctx, "first", "second"); err != nil {
		t.Fatal(err)
	}
	s, err := b.Open(ctx, "second")
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(s.History()); !slices.Equal(got, []string{"in first"}) {
		t.Fatalf("renamed session's history on b: %q", got)
	}
	if ok, _ := b.Exists(ctx, "first"); ok {
		t.Fatal("the old name still exists after the rename")
	}
	if err := b.Trash(ctx, "taken", session.TrashStamp(time.Now())); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Refresh(ctx); err != nil {
		t.Fatalf("refreshing second: %v", err)
	}
	if err := a.Rename(ctx, "second", "third"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Refresh(ctx); !errors.Is(err, session.ErrRemoved) {
		t.Fatalf("b's copy of a session a renamed: Refresh = %v; want ErrRemoved", err)
	}
	if got := names(t, a); !slices.Equal(got, []string{"third"}) {
		t.Fatalf("after rename and trash a lists %q", got)
	}
}
