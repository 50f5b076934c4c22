package embed

import (
	"math"
	"slices"
	"sync"
	"testing"
)

// similarFixture is a vocabulary in two dimensions: the angle of each word's
// vector says how close in meaning it is to the others.
func similarFixture() *WordVectors {
	words := []string{"music", "instruments", "clarinet", "violin", "kitchen", "zero"}
	angles := []float64{0, 0.1, 0.5, 0.6, 1.5, 0}
	wv := &WordVectors{Dim: 2, Words: words}
	for i, a := range angles {
		r := 1.0 + float64(i) // lengths differ: similarity must not depend on them
		if words[i] == "zero" {
			r = 0
		}
		wv.Vectors = append(wv.Vectors, float32(r*math.Cos(a)), float32(r*math.Sin(a)))
	}
	wv.buildIndex()
	return wv
}

func TestSimilarWords(t *testing.T) {
	g := NewGloVe(similarFixture(), GloVeConfig{})
	for _, tc := range []struct {
		name   string
		word   string
		k      int
		minSim float64
		want   []string
	}{
		{"nearest first, the word itself left out", "instruments", 3, -1, []string{"music", "clarinet", "violin"}},
		{"k bounds the answer", "instruments", 1, -1, []string{"music"}},
		{"minSim bounds it too", "instruments", 5, math.Cos(0.45), []string{"music", "clarinet"}},
		{"an unknown word has none", "theremin", 3, -1, nil},
		{"a zero vector has none", "zero", 3, -1, nil},
		{"k 0 asks for none", "music", 0, -1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, w := range g.SimilarWords(tc.word, tc.k, tc.minSim) {
				got = append(got, w.Word)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("SimilarWords(%q, %d, %g) = %v, want %v", tc.word, tc.k, tc.minSim, got, tc.want)
			}
		})
	}
	// The similarity is the cosine, whatever the vectors' lengths.
	if s := g.SimilarWords("music", 1, -1)[0]; s.Word != "instruments" || math.Abs(s.Similarity-math.Cos(0.1)) > 1e-6 {
		t.Fatalf("music's nearest %+v, want instruments at %g", s, math.Cos(0.1))
	}
}

func TestSimilarWordsConcurrent(t *testing.T) {
	g := NewGloVe(similarFixture(), GloVeConfig{})
	want := g.SimilarWords("clarinet", 3, -1)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, w := range []string{"clarinet", "violin", "music"} {
				got := g.SimilarWords(w, 3, -1)
				if w == "clarinet" && !slices.Equal(got, want) {
					t.Errorf("concurrent answer %v, want %v", got, want)
				}
			}
		}()
	}
	wg.Wait()
}

func TestWordVector(t *testing.T) {
	g := NewGloVe(similarFixture(), GloVeConfig{})
	for _, tc := range []struct {
		word string
		ok   bool
	}{{"clarinet", true}, {"kitchen", true}, {"theremin", false}, {"zero", false}} {
		t.Run(tc.word, func(t *testing.T) {
			v, w, ok := g.WordVector(tc.word)
			if ok != tc.ok {
				t.Fatalf("WordVector(%q) ok = %v, want %v", tc.word, ok, tc.ok)
			}
			if !ok {
				return
			}
			if n := math.Hypot(float64(v[0]), float64(v[1])); math.Abs(n-1) > 1e-6 {
				t.Fatalf("length %g, want 1", n)
			}
			if sw, _ := g.Weight(tc.word); float64(sw) != w {
				t.Fatalf("weight %g, want the SIF weight %g", w, sw)
			}
		})
	}
	// The table is not modified.
	v, _, _ := g.WordVector("kitchen")
	v[0] = 42
	if again, _, _ := g.WordVector("kitchen"); again[0] == 42 {
		t.Fatal("WordVector returned the table's own memory")
	}
}
