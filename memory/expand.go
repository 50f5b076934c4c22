package memory

import (
	"strings"
	"unicode"

	"github.com/exocortex/exocortex/memory/recall"
)

// WordVectorEmbedder is an embedder that also has a vector per word (GloVe):
// the store uses it to match query and records word by word
// (SearchOptions.SoftMatch) and to expand the BM25 query with similar words
// (SearchOptions.Expand).
type WordVectorEmbedder interface {
	Embedder
	// WordVector returns the word's unit-length vector and its weight (rare
	// words weigh more), or false for a word it does not know.
	WordVector(word string) ([]float32, float64, bool)
	// SimilarWords returns up to k words whose vectors have cosine similarity at
	// least minSim with word's, most similar first.
	SimilarWords(word string, k int, minSim float64) []recall.WordSimilarity
}

// Retrieval by word similarity: defaults measured on the LoCoMo dev
// conversations (tuned on conv-26 and conv-30, checked on the other three;
// docs/perf/memory.md).
const (
	// DefaultSoftMatch is the weight of the word-by-word re-rank of the best
	// hybrid candidates, beside BM25's 1 (SearchOptions.SoftMatch).
	DefaultSoftMatch = 0.3
	// DefaultConversationSoftMatch is its weight on the records of a
	// conversation (a session), measured with the built-in vector table so
	// that no LoCoMo category falls below BM25 alone (docs/perf/memory.md,
	// "Fifth pass"); standalone records keep DefaultSoftMatch.
	DefaultConversationSoftMatch = 0.4
	// DefaultSoftMatchFloor is the least word similarity the re-rank counts:
	// below it, two words are not taken to mean related things.
	DefaultSoftMatchFloor = 0.6
	// softTop is how many of the best fused candidates the re-rank scores.
	softTop = 50
	// DefaultExpandMinSim and DefaultExpandBoost tune the expansion of the BM25
	// query with similar words, which is off by default (SearchOptions.Expand).
	DefaultExpandMinSim = 0.6
	DefaultExpandBoost  = 0.3
)

func (o SearchOptions) softMatch() float64 {
	switch {
	case o.SoftMatch < 0:
		return 0
	case o.SoftMatch == 0:
		return DefaultSoftMatch
	}
	return o.SoftMatch
}

func (o SearchOptions) softMatchFloor() float64 {
	if o.SoftMatchFloor == 0 {
		return DefaultSoftMatchFloor
	}
	return o.SoftMatchFloor
}

// queryWords returns the query's words worth matching by meaning, lower-cased
// and each once: not stop words, not names (a capitalised word other than the
// first, whose similar words are other names), not numbers.
func (s *Store) queryWords(query string) []string {
	var out []string
	seen := map[string]bool{}
	for i, w := range strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "'")
		if w == "" || (i > 0 && unicode.IsUpper([]rune(w)[0])) {
			continue
		}
		w = strings.ToLower(w)
		if strings.ContainsRune(w, '\'') || seen[w] || s.ft.IsStopWord(w) {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// softMatch scores ids by recall.SoftMatch against the query's content words,
// or returns nil when the embedder has no word vectors or the query no content
// word. The caller holds s.mu.
func (s *Store) softMatch(query string, ids []string, floor float64) recall.Scores {
	wv, ok := s.opts.Embedder.(WordVectorEmbedder)
	if !ok {
		return nil
	}
	var qs []recall.WordVector
	for _, w := range s.queryWords(query) {
		if v, wt, ok := wv.WordVector(w); ok {
			qs = append(qs, recall.WordVector{Vec: v, Weight: wt})
		}
	}
	if len(qs) == 0 {
		return nil
	}
	vecs := map[string][]float32{} // each distinct word's vector, once per search
	out := make(recall.Scores, len(ids))
	var text [][]float32
	for _, id := range ids {
		r := s.state.get(id)
		if r == nil {
			continue
		}
		text = text[:0]
		for _, tok := range strings.FieldsFunc(strings.ToLower(r.Text), func(r rune) bool { return !unicode.IsLetter(r) }) {
			v, ok := vecs[tok]
			if !ok {
				if !s.ft.IsStopWord(tok) {
					v, _, _ = wv.WordVector(tok)
				}
				vecs[tok] = v
			}
			if v != nil {
				text = append(text, v)
			}
		}
		out[id] = recall.SoftMatch(qs, text, floor)
	}
	return out
}

// expandQuery returns the expansion of the BM25 query with similar words
// (SearchOptions.Expand), or none.
func (s *Store) expandQuery(query string, o SearchOptions) recall.Expansion {
	we, ok := s.opts.Embedder.(WordVectorEmbedder)
	if !ok || o.Expand <= 0 {
		return recall.Expansion{}
	}
	minSim, boost := o.ExpandMinSim, o.ExpandBoost
	if minSim == 0 {
		minSim = DefaultExpandMinSim
	}
	if boost == 0 {
		boost = DefaultExpandBoost
	}
	inQuery := map[string]bool{}
	for t := range s.ft.Terms(query) {
		inQuery[t] = true
	}
	analyse := func(w string) []string {
		var out []string
		for t := range s.ft.Terms(w) {
			out = append(out, t)
		}
		return out
	}
	similar := func(w string) []recall.WordSimilarity { return we.SimilarWords(w, o.Expand, minSim) }
	return recall.ExpandWords(s.queryWords(query), similar, analyse, inQuery, boost)
}
