package memory

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/memory/embed"
)

// meaningEmbedder is a GloVe embedder over a small vocabulary written to a real
// word-vector file: "instruments" is close to "clarinet" and "violin", far from
// the kitchen words.
func meaningEmbedder(t *testing.T) *embed.GloVe {
	t.Helper()
	vocab := []struct {
		w string
		v [4]float32
	}{
		{"instruments", [4]float32{1, 0, 0, 0}},
		{"clarinet", [4]float32{0.9, 0.43, 0, 0}},
		{"violin", [4]float32{0.85, 0, 0.5, 0}},
		{"pasta", [4]float32{0, 0, 0, 1}},
		{"cooked", [4]float32{0, 0.2, 0, 1}},
		{"kids", [4]float32{0, 1, 0, 0.2}},
		{"evening", [4]float32{0, 0.3, 1, 0}},
		{"loud", [4]float32{0.1, 0, 1, 0.3}},
		{"melanie", [4]float32{0.3, 0.3, 0.3, 0.3}},
		{"caroline", [4]float32{0.3, 0.3, 0.3, -0.3}},
	}
	wv := &embed.WordVectors{Dim: 4}
	for _, x := range vocab {
		wv.Words = append(wv.Words, x.w)
		wv.Vectors = append(wv.Vectors, x.v[:]...)
	}
	path := filepath.Join(t.TempDir(), "words.bin")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := embed.WriteWordVectors(f, wv); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	g, err := embed.LoadGloVe(path, embed.GloVeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestQueryWords(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"What instruments does Melanie play?", []string{"instruments", "play"}},
		{"What has Melanie's family painted, and painted again?", []string{"family", "painted"}},
		{"Hobbies of Jon", []string{"hobbies"}},
		{"When did Caroline go to the LGBTQ support group in 2023?", []string{"go", "support", "group"}},
		{"what is it", nil},
	} {
		if got := s.queryWords(tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("queryWords(%q) = %v, want %v", tc.query, got, tc.want)
		}
	}
}

// TestSoftMatchFindsTheCategoryMember: "What instruments does Melanie have?"
// shares only the name with every turn of Melanie's; BM25 prefers the short
// turn that names her twice, and the word-by-word match lifts the turn about
// a clarinet above it. Only hybrid search re-ranks; each leg alone stays as it
// was.
func TestSoftMatchFindsTheCategoryMember(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{Embedder: meaningEmbedder(t)})
	turns := map[string]string{
		"a": "Melanie: I practise the clarinet every evening with the kids of the neighbourhood.",
		"b": "Melanie: Melanie cooked pasta.",
		"c": "Caroline: the violin was loud.",
	}
	for _, k := range []string{"a", "b", "c"} {
		if _, err := s.Put(ctx, Input{Key: k, Text: turns[k]}, Source{Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	q := "What instruments does Melanie have?"
	base := SearchOptions{VectorWeight: 0.01, SoftMatch: -1}
	for _, tc := range []struct {
		name      string
		o         SearchOptions
		first     string
		meaningOf []string // the hits that must say they were chosen for their meaning
	}{
		{"without the re-rank BM25's choice leads", base, "b", nil},
		{"with it the clarinet turn leads", SearchOptions{VectorWeight: 0.01, SoftMatch: 1}, "a", []string{"a", "c"}},
		{"BM25 alone is not re-ranked", SearchOptions{Mode: ModeBM25, SoftMatch: 1}, "b", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.Search(ctx, q, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			got := keys(res)
			if len(got) == 0 || got[0] != tc.first {
				t.Fatalf("ranking %v, want %s first", got, tc.first)
			}
			for _, h := range res.Hits {
				says := strings.Contains(h.Why(), "close in meaning")
				if want := slices.Contains(tc.meaningOf, h.Record.Key); want != (h.Meaning > 0) || want != says {
					t.Errorf("hit %s: Meaning %g, Why %q", h.Record.Key, h.Meaning, h.Why())
				}
			}
		})
	}
	vec, err := s.Search(ctx, q, SearchOptions{Mode: ModeVector, SoftMatch: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range vec.Hits {
		if h.Meaning != 0 {
			t.Errorf("vector search re-ranked %s: %+v", h.Record.Key, h)
		}
	}
}

// TestExpandFindsWhatSharesNoWord: with Expand the BM25 leg of a hybrid search
// also looks for the query words' similar words, so a turn that shares no word
// with the question becomes a BM25 candidate.
func TestExpandFindsWhatSharesNoWord(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{Embedder: meaningEmbedder(t)})
	for k, txt := range map[string]string{"a": "Melanie: Melanie cooked pasta.", "c": "Caroline: the violin was loud."} {
		if _, err := s.Put(ctx, Input{Key: k, Text: txt}, Source{Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	q := "What instruments does Melanie have?"
	for _, tc := range []struct {
		name   string
		o      SearchOptions
		inBM25 bool
	}{
		{"off by default", SearchOptions{}, false},
		{"two similar words per query word", SearchOptions{Expand: 2, ExpandMinSim: 0.5}, true},
		{"a similarity floor above violin's", SearchOptions{Expand: 2, ExpandMinSim: 0.9}, false},
		{"BM25 alone does not expand", SearchOptions{Mode: ModeBM25, Expand: 2, ExpandMinSim: 0.5}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.Search(ctx, q, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, h := range res.Hits {
				if h.Record.Key == "c" && h.BM25Rank > 0 {
					found = true
				}
			}
			if found != tc.inBM25 {
				t.Fatalf("violin turn among BM25's candidates: %v, want %v (%v)", found, tc.inBM25, keys(res))
			}
		})
	}
}

// TestLoadFindsAnExactWordWithWeakVectors: with word vectors whose cosine for a
// one-word query and a longer sentence is below Agent Zero's 0.7, memory_load
// still finds the sentence holding the word (its BM25 score is the best), and
// memory_forget, which deletes, still asks for the cosine.
func TestLoadFindsAnExactWordWithWeakVectors(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{Embedder: meaningEmbedder(t)})
	note := "Melanie cooked pasta for the kids in the evening, loud as ever, before the violin."
	if _, err := s.Put(ctx, Input{Key: "note", Text: note}, Source{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, Input{Key: "other", Text: "Caroline: the clarinet."}, Source{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Search(ctx, "violin", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		if h.Record.Key == "note" && h.Similarity >= DefaultLoadThreshold {
			t.Fatalf("fixture: the note's cosine %.2f is not below %.2f", h.Similarity, DefaultLoadThreshold)
		}
	}
	got, err := s.MemoryLoad(ctx, "violin", 0, 0, "", Source{Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, note) {
		t.Errorf("memory_load(violin) = %q, want the note holding the word", got)
	}
	if _, err := s.MemoryForget(ctx, "violin", 0, "", Source{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.MemoryLoad(ctx, "violin", 0, 0, "", Source{Source: "test"}); err != nil || !strings.Contains(got, note) {
		t.Errorf("after memory_forget(violin) memory_load = %q, %v: the note was deleted on a keyword match with a weak cosine", got, err)
	}
}
