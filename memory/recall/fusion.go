package recall

import "math"

// Scores maps candidate ids to one retriever's scores.
type Scores map[string]float64

// Neighbours returns the candidates before and after id in its sequence (a
// conversation's turns), nearest first.
type Neighbours func(id string) (before, after []string)

// Smooth returns each candidate's score plus the scores of its neighbours, the
// nearest on each side times beta, the next times beta·decay, and so on, for the
// candidates of s and their neighbours. A turn of a conversation is often found
// through the words of the turns around it ("What gave you the idea?" "I'm
// obsessed with those"): smoothing lets the evidence of one turn lift the ones
// beside it. lookup supplies the score of a neighbour that is not in s (nil: 0).
// beta <= 0 returns s unchanged.
func Smooth(s Scores, beta, decay float64, nb Neighbours, lookup func(id string) (float64, bool)) Scores {
	return SmoothReplies(s, beta, decay, 0, nil, nb, lookup)
}

// SmoothReplies is Smooth where a record right after one that asks a question
// (asks reports it) takes that record's score 1+reply times as much as another
// neighbour's: the turn after "Got any tips for getting started?" is the
// answer, and the question's words are its topic. reply <= 0 or a nil asks is
// Smooth.
func SmoothReplies(s Scores, beta, decay, reply float64, asks func(id string) bool, nb Neighbours, lookup func(id string) (float64, bool)) Scores {
	if beta <= 0 || nb == nil || len(s) == 0 {
		return s
	}
	// Each candidate's neighbours are asked for once and each looked-up score
	// computed once: a record is the neighbour of up to 2·window others, and
	// both lookups cost map walks (and, for vectors, a cosine) per call.
	nb = MemoNeighbours(nb)
	var looked map[string]float64
	if lookup != nil {
		looked = make(map[string]float64, 4*len(s))
	}
	score := func(id string) float64 {
		if v, ok := s[id]; ok {
			return v
		}
		if lookup == nil {
			return 0
		}
		if v, ok := looked[id]; ok {
			return v
		}
		v, ok := lookup(id)
		if !ok {
			v = 0
		}
		looked[id] = v
		return v
	}
	side := func(ids []string, before bool) float64 {
		t, w := 0.0, beta
		for i, id := range ids {
			m := 1.0
			if before && i == 0 && reply > 0 && asks != nil && asks(id) {
				m = 1 + reply
			}
			t += m * w * score(id)
			w *= decay
		}
		return t
	}
	out := make(Scores, 5*len(s))
	add := func(id string) {
		if _, done := out[id]; done {
			return
		}
		before, after := nb(id)
		out[id] = score(id) + side(before, true) + side(after, false)
	}
	for id := range s {
		add(id)
		before, after := nb(id)
		for _, n := range before {
			add(n)
		}
		for _, n := range after {
			add(n)
		}
	}
	return out
}

// MemoNeighbours returns nb answering each id from the first answer for it.
// One search asks for the same records' neighbours many times (each leg's
// candidates, their neighbours, the other leg's); the answers must not change
// while the memo is in use.
func MemoNeighbours(nb Neighbours) Neighbours {
	if nb == nil {
		return nil
	}
	type pair struct{ before, after []string }
	memo := map[string]pair{}
	return func(id string) ([]string, []string) {
		if p, ok := memo[id]; ok {
			return p.before, p.after
		}
		b, a := nb(id)
		memo[id] = pair{b, a}
		return b, a
	}
}

// MaxNormalize scales non-negative scores so that the best is 1 (BM25 scores,
// whose scale depends on the query).
func MaxNormalize(s Scores) Scores {
	best := 0.0
	for _, v := range s {
		best = math.Max(best, v)
	}
	out := make(Scores, len(s))
	for id, v := range s {
		out[id] = 0
		if best > 0 {
			out[id] = math.Max(v, 0) / best
		}
	}
	return out
}

// MinMaxNormalize scales scores to [0, 1] over the candidates (cosine
// similarities, which crowd together: an embedder's "unrelated" may be 0.6).
// Equal scores all become 1.
func MinMaxNormalize(s Scores) Scores {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range s {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	out := make(Scores, len(s))
	for id, v := range s {
		if hi > lo {
			out[id] = (v - lo) / (hi - lo)
		} else {
			out[id] = 1
		}
	}
	return out
}

// WeightedSum fuses normalised retriever scores: each candidate's score is the
// weighted sum of its score in every list (0 where a list lacks it). Ranks are
// each candidate's 1-based rank in every list by that list's score (0: absent).
// The result is ordered by score, then id.
func WeightedSum(weights []float64, lists ...Scores) []Fused {
	byID := map[string]*Fused{}
	var order []*Fused
	for li, l := range lists {
		w := 1.0
		if li < len(weights) {
			w = weights[li]
		}
		ranked := make([]Fused, 0, len(l))
		for id, v := range l {
			ranked = append(ranked, Fused{ID: id, Score: v})
		}
		SortByScore(ranked)
		for r, c := range ranked {
			f := byID[c.ID]
			if f == nil {
				f = &Fused{ID: c.ID, Ranks: make([]int, len(lists))}
				byID[c.ID] = f
				order = append(order, f)
			}
			f.Ranks[li] = r + 1
			f.Score += w * c.Score
		}
	}
	out := make([]Fused, len(order))
	for i, f := range order {
		out[i] = *f
	}
	SortByScore(out)
	return out
}

// Ranked turns scores into a list of ids, best first (ties by id).
func Ranked(s Scores) []string {
	fs := make([]Fused, 0, len(s))
	for id, v := range s {
		fs = append(fs, Fused{ID: id, Score: v})
	}
	SortByScore(fs)
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}
