package memory

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/exocortex/exocortex/staging"
)

func TestAppendBatchOfEvents(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir, Options{Embedder: newHashEmbedder()})
	putFacts(t, s)
	before := s.JournalSeq()
	imp := 0.9
	entries := []staging.Entry{
		{Kind: "batch.plan.v1", Session: "batch", Payload: map[string]any{"phase": "dedup", "events": 3}},
		{Kind: KindUpsert, Session: "batch", Payload: UpsertEvent{ID: "coffee2", Area: AreaMain, Text: "The user drinks black coffee each morning", Importance: &imp,
			Source: Source{Session: "s9", Source: "batch"}}},
		{Kind: KindMerge, Session: "batch", Payload: MergeEvent{Into: "coffee", From: []string{"coffee2"}, Reason: "near-duplicate"}},
		{Kind: KindArchive, Session: "batch", Payload: json.RawMessage(`{"id":"db","reason":"stale"}`)},
	}
	recs, err := s.Append(ctx, entries)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 || recs[0].Seq != before+1 || s.JournalSeq() != before+4 {
		t.Fatalf("records %v, journal seq %d (was %d)", recs, s.JournalSeq(), before)
	}
	c, _ := must2(s.Get(context.Background(), "coffee"))
	c2, _ := must2(s.Get(context.Background(), "coffee2"))
	db, _ := must2(s.Get(context.Background(), "db"))
	if c.Importance != 0.9 || c2.Status != StatusArchived || c2.SupersededBy != "coffee" || db.Status != StatusArchived {
		t.Fatalf("after the batch: coffee %+v, coffee2 %+v, db %+v", c, c2, db)
	}
	if c2.Provenance.Session != "s9" || c2.Provenance.Source != "batch" {
		t.Fatalf("provenance from the payload, not the journal record: %+v", c2.Provenance)
	}
	if st := must(s.Stats(context.Background())); len(st.UnknownEvents) != 0 || st.SkippedEvents != 0 {
		t.Fatalf("a non-memory kind counted: %+v", st)
	}
	hist, err := s.History(ctx, "coffee2")
	if err != nil || len(hist) != 2 || hist[0].Kind != KindUpsert || hist[1].Kind != KindMerge {
		t.Fatalf("history of coffee2: %v (%v)", hist, err)
	}
	var kinds []string
	if err := s.ReadJournal(ctx, before, func(r staging.Record) error { kinds = append(kinds, r.Kind); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(kinds, []string{"batch.plan.v1", KindUpsert, KindMerge, KindArchive}) {
		t.Fatalf("journal since %d: %v", before, kinds)
	}

	// The journal alone rebuilds the same state.
	hash := must(s.Hash(context.Background()))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := Replay(ctx, s.JournalPath(), t.TempDir(), Options{Logger: discardLogger()})
	if err != nil || rep.StateHash != hash {
		t.Fatalf("replay %s, live %s (%v)", rep.StateHash, hash, err)
	}
}

func TestAppendRefusesABadBatchWhole(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{})
	putFacts(t, s)
	cases := []struct {
		name  string
		batch []staging.Entry
		index int
	}{
		{"unknown id", []staging.Entry{
			{Kind: KindArchive, Payload: ArchiveEvent{ID: "coffee"}},
			{Kind: KindArchive, Payload: ArchiveEvent{ID: "nope"}},
		}, 1},
		{"key of another record", []staging.Entry{
			{Kind: KindUpsert, Payload: UpsertEvent{ID: "x", Area: AreaMain, Key: "user_theme", Text: "dark"}},
		}, 0},
		{"merge from a record deleted earlier in the batch", []staging.Entry{
			{Kind: KindDelete, Payload: DeleteEvent{ID: "cat"}},
			{Kind: KindMerge, Payload: MergeEvent{Into: "coffee", From: []string{"cat"}}},
		}, 1},
		{"bad area", []staging.Entry{{Kind: KindUpsert, Payload: UpsertEvent{ID: "y", Area: "Bad Area", Text: "t"}}}, 0},
		{"no kind", []staging.Entry{{Payload: map[string]string{}}}, 0},
	}
	for _, c := range cases {
		before, hash := s.JournalSeq(), must(s.Hash(context.Background()))
		_, err := s.Append(ctx, c.batch)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Index != c.index {
			t.Errorf("%s: error %v, want an InputError at %d", c.name, err, c.index)
		}
		if s.JournalSeq() != before || must(s.Hash(context.Background())) != hash {
			t.Errorf("%s: something was written", c.name)
		}
	}
	// A record created earlier in the same batch can be archived by a later entry.
	if _, err := s.Append(ctx, []staging.Entry{
		{Kind: KindUpsert, Payload: UpsertEvent{ID: "new", Area: AreaFragments, Text: "fresh"}},
		{Kind: KindArchive, Payload: ArchiveEvent{ID: "new", Reason: "at once"}},
	}); err != nil {
		t.Fatal(err)
	}
	if r, _ := must2(s.Get(context.Background(), "new")); r.Status != StatusArchived {
		t.Fatalf("new: %+v", r)
	}
}

func TestRecordsAndVectors(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{Embedder: newHashEmbedder()})
	putFacts(t, s)
	if err := s.Archive(ctx, "cat", "gone", "", Source{}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range must(s.Records(context.Background())) {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, []string{"book", "cat", "coffee", "db", "deploy", "theme"}) {
		t.Fatalf("Records: %v (every area and status, by id)", ids)
	}
	v, ok := must2(s.Vector(context.Background(), "book"))
	want, _ := newHashEmbedder().Embed(ctx, []string{facts[4].Text})
	if !ok || len(v) != 64 || cosine(v, want[0]) < 0.999 {
		t.Fatalf("Vector(book) = %v, %v", v, ok)
	}
	if _, ok := must2(s.Vector(context.Background(), "nope")); ok {
		t.Fatal("a vector for a record that does not exist")
	}
	if s.Embedder() == nil {
		t.Fatal("Embedder() is nil")
	}
	bare := openStore(t, t.TempDir(), Options{})
	putFacts(t, bare)
	if _, ok := must2(bare.Vector(context.Background(), "book")); ok || bare.Embedder() != nil {
		t.Fatal("a store without an embedder has vectors")
	}
}
