package memory

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestLoadEmbedder: an embedder made by Options.LoadEmbedder while Open reads
// the store serves exactly as one passed in Options.Embedder (the vectors on
// disk are used, nothing is re-embedded); none, or one that fails, leaves the
// store on BM25 alone, a failure with a notice saying why.
func TestLoadEmbedder(t *testing.T) {
	for _, tc := range []struct {
		name       string
		load       func(*hashEmbedder) (Embedder, error)
		wantVec    bool
		wantNotice string
	}{
		{name: "loaded", load: func(e *hashEmbedder) (Embedder, error) { return e, nil }, wantVec: true},
		{name: "none", load: func(*hashEmbedder) (Embedder, error) { return nil, nil }},
		{name: "fails", load: func(*hashEmbedder) (Embedder, error) { return nil, errors.New("the vectors file is damaged") },
			wantNotice: "the embedder is not available (the vectors file is damaged): searching with BM25 alone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir, Options{Embedder: newHashEmbedder()})
			putFacts(t, s)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			e := newHashEmbedder()
			calls := 0
			s = openStore(t, dir, Options{LoadEmbedder: func() (Embedder, error) { calls++; return tc.load(e) }})
			if calls != 1 {
				t.Fatalf("LoadEmbedder called %d times, want once", calls)
			}
			notices := strings.Join(s.Notices(), "\n")
			if tc.wantNotice == "" && notices != "" || !strings.Contains(notices, tc.wantNotice) {
				t.Fatalf("notices %q, want %q", notices, tc.wantNotice)
			}
			st := must(s.Stats(context.Background()))
			if got := st.VectorCount == len(facts) && s.Embedder() != nil; got != tc.wantVec {
				t.Fatalf("vectors on: %v (%d vectors, embedder %v), want %v", got, st.VectorCount, s.Embedder(), tc.wantVec)
			}
			if tc.wantVec {
				if n := e.calls.Load(); n != 0 {
					t.Errorf("the loaded embedder embedded %d times at open: the vectors on disk were not used", n)
				}
				res := must(s.Search(context.Background(), "black coffee in the morning", SearchOptions{Mode: ModeVector}))
				if ids := hitIDs(res); len(ids) == 0 || ids[0] != "coffee" {
					t.Errorf("vector search: %v", ids)
				}
			}
			res := must(s.Search(context.Background(), "coffee", SearchOptions{Mode: ModeBM25}))
			if ids := hitIDs(res); len(ids) == 0 || ids[0] != "coffee" {
				t.Errorf("BM25 search: %v", ids)
			}
		})
	}
}
