package recall

// WordVector is one word's unit-length vector and its weight in the query
// (rare words weigh more).
type WordVector struct {
	Vec    []float32
	Weight float64
}

// SoftMatch scores a text against a query by meaning, word by word: for each
// query word, the best cosine similarity of any of the text's word vectors
// (all unit length), counted when it reaches floor, times the query word's
// weight; the sum over the query's words. Unlike an average of the vectors,
// one word of the text that is close to one of the query's ("clarinet" to
// "instruments", "pottery" to "activities") counts fully, whatever else the
// text says.
func SoftMatch(query []WordVector, text [][]float32, floor float64) float64 {
	total := 0.0
	for _, q := range query {
		best := -1.0
		for _, v := range text {
			var dot float32
			for j, x := range q.Vec {
				dot += x * v[j]
			}
			best = max(best, float64(dot))
		}
		if best >= floor {
			total += q.Weight * best
		}
	}
	return total
}
