package embed

import (
	"math"
	"sort"
	"sync"

	"github.com/exocortex/exocortex/memory/recall"
)

// DefaultSimilarVocab is how many of the most frequent words SimilarWords
// chooses neighbours from: rarer words are mostly names, misspellings and
// foreign words, which make poor query expansions, and every word searched
// costs a dot product per candidate.
const DefaultSimilarVocab = 30000

// similarCacheSize bounds the words whose neighbours are remembered.
const similarCacheSize = 4096

// similar finds a word's nearest neighbours in the vocabulary by cosine
// similarity, remembering the answers: queries repeat their content words.
type similar struct {
	once  sync.Once
	vocab int
	norms []float32 // 1/|v| of words [0, vocab)
	vecs  []float32 // their vectors

	mu    sync.Mutex
	cache map[string][]WordSimilarity
}

// WordSimilarity is a word and its cosine similarity to another.
type WordSimilarity = recall.WordSimilarity

// SimilarWords returns up to k words of the DefaultSimilarVocab most frequent
// whose vectors have cosine similarity at least minSim with word's, most
// similar first (the word itself excluded). A word outside the vocabulary has
// none. The first call computes the vocabulary's norms (a few milliseconds);
// each new word costs one pass over the vocabulary, and the answers for the
// last words asked are remembered.
func (g *GloVe) SimilarWords(word string, k int, minSim float64) []WordSimilarity {
	if k <= 0 {
		return nil
	}
	all := g.sim.neighbours(g.wv, word)
	var out []WordSimilarity
	for _, w := range all {
		if len(out) == k || w.Similarity < minSim {
			break
		}
		out = append(out, w)
	}
	return out
}

// similarKeep is how many neighbours are computed and remembered per word; a
// call asks for at most this many.
const similarKeep = 32

func (s *similar) neighbours(wv *WordVectors, word string) []WordSimilarity {
	s.once.Do(func() {
		s.vocab = min(DefaultSimilarVocab, wv.Len())
		s.vecs = wv.Vectors
		if s.vecs == nil {
			// A compact table used in place: its first words decoded once, as
			// the pass over them below reads each of them per word asked.
			s.vecs = make([]float32, 0, s.vocab*wv.Dim)
			for i := range s.vocab {
				s.vecs = append(s.vecs, wv.Vector(i)...)
			}
		}
		s.norms = make([]float32, s.vocab)
		for i := range s.vocab {
			var ss float64
			for _, x := range s.vecs[i*wv.Dim : (i+1)*wv.Dim] {
				ss += float64(x) * float64(x)
			}
			if ss > 0 {
				s.norms[i] = float32(1 / math.Sqrt(ss))
			}
		}
		s.cache = map[string][]WordSimilarity{}
	})
	s.mu.Lock()
	got, ok := s.cache[word]
	s.mu.Unlock()
	if ok {
		return got
	}
	qi, ok := wv.Lookup(word)
	if !ok {
		return nil
	}
	q := wv.Vector(qi)
	if qi < s.vocab {
		q = s.vecs[qi*wv.Dim : (qi+1)*wv.Dim]
	}
	var qn float64
	for _, x := range q {
		qn += float64(x) * float64(x)
	}
	if qn == 0 {
		return nil
	}
	qinv := float32(1 / math.Sqrt(qn))
	// A bounded list of the best so far, kept sorted (ascending) so the worst is
	// at index 0.
	best := make([]WordSimilarity, 0, similarKeep+1)
	floor := float32(-2)
	dim := wv.Dim
	vecs := s.vecs
	for i := range s.vocab {
		if i == qi {
			continue
		}
		v := vecs[i*dim : (i+1)*dim : (i+1)*dim]
		var dot float32
		for j, x := range q {
			dot += x * v[j]
		}
		c := dot * qinv * s.norms[i]
		if len(best) == similarKeep && c <= floor {
			continue
		}
		at := sort.Search(len(best), func(j int) bool { return best[j].Similarity >= float64(c) })
		best = append(best, WordSimilarity{})
		copy(best[at+1:], best[at:])
		best[at] = WordSimilarity{Word: wv.Word(i), Similarity: float64(c)}
		if len(best) > similarKeep {
			best = best[1:]
		}
		if len(best) == similarKeep {
			floor = float32(best[0].Similarity)
		}
	}
	out := make([]WordSimilarity, len(best))
	for i, w := range best {
		out[len(best)-1-i] = w
	}
	s.mu.Lock()
	if len(s.cache) >= similarCacheSize {
		clear(s.cache)
	}
	s.cache[word] = out
	s.mu.Unlock()
	return out
}

// WordVector returns word's vector scaled to unit length and its SIF weight
// (rare words weigh more), or false when the word is not in the vocabulary.
func (g *GloVe) WordVector(word string) ([]float32, float64, bool) {
	i, ok := g.wv.Lookup(word)
	if !ok {
		return nil, 0, false
	}
	v := append([]float32(nil), g.wv.Vector(i)...)
	if !normalise(v) {
		return nil, 0, false
	}
	return v, float64(g.weight(i)), true
}
