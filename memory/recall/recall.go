// Package recall turns ranked candidate lists into the block of memories an agent
// reads: reciprocal rank fusion of the BM25 and vector lists, optional recency
// weighting, maximal marginal relevance (MMR) for diversity, and a token budget.
//
// It knows nothing about storage: candidates are ids with ranks, and similarity and
// age come from callbacks, so the same code ranks any source.
package recall

import (
	"math"
	"sort"
)

// DefaultK is the usual reciprocal rank fusion constant (Cormack et al., 2009): a
// document at rank r in a list earns 1/(k+r). A larger k flattens the advantage of
// the very top ranks.
const DefaultK = 60

// Fused is one candidate after fusion. Ranks are 1-based; 0 means "not in that list".
type Fused struct {
	ID    string
	Ranks []int // Ranks[i] is the rank in input list i
	Score float64
}

// RRF fuses ranked lists of ids (best first) by reciprocal rank fusion with
// constant k (DefaultK when k <= 0). Weights, if given, scale each list's
// contribution (default 1 each). Ties are broken by id so the order is
// deterministic.
func RRF(k float64, weights []float64, lists ...[]string) []Fused {
	if k <= 0 {
		k = DefaultK
	}
	byID := map[string]*Fused{}
	var order []*Fused
	for li, list := range lists {
		w := 1.0
		if li < len(weights) {
			w = weights[li]
		}
		for r, id := range list {
			f := byID[id]
			if f == nil {
				f = &Fused{ID: id, Ranks: make([]int, len(lists))}
				byID[id] = f
				order = append(order, f)
			}
			if f.Ranks[li] != 0 {
				continue // a duplicate within one list counts once, at its best rank
			}
			f.Ranks[li] = r + 1
			f.Score += w / (k + float64(r+1))
		}
	}
	out := make([]Fused, len(order))
	for i, f := range order {
		out[i] = *f
	}
	SortByScore(out)
	return out
}

// SortByScore orders candidates by descending score, then id.
func SortByScore(fs []Fused) {
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].Score != fs[j].Score {
			return fs[i].Score > fs[j].Score
		}
		return fs[i].ID < fs[j].ID
	})
}

// RecencyFactor weighs a score by age: a memory of age zero keeps its score, one
// half-life old keeps (1 - weight/2) of it, and very old ones tend to (1 - weight).
// weight is clamped to [0, 1]; a non-positive halfLife disables the weighting.
func RecencyFactor(ageSeconds, halfLifeSeconds, weight float64) float64 {
	if halfLifeSeconds <= 0 || weight <= 0 {
		return 1
	}
	weight = math.Min(weight, 1)
	if ageSeconds < 0 {
		ageSeconds = 0
	}
	decay := math.Exp2(-ageSeconds / halfLifeSeconds)
	return 1 - weight + weight*decay
}

// MMR picks up to n candidates from fs (already ordered by relevance) by maximal
// marginal relevance: each pick maximizes lambda*relevance - (1-lambda)*max
// similarity to the picks so far. Relevance is the candidate's score scaled to
// [0, 1] by the best score. sim(i, j) compares fs[i] and fs[j], in [0, 1].
// lambda = 1 keeps the relevance order.
func MMR(fs []Fused, n int, lambda float64, sim func(i, j int) float64) []Fused {
	if n > len(fs) {
		n = len(fs)
	}
	if n <= 0 {
		return nil
	}
	if lambda >= 1 {
		return append([]Fused(nil), fs[:n]...)
	}
	best := fs[0].Score
	for _, f := range fs {
		best = math.Max(best, f.Score)
	}
	rel := func(i int) float64 {
		if best <= 0 {
			return 0
		}
		return fs[i].Score / best
	}
	picked := make([]int, 0, n)
	used := make([]bool, len(fs))
	maxSim := make([]float64, len(fs)) // max similarity to the picks so far
	for len(picked) < n {
		bi, bv := -1, math.Inf(-1)
		for i := range fs {
			if used[i] {
				continue
			}
			v := lambda*rel(i) - (1-lambda)*maxSim[i]
			if v > bv {
				bi, bv = i, v
			}
		}
		used[bi] = true
		picked = append(picked, bi)
		for i := range fs {
			if !used[i] {
				maxSim[i] = math.Max(maxSim[i], sim(i, bi))
			}
		}
	}
	out := make([]Fused, len(picked))
	for i, p := range picked {
		out[i] = fs[p]
	}
	return out
}

// EstimateTokens is a model-free token estimate: about four bytes of English per
// token, rounded up. It over-counts slightly for plain prose, which is the safe
// side for a budget.
func EstimateTokens(s string) int {
	return (len(s) + 3) / 4
}

// Budget returns how many of the entries (in order) fit within budget tokens, where
// cost(i) is entry i's size. A non-positive budget means no limit. It stops at the
// first entry that does not fit, so the block keeps the ranking's order.
func Budget(count, budget int, cost func(i int) int) (n, used int) {
	for i := 0; i < count; i++ {
		c := cost(i)
		if budget > 0 && used+c > budget {
			break
		}
		used += c
		n++
	}
	return n, used
}
