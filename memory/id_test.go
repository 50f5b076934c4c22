package memory

import (
	"context"
	"regexp"
	"testing"
)

// TestIDsFollowCreation: the ids the store makes sort in the order the
// records were made, within one batch (one millisecond) and across saves.
func TestIDsFollowCreation(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{})
	var ins []Input
	for range 50 {
		ins = append(ins, Input{Text: "the same words"})
	}
	batch, err := s.PutBatch(ctx, ins, Source{})
	if err != nil {
		t.Fatal(err)
	}
	one, err := s.Put(ctx, Input{Text: "the same words"}, Source{})
	if err != nil {
		t.Fatal(err)
	}
	shape := regexp.MustCompile(`^[0-9a-f]{20}$`)
	prev := ""
	for i, r := range append(batch, one) {
		if !shape.MatchString(r.ID) {
			t.Fatalf("record %d: id %q is not 20 hex digits", i, r.ID)
		}
		if r.ID <= prev {
			t.Fatalf("record %d: id %s does not sort after the one made before it (%s)", i, r.ID, prev)
		}
		prev = r.ID
	}
	if a, b := NewID(), NewID(); a == b || !shape.MatchString(a) {
		t.Fatalf("NewID made %q and %q", a, b)
	}
}

// TestEqualScoresRecallOldestFirst: records that score the same come back in
// the order they were saved, in every fresh store (with random ids their order
// changed from run to run, and so did a replayed MEMORY RECALL block).
func TestEqualScoresRecallOldestFirst(t *testing.T) {
	ctx := context.Background()
	texts := []string{"first: the notes say milk", "second: the notes say milk", "third: the notes say milk"}
	for run := range 5 {
		s := openStore(t, t.TempDir(), Options{})
		for _, x := range texts {
			if _, err := s.Put(ctx, Input{Text: x, Key: x}, Source{}); err != nil {
				t.Fatal(err)
			}
		}
		res, err := s.Search(ctx, "notes milk", SearchOptions{Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != len(texts) {
			t.Fatalf("run %d: %d hits, want %d", run, len(res.Hits), len(texts))
		}
		for i, h := range res.Hits {
			if h.Record.Text != texts[i] {
				t.Fatalf("run %d: hit %d is %q, want %q (equal scores, oldest first)", run, i, h.Record.Text, texts[i])
			}
		}
	}
}
