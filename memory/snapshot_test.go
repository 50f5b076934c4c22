package memory

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/staging"
)

// richStore fills a store in dir with records that use every field the state
// holds: keys, tags, nested metadata, archived, merged, accessed and deleted
// records, and an event of a kind this build does not know.
func richStore(t *testing.T, dir string, e Embedder) {
	t.Helper()
	ctx := context.Background()
	s := openStore(t, dir, Options{Embedder: e})
	putFacts(t, s)
	created := time.Date(1999, 12, 31, 23, 59, 59, 123456789, time.UTC)
	imp := 0.9
	if _, err := s.PutBatch(ctx, []Input{
		{ID: "meta", Text: "Caroline went to the support group on 7 May", Metadata: map[string]any{
			"when": "7 May 2023", "session": "s-7", "n": 3.5, "ok": true, "none": nil,
			"list": []any{"a", 1.0, false, map[string]any{"deep": []any{}}}, "obj": map[string]any{"k": "v"}}},
		{ID: "old", Text: "An old note with a creation time", Created: &created, Importance: &imp, Tags: []string{"Old", "note"}},
		{ID: "dup", Text: "The user drinks coffee", Tags: []string{"habit"}},
		{ID: "gone", Text: "A record that is deleted"},
	}, Source{Session: "s2", Message: "m1", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		s.Archive(ctx, "deploy", "outdated", "db", Source{Source: "test"}),
		s.RecordAccess(ctx, []string{"coffee", "meta"}, Source{Source: "test"}),
		s.Merge(ctx, MergeEvent{Into: "coffee", From: []string{"dup"}, Text: "The user drinks black coffee every morning"}),
		s.Delete(ctx, "gone", "test", Source{Source: "test"}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.journal.Append(ctx, "memory.future_kind", "", map[string]string{"id": "meta"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The event written behind the store's back is replayed as the journal's
	// tail by the next open, which writes the snapshot again.
	s = openStore(t, dir, Options{Embedder: e})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// replayedState is the state of the journal in dir replayed from sequence 1.
func replayedState(t *testing.T, dir string) *State {
	t.Helper()
	st := newState()
	if _, err := staging.Scan(context.Background(), filepath.Join(dir, JournalFile), 0, func(r staging.Record) error {
		st.apply(r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return st
}

// replayedHash is the state hash of the journal in dir replayed from sequence 1,
// without any snapshot.
func replayedHash(t *testing.T, dir string) string {
	t.Helper()
	st := newState()
	if _, err := staging.Scan(context.Background(), filepath.Join(dir, JournalFile), 0, func(r staging.Record) error {
		st.apply(r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return st.Hash()
}

func TestSnapshotRoundTrip(t *testing.T) {
	dir := t.TempDir()
	richStore(t, dir, newHashEmbedder())
	want := replayedHash(t, dir)
	snap, err := readSnapshot(filepath.Join(dir, SnapshotFile))
	if err != nil {
		t.Fatalf("the store wrote no readable snapshot on Close: %v", err)
	}
	if got := snap.state.Hash(); got != want {
		t.Fatalf("snapshot state hash %s, journal replay %s", got, want)
	}
	if snap.state.unknown["memory.future_kind"] != 1 || snap.state.skipped != replayedSkipped(t, dir) {
		t.Errorf("snapshot counters: unknown %v, skipped %d", snap.state.unknown, snap.state.skipped)
	}
	// Encoding is deterministic: the state opened from the file encodes to
	// the same bytes, whether its records are copied undecoded or decoded
	// and encoded again.
	body, _ := os.ReadFile(filepath.Join(dir, SnapshotFile))
	for _, decoded := range []bool{false, true} {
		if decoded {
			snap.state.each(func(*Record) bool { return true })
		}
		a, _, err := encodeStateV2(snap.state, snap.state.baseCRC)
		if err != nil || !bytes.HasSuffix(body, a) {
			t.Errorf("records decoded %v: the state encodes differently from the file (%v)", decoded, err)
		}
	}
	s := openStore(t, dir, Options{Embedder: newHashEmbedder()})
	if n := s.Notices(); len(n) > 0 {
		t.Errorf("notices on a clean open: %q", n)
	}
	st := must(s.Stats(context.Background()))
	if st.StateHash != want || st.SnapshotSeq != st.JournalSeq {
		t.Errorf("opened from the snapshot: hash %s (want %s), snapshot seq %d, journal seq %d", st.StateHash, want, st.SnapshotSeq, st.JournalSeq)
	}
	if r, ok := must2(s.GetByKey(context.Background(), AreaMain, "user_theme")); !ok || r.ID != "theme" {
		t.Errorf("key lookup after a snapshot open: %v %v", r, ok)
	}
	if ids := hitIDs(must(s.Search(context.Background(), "support group", SearchOptions{}))); len(ids) == 0 || ids[0] != "meta" {
		t.Errorf("search after a snapshot open: %v", ids)
	}
}

// TestSnapshotCount: the header alone says the records and the journal
// position of the last snapshot, with the store held; a missing or damaged
// header says nothing.
func TestSnapshotCount(t *testing.T) {
	dir := t.TempDir()
	if _, _, ok := SnapshotCount(dir); ok {
		t.Fatal("a count from a directory without a snapshot")
	}
	richStore(t, dir, newHashEmbedder())
	s := openStore(t, dir, Options{Embedder: newHashEmbedder()})
	st := must(s.Stats(context.Background()))
	n, seq, ok := SnapshotCount(dir) // while s holds the lock
	if !ok || n != st.Records || seq != st.SnapshotSeq {
		t.Errorf("SnapshotCount = %d, %d, %v; the store has %d records, snapshot at %d", n, seq, ok, st.Records, st.SnapshotSeq)
	}
	s.Close()
	if err := os.WriteFile(filepath.Join(dir, SnapshotFile), []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := SnapshotCount(dir); ok {
		t.Error("a count from a damaged header")
	}
}

func replayedSkipped(t *testing.T, dir string) int {
	st := newState()
	staging.Scan(context.Background(), filepath.Join(dir, JournalFile), 0, func(r staging.Record) error { st.apply(r); return nil })
	return st.skipped
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// must2 is must for the reads that say whether they found something.
func must2[T any](v T, ok bool, err error) (T, bool) {
	if err != nil {
		panic(err)
	}
	return v, ok
}

// TestSnapshotTail opens a store whose snapshot is older than its journal (the
// process that wrote the tail died before it could write another): the state is
// the snapshot plus the replayed tail, with no notice.
func TestSnapshotTail(t *testing.T) {
	dir := t.TempDir()
	richStore(t, dir, newHashEmbedder())
	old, _ := os.ReadFile(filepath.Join(dir, SnapshotFile))
	s := openStore(t, dir, Options{Embedder: newHashEmbedder()})
	if _, err := s.Put(context.Background(), Input{ID: "tail", Text: "written after the snapshot about zebras"}, Source{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Archive(context.Background(), "theme", "changed", "", Source{}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.WriteFile(filepath.Join(dir, SnapshotFile), old, 0o600)
	want := replayedHash(t, dir)
	s = openStore(t, dir, Options{Embedder: newHashEmbedder()})
	if n := s.Notices(); len(n) > 0 {
		t.Errorf("notices: %q", n)
	}
	if got := must(s.Hash(context.Background())); got != want {
		t.Errorf("hash %s after snapshot + tail, want %s", got, want)
	}
	if ids := hitIDs(must(s.Search(context.Background(), "zebras", SearchOptions{}))); len(ids) == 0 || ids[0] != "tail" {
		t.Errorf("search for the tail's record: %v", ids)
	}
}

// TestDamagedOrStaleSnapshot damages the snapshot file, or changes the journal
// under it, and opens the store: it must say what it found, rebuild the state
// from the journal, and write a good snapshot again.
func TestDamagedOrStaleSnapshot(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
		notice string
	}{
		{"truncated", func(t *testing.T, dir string) {
			p := filepath.Join(dir, SnapshotFile)
			st, _ := os.Stat(p)
			if err := os.Truncate(p, st.Size()*2/3); err != nil {
				t.Fatal(err)
			}
		}, "is truncated"},
		{"corrupted byte", func(t *testing.T, dir string) {
			p := filepath.Join(dir, SnapshotFile)
			b, _ := os.ReadFile(p)
			b[len(b)-40] ^= 0x5a
			os.WriteFile(p, b, 0o600)
		}, "fails its checksum"},
		{"garbage header", func(t *testing.T, dir string) {
			p := filepath.Join(dir, SnapshotFile)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append([]byte("not json\n"), b...), 0o600)
		}, "unreadable header"},
		{"newer format", func(t *testing.T, dir string) {
			p := filepath.Join(dir, SnapshotFile)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"version":2`), []byte(`"version":99`), 1), 0o600)
		}, "format version 99"},
		{"journal lost its tail", func(t *testing.T, dir string) {
			// The OS lost the journal's last writes but the snapshot survived:
			// the snapshot is ahead of the journal.
			p := filepath.Join(dir, JournalFile)
			b, _ := os.ReadFile(p)
			lines := bytes.SplitAfter(b, []byte("\n"))
			os.WriteFile(p, bytes.Join(lines[:len(lines)-4], nil), 0o600)
		}, "is stale"},
		{"journal replaced", func(t *testing.T, dir string) {
			// Another store's journal of a different history, longer than this one.
			other := t.TempDir()
			s := openStore(t, other, Options{})
			putMany(t, s, 200)
			s.Close()
			b, _ := os.ReadFile(filepath.Join(other, JournalFile))
			os.WriteFile(filepath.Join(dir, JournalFile), b, 0o600)
		}, "is stale"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			richStore(t, dir, newHashEmbedder())
			tc.damage(t, dir)
			want := replayedHash(t, dir)
			s, err := Open(context.Background(), dir, Options{Embedder: newHashEmbedder(), Logger: discardLogger()})
			if err != nil {
				t.Fatal(err)
			}
			notes := strings.Join(s.Notices(), "\n")
			if !strings.Contains(notes, "state snapshot") || !strings.Contains(notes, tc.notice) || !strings.Contains(notes, "rebuilding the state from the journal") {
				t.Errorf("notices %q do not say the snapshot %s and is rebuilt", notes, tc.notice)
			}
			if got := must(s.Hash(context.Background())); got != want {
				t.Errorf("state hash %s, journal replay %s", got, want)
			}
			if st := must(s.Stats(context.Background())); st.SnapshotSeq != st.JournalSeq {
				t.Errorf("snapshot not rewritten: seq %d, journal %d", st.SnapshotSeq, st.JournalSeq)
			}
			s.Close()
			// The rewritten snapshot is good: the next open is quiet.
			s = openStore(t, dir, Options{Embedder: newHashEmbedder()})
			if n := s.Notices(); len(n) > 0 {
				t.Errorf("notices on the next open: %q", n)
			}
			if got := must(s.Hash(context.Background())); got != want {
				t.Errorf("state hash %s on the next open, want %s", got, want)
			}
		})
	}
}
