package recall

import "sort"

// WordSimilarity is a word and how close it is in meaning to another (cosine
// similarity of word vectors).
type WordSimilarity struct {
	Word       string
	Similarity float64
}

// Expansion is a set of index terms added to a query, each with its weight
// relative to a word of the query.
type Expansion struct {
	Terms   []string
	Weights []float64
}

// ExpandWords expands a query by meaning: each of its words gets its similar
// words (similar returns them, most similar first), analysed into index terms
// as the index analyses text (analyse: lower case, stemming, stop words gone),
// each weighted boost times its similarity. Terms of the query itself are left
// out (they already count fully), and a term reached from several query words
// keeps its highest weight. A set question ("What instruments does Melanie
// play?") names a category whose members (clarinet, violin) share no word with
// it; the similar words let BM25 find some of them. The terms come out by
// descending weight, then alphabetically.
func ExpandWords(words []string, similar func(string) []WordSimilarity, analyse func(string) []string, inQuery map[string]bool, boost float64) Expansion {
	if boost <= 0 || similar == nil {
		return Expansion{}
	}
	weight := map[string]float64{}
	for _, w := range words {
		for _, s := range similar(w) {
			for _, t := range analyse(s.Word) {
				if inQuery[t] {
					continue
				}
				weight[t] = max(weight[t], boost*s.Similarity)
			}
		}
	}
	var e Expansion
	for t := range weight {
		e.Terms = append(e.Terms, t)
	}
	sort.Slice(e.Terms, func(i, j int) bool {
		a, b := e.Terms[i], e.Terms[j]
		if weight[a] != weight[b] {
			return weight[a] > weight[b]
		}
		return a < b
	})
	e.Weights = make([]float64, len(e.Terms))
	for i, t := range e.Terms {
		e.Weights[i] = weight[t]
	}
	return e
}
