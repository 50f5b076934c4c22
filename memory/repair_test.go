package memory

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// lateCancel is a context that is live for its first `live` looks at Err and
// cancelled from then on: a cancellation that arrives while a repair replays
// the journal, after the read checked its context on the way in.
type lateCancel struct {
	context.Context
	live atomic.Int32
}

func (c *lateCancel) Err() error {
	if c.live.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// trustFile stamps the store's file name in CheckedFile as it is now, so that
// the next open takes it on trust (as one an earlier open verified).
func trustFile(t *testing.T, dir, name string) {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	st, ok := stampOf(fi)
	if !ok {
		t.Skip("no change times on this system")
	}
	if err := writeChecked(dir, map[string]fileStamp{name: st}); err != nil {
		t.Fatal(err)
	}
}

// damagedStore is richStore's store with a record of its snapshot damaged
// where only reading it finds it (the file taken on trust), opened; it
// returns the store and the journal's replayed state hash.
func damagedStore(t *testing.T, dir string) (*Store, string) {
	t.Helper()
	richStore(t, dir, nil)
	want := replayedHash(t, dir)
	p := filepath.Join(dir, SnapshotFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	at, _ := snapRecordAt(t, dir, "meta")
	b[at+1+len("meta")+1+len("main")] = 0x7f // the text's length
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	trustFile(t, dir, SnapshotFile)
	s := openStore(t, dir, Options{})
	if n := s.Notices(); len(n) > 0 {
		t.Fatalf("notices at open %q: the damage was to be found by reading", n)
	}
	return s, want
}

// TestRepairCancelled: a read that finds the state damaged (a record of a
// trusted snapshot that does not decode) and whose context is cancelled or
// runs out, before or during the rebuild from the journal, returns a
// *RepairError wrapping the context's error instead of an answer that misses
// the damaged record; the store is left as it was (the state still marked
// damaged, the snapshot and the journal untouched), and the next read with a
// live context repairs it and answers right.
func TestRepairCancelled(t *testing.T) {
	past, cancelPast := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelPast()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	contexts := []struct {
		name string
		ctx  func() context.Context
		want error
		// late: the context is live when the read starts (a read that looks
		// at it first, the search, still reaches the repair)
		late bool
	}{
		{"cancelled", func() context.Context { return cancelled }, context.Canceled, false},
		{"deadline passed", func() context.Context { return past }, context.DeadlineExceeded, false},
		{"cancelled during the replay", func() context.Context {
			c := &lateCancel{Context: context.Background()}
			c.live.Store(1) // the look before the repair
			return c
		}, context.Canceled, true},
	}
	reads := []struct {
		name string
		read func(ctx context.Context, s *Store) error
		// checks: the read looks at its context before it reads (a
		// cancelled search is the full-text index's context error)
		checks bool
	}{
		{"get", func(ctx context.Context, s *Store) error { _, _, err := s.Get(ctx, "meta"); return err }, false},
		{"search", func(ctx context.Context, s *Store) error {
			_, err := s.Search(ctx, "support group", SearchOptions{Mode: ModeBM25})
			return err
		}, true},
		{"list", func(ctx context.Context, s *Store) error { _, err := s.List(ctx, Filter{}); return err }, false},
		{"stats", func(ctx context.Context, s *Store) error { _, err := s.Stats(ctx); return err }, false},
	}
	for _, c := range contexts {
		for _, rd := range reads {
			t.Run(c.name+"/"+rd.name, func(t *testing.T) {
				dir := t.TempDir()
				s, want := damagedStore(t, dir)
				snap, _ := os.ReadFile(filepath.Join(dir, SnapshotFile))
				journal, _ := os.ReadFile(filepath.Join(dir, JournalFile))
				// Get and Search read the damaged record itself; List and
				// Stats find the state damaged once a read has marked it.
				if rd.name == "list" || rd.name == "stats" {
					s.mu.RLock()
					s.state.get("meta")
					s.mu.RUnlock()
				}
				err := rd.read(c.ctx(), s)
				if !errors.Is(err, c.want) {
					t.Fatalf("read with a %s context: %v (%T), want an error wrapping %v", c.name, err, err, c.want)
				}
				var re *RepairError
				repaired := !rd.checks || c.late
				if repaired && !errors.As(err, &re) {
					t.Fatalf("read with a %s context: %v (%T), want a *RepairError", c.name, err, err)
				} else if repaired && !strings.Contains(err.Error(), SnapshotFile) {
					t.Errorf("the error %q does not name the damaged snapshot", err)
				}
				s.mu.RLock()
				still := s.state.damaged() != nil
				s.mu.RUnlock()
				if repaired && !still {
					t.Error("the state is no longer marked damaged after a repair that did not finish")
				}
				if b, _ := os.ReadFile(filepath.Join(dir, SnapshotFile)); !bytes.Equal(b, snap) {
					t.Error("the snapshot changed although the repair did not finish")
				}
				if b, _ := os.ReadFile(filepath.Join(dir, JournalFile)); !bytes.Equal(b, journal) {
					t.Error("the journal changed although the repair did not finish")
				}
				// The next read repairs.
				r, ok, err := s.Get(context.Background(), "meta")
				if err != nil || !ok || !strings.Contains(r.Text, "support group") {
					t.Fatalf("Get after the cancelled repair: %+v %v %v", r, ok, err)
				}
				if got, err := s.Hash(context.Background()); err != nil || got != want {
					t.Errorf("state hash %s (%v), journal replay %s", got, err, want)
				}
				if ids := hitIDs(must(s.Search(context.Background(), "support group", SearchOptions{Mode: ModeBM25}))); len(ids) == 0 || ids[0] != "meta" {
					t.Errorf("search after the repair: %v", ids)
				}
				if notes := strings.Join(s.Notices(), "\n"); !strings.Contains(notes, "rebuilt the state from the journal") {
					t.Errorf("notices %q do not tell of the rebuild", notes)
				}
			})
		}
	}
}

// TestRepairBounded: a read repairs at most once. A state that a read finds
// damaged again after the rebuild (it cannot be, having no snapshot base: the
// test marks it by hand) ends the read with ErrStillDamaged instead of
// repairing again.
func TestRepairBounded(t *testing.T) {
	s, _ := damagedStore(t, t.TempDir())
	reads := 0
	err := s.reading(context.Background(), func() error {
		reads++
		s.mu.RLock()
		st := s.state
		s.mu.RUnlock()
		st.damage.CompareAndSwap(nil, &stateDamage{path: "test", err: errors.New("marked by the test")})
		return nil
	})
	if !errors.Is(err, ErrStillDamaged) {
		t.Fatalf("reading a state damaged after every repair: %v, want ErrStillDamaged", err)
	}
	if reads != readTries {
		t.Errorf("%d reads, want %d", reads, readTries)
	}
}
