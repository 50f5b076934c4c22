package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// fusionFixture is a store whose records exercise every branch of the
// neighbour walk: several sessions and areas interleaved, notes outside any
// session, deleted, re-created, updated and archived records, and records written
// after the order was built. It returns the store and queries drawn from its
// texts.
func fusionFixture(t *testing.T) (*Store, []string) {
	t.Helper()
	s := openStore(t, t.TempDir(), Options{Embedder: newHashEmbedder()})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	words := strings.Fields(`alice bob carol market mugs railway station bicycle chain pottery class wheel
		garage grandmother bowls berlin vim editor coffee morning standup deploy release service restart
		database migration handbook friday cat terminal theme fonts dark light garden tomato seeds rain`)
	areas := []string{AreaMain, AreaMain, AreaFragments, AreaSolutions, AreaLibrary}
	speakers := []string{"Alice", "Bob", "Carol"}
	text := func() string {
		n := 4 + rng.IntN(8)
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[rng.IntN(len(words))]
		}
		t := speakers[rng.IntN(len(speakers))] + ": " + strings.Join(ws, " ")
		switch rng.IntN(8) { // some ask, for the lift of the record after a question
		case 0, 1:
			t += "?"
		case 2:
			t += "? [image: a photo of " + words[rng.IntN(len(words))] + "]"
		}
		return t
	}
	var ids []string
	put := func(batch int) {
		var ins []Input
		for range batch {
			id := fmt.Sprintf("r%04d", len(ids))
			ids = append(ids, id)
			in := Input{ID: id, Area: areas[rng.IntN(len(areas))], Text: text(), Tags: []string{words[rng.IntN(5)]}}
			if rng.IntN(10) < 2 {
				in.Metadata = map[string]any{"session": fmt.Sprintf("conv-%d", rng.IntN(3)), "when": "3 March, 2024"}
			}
			ins = append(ins, in)
		}
		if _, err := s.PutBatch(ctx, ins, Source{Source: "test", Session: fmt.Sprintf("sess-%d", len(ids)/40)}); err != nil {
			t.Fatal(err)
		}
		// Notes outside any exchange, between the sessions' records.
		for range 3 {
			id := fmt.Sprintf("r%04d", len(ids))
			ids = append(ids, id)
			if _, err := s.Put(ctx, Input{ID: id, Area: AreaMain, Text: text()}, Source{Source: "test"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range 6 {
		put(50)
	}
	change := func() {
		for range 15 {
			id := ids[rng.IntN(len(ids))]
			var err error
			switch rng.IntN(3) {
			case 0:
				err = s.Delete(ctx, id, "test", Source{Source: "test"})
			case 1:
				err = s.Archive(ctx, id, "test", "", Source{Source: "test"})
			case 2:
				_, err = s.Put(ctx, Input{ID: id, Area: AreaMain, Text: text()}, Source{Source: "test", Session: "sess-x"})
			}
			if err != nil && !strings.Contains(err.Error(), "no record") && !strings.Contains(err.Error(), "not found") {
				t.Fatalf("changing %s: %v", id, err)
			}
		}
	}
	change()
	// The first search builds the order; what follows changes it in place.
	if _, err := s.Search(ctx, "alice market", SearchOptions{}); err != nil {
		t.Fatal(err)
	}
	put(60)
	change()
	// Re-create some deleted ids.
	var again []Input
	for _, id := range ids[:40] {
		if _, ok := must2(s.Get(context.Background(), id)); !ok {
			again = append(again, Input{ID: id, Area: AreaMain, Text: text()})
		}
	}
	if len(again) > 0 {
		if _, err := s.PutBatch(ctx, again, Source{Source: "test", Session: "sess-again"}); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{"Alice market mugs", "bob railway station bicycle", "what did carol say about pottery",
		"garden tomato", "deploy release friday", "zzz unknownword", "the"}
	for range 25 {
		queries = append(queries, strings.Join(strings.Fields(text())[1:4], " "))
	}
	return s, queries
}

// TestFastFusionEqualsReference holds Search's slice-based fusion to the
// map-based reference (recall.Smooth and recall.WeightedSum through fuse, every
// fused candidate filtered and sorted) it replaced: the same hits in the same
// order with bit-identical scores, for each mode and the options that change
// the fusion or the selection.
func TestFastFusionEqualsReference(t *testing.T) {
	s, queries := fusionFixture(t)
	now := time.Now()
	for _, tc := range []struct {
		name string
		o    SearchOptions
	}{
		{"default", SearchOptions{}},
		{"bm25", SearchOptions{Mode: ModeBM25}},
		{"vector", SearchOptions{Mode: ModeVector}},
		{"no context", SearchOptions{Context: -1}},
		{"wide context", SearchOptions{Context: 0.8, ContextWindow: 4, ContextDecay: 0.7}},
		{"window 1", SearchOptions{ContextWindow: 1}},
		{"no reply lift", SearchOptions{ContextReply: -1}},
		{"reply lift 0.5", SearchOptions{ContextReply: 0.5}},
		{"weights", SearchOptions{BM25Weight: 0.4, VectorWeight: 2}},
		{"speaker boost", SearchOptions{SpeakerBoost: 0.5}},
		{"limit 1", SearchOptions{Limit: 1}},
		{"limit 200 (most of the fused list)", SearchOptions{Limit: 200}},
		{"few candidates", SearchOptions{Candidates: 12, Limit: 5}},
		{"areas with library", SearchOptions{Filter: Filter{Areas: []string{AreaLibrary, AreaMain}}}},
		{"tag filter", SearchOptions{Filter: Filter{Tags: []string{"alice"}}}},
		{"archived", SearchOptions{Filter: Filter{Statuses: []Status{StatusArchived}}}},
		{"recency", SearchOptions{RecencyHalfLife: time.Hour, Now: now.Add(2 * time.Hour)}},
		{"mmr", SearchOptions{MMRLambda: 0.5}},
		{"rrf", SearchOptions{Fusion: FusionRRF}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			for _, q := range queries {
				s.refFusion = false
				fast, err := s.Search(ctx, q, tc.o)
				if err != nil {
					t.Fatal(err)
				}
				s.refFusion = true
				ref, err := s.Search(ctx, q, tc.o)
				s.refFusion = false
				if err != nil {
					t.Fatal(err)
				}
				if len(fast.Hits) != len(ref.Hits) {
					t.Fatalf("%q: %d hits, reference %d", q, len(fast.Hits), len(ref.Hits))
				}
				for i := range fast.Hits {
					f, r := fast.Hits[i], ref.Hits[i]
					if f.Record.ID != r.Record.ID || f.Score != r.Score || f.Fused != r.Fused || f.Context != r.Context ||
						f.BM25Rank != r.BM25Rank || f.BM25Score != r.BM25Score || f.VectorRank != r.VectorRank || f.Similarity != r.Similarity {
						t.Fatalf("%q hit %d:\n fast      %s %q\n reference %s %q", q, i, f.Record.ID, f.Why(), r.Record.ID, r.Why())
					}
				}
				if fast.Block != ref.Block {
					t.Fatalf("%q: the rendered blocks differ", q)
				}
			}
		})
	}
}

// TestBestFirst: the first n after bestFirst are the first n of a full sort,
// with ties in score ordered by id, for selections smaller and larger than the
// heap path's bound.
func TestBestFirst(t *testing.T) {
	for _, tc := range []struct {
		name   string
		size   int
		n      int
		levels int // distinct scores (few: many ties)
	}{
		{"empty", 0, 10, 3},
		{"n zero", 50, 0, 3},
		{"heap, ties", 1000, 10, 5},
		{"heap, distinct", 1000, 30, 1 << 30},
		{"n of one", 200, 1, 4},
		{"sort path", 40, 20, 6},
		{"n beyond size", 7, 30, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.size), uint64(tc.n)))
			hs := make([]fusedHit, tc.size)
			for i := range hs {
				hs[i] = fusedHit{id: fmt.Sprintf("id%05d", rng.IntN(1_000_000)*10+i%10), score: float64(rng.IntN(tc.levels))}
			}
			want := slices.Clone(hs)
			slices.SortFunc(want, byFusedScore)
			bestFirst(hs, tc.n)
			m := min(tc.n, len(hs))
			if !slices.Equal(hs[:m], want[:m]) {
				t.Fatalf("first %d: %v, want %v", m, hs[:m], want[:m])
			}
			rest := slices.Clone(hs[m:])
			slices.SortFunc(rest, byFusedScore)
			if !slices.Equal(rest, want[m:]) {
				t.Fatal("the rest is not the remaining hits")
			}
		})
	}
}
