package natssession_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/memory/natsjournal/natstest"
)

// homeWithSessions writes session files the way a terminal does.
func homeWithSessions(t *testing.T, sessions map[string][]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sessions")
	for name, texts := range sessions {
		s, err := session.Open(context.Background(), dir, name)
		if err != nil {
			t.Fatal(err)
		}
		say(t, s, texts...)
		if err := s.SaveState(context.Background(), []byte(`{"n":`+string(rune('0'+len(texts)))+`}`)); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	return dir
}

// TestMigrateSessionFiles: a home's session files go into the bucket, each
// record with its number and time, verified by count and content hash; a
// re-run copies nothing and verifies again; another host then continues a
// migrated session; the bucket's sessions go back to files in a fresh
// directory with the same hash; a name the bucket holds another history
// under is refused, naming it.
func TestMigrateSessionFiles(t *testing.T) {
	ctx := context.Background()
	srv := natstest.Start(t)
	dir := homeWithSessions(t, map[string][]string{
		"ops":      {"the deploy is blue", "restart the indexer"},
		"notes.v2": {"one"},
	})
	st := openHost(t, srv.URL())
	var progress []int
	rep, err := st.ImportFiles(ctx, dir, func(done, total int) { progress = append(progress, done, total) })
	if err != nil {
		t.Fatalf("ImportFiles: %v", err)
	}
	// Each session: meta, its messages and a state record.
	if !rep.Verified || rep.Sessions != 2 || rep.Records != 7 || rep.Copied != 7 || rep.Hash == "" {
		t.Fatalf("import: %+v", rep)
	}
	if !slices.Equal(progress, []int{1, 2, 2, 2}) {
		t.Fatalf("progress: %v", progress)
	}
	again, err := st.ImportFiles(ctx, dir, nil)
	if err != nil || !again.Verified || again.Copied != 0 || again.Hash != rep.Hash {
		t.Fatalf("import again: %+v, %v", again, err)
	}

	other := openHost(t, srv.URL())
	if got := names(t, other); !slices.Equal(sortCopy(got), []string{"notes.v2", "ops"}) {
		t.Fatalf("the other host lists %q", got)
	}
	s, err := other.Open(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(s.History()); !slices.Equal(got, []string{"the deploy is blue", "restart the indexer"}) || string(s.State()) != `{"n":2}` {
		t.Fatalf("the migrated session on another host: %q, state %s", got, s.State())
	}
	say(t, s, "continued on the other host")

	back := filepath.Join(t.TempDir(), "sessions")
	out, err := st.ExportFiles(ctx, back, nil)
	if err != nil || !out.Verified || out.Sessions != 2 || out.Records != 8 || out.Copied != 8 {
		t.Fatalf("ExportFiles: %+v, %v", out, err)
	}
	if again, err := st.ExportFiles(ctx, back, nil); err != nil || again.Copied != 0 || again.Hash != out.Hash {
		t.Fatalf("export again: %+v, %v", again, err)
	}
	f, err := session.Open(ctx, back, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(f.History()); len(got) != 3 || got[2] != "continued on the other host" || f.ID() != s.ID() {
		t.Fatalf("the exported session file: %q (id %s, want %s)", got, f.ID(), s.ID())
	}
	f.Close()

	// A home with another history under a name the bucket holds.
	clash := homeWithSessions(t, map[string][]string{"ops": {"something else"}})
	if _, err := st.ImportFiles(ctx, clash, nil); !errors.Is(err, session.ErrConflict) {
		t.Fatalf("importing a clashing session: %v; want ErrConflict", err)
	}
	// And a directory with another history under a name the bucket holds.
	if _, err := st.ExportFiles(ctx, clash, nil); !errors.Is(err, session.ErrConflict) {
		t.Fatalf("exporting onto a clashing session file: %v; want ErrConflict", err)
	}
}

func sortCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
