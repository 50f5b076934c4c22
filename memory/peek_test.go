package memory

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
)

// TestPeekStoreWhileHeld: a second reader of a store another Store holds
// counts what that Store's Stats count, though the snapshot on disk is older
// than the journal, and after a delete; an absent store is empty.
func TestPeekStoreWhileHeld(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	quiet := Options{Logger: slog.New(slog.DiscardHandler)}
	if p, err := PeekStore(ctx, dir); err != nil || p.Records != 0 {
		t.Fatalf("empty store: %+v, %v", p, err)
	}
	s, err := Open(ctx, dir, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, Input{Text: "the first note, before any snapshot"}, Source{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil { // writes a snapshot of one record
		t.Fatal(err)
	}
	if n, _, ok := SnapshotCount(dir); !ok || n != 1 {
		t.Fatalf("snapshot header: %d, %t", n, ok)
	}

	s, err = Open(ctx, dir, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var last *Record
	for i := range 16 {
		if last, err = s.Put(ctx, Input{Text: fmt.Sprintf("note number %d about topic %d", i, i*7)}, Source{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(ctx, last.ID, "test", Source{}); err != nil {
		t.Fatal(err)
	}
	want := must(s.Stats(ctx))
	p, err := PeekStore(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.Records != want.Records || p.JournalSeq != want.JournalSeq {
		t.Errorf("peek = %d records at %d, the holder's stats %d at %d", p.Records, p.JournalSeq, want.Records, want.JournalSeq)
	}
	if n, _, _ := SnapshotCount(dir); n == p.Records {
		t.Errorf("the test wants a stale snapshot header (%d), and it is current", n)
	}
}
