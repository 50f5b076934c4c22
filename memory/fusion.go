package memory

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/exocortex/exocortex/memory/fulltext"
	"github.com/exocortex/exocortex/memory/recall"
)

// fusedHit is one fused candidate: its fused score (Score, then recency-weighted
// by Search), the fused score before recency, the part of it that came from
// the records around it, and the part from words close in meaning.
type fusedHit struct {
	id     string
	score  float64
	raw    float64
	lifted float64
	soft   float64 // the part of raw from the word-similarity re-rank
	named  float64 // the part of raw from the named-speaker prior
	asks   float64 // what raw lost for asking a question
}

// byFusedScore orders fused candidates best first, ties by id (recall.SortByScore's
// order, a total one: ids are unique).
func byFusedScore(a, b fusedHit) int {
	if a.score != b.score {
		return cmp.Compare(b.score, a.score)
	}
	return strings.Compare(a.id, b.id)
}

// fuseHits fuses the legs' candidates and returns every fused candidate (best
// first from the reference, in no order from the fast path). Score fusion (the default) runs on fuseScratch, with the same sums in
// the same order as recall.Smooth and recall.WeightedSum over maps (fuseRef,
// which rank fusion still uses): TestFastFusionEqualsReference holds them to the
// same ids and bit-identical scores.
// The hits are valid until release is called.
//
// A hybrid search (the vector leg ran) then re-ranks the best candidates by
// how closely their words match the query's in meaning (softRerank).
func (s *Store) fuseHits(query string, o SearchOptions, bm25IDs []string, bm25 map[string]fulltext.Hit, vecIDs []string, sims map[string]float64, qvec []float32) (hits []fusedHit, release func()) {
	if o.Fusion == FusionRRF || s.refFusion {
		hits, release = s.fuseRef(query, o, bm25IDs, bm25, vecIDs, sims, qvec), func() {}
	} else {
		hits, release = s.fuseFast(query, o, bm25IDs, bm25, vecIDs, sims, qvec)
	}
	if soft := o.softMatch(); soft > 0 && qvec != nil && o.Mode != ModeVector {
		s.softRerank(query, o, hits, soft)
	}
	if ws, wq := o.speakerPrior(), o.questionPenalty(); ws > 0 || wq > 0 {
		s.turnRerank(query, hits, ws, o.speakerLead(), wq)
	}
	return hits, release
}

// softRerank adds to the fused score of the softTop best hits soft times
// their word-by-word match with the query (Store.softMatch, over the best of
// them). It leaves hits in no particular order.
func (s *Store) softRerank(query string, o SearchOptions, hits []fusedHit, soft float64) {
	n := min(len(hits), softTop)
	if n == 0 {
		return
	}
	bestFirst(hits, n)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = hits[i].id
	}
	s.mu.RLock()
	sm := s.softMatch(query, ids, o.softMatchFloor())
	s.mu.RUnlock()
	if sm == nil {
		return
	}
	sm = recall.MaxNormalize(sm)
	conv := soft
	if o.SoftMatch == 0 {
		conv = DefaultConversationSoftMatch
	}
	for i := range n {
		h := &hits[i]
		w := soft
		if conv != soft {
			s.mu.RLock()
			if inConversation(s.state.get(h.id)) {
				w = conv
			}
			s.mu.RUnlock()
		}
		h.soft = w * sm[h.id]
		h.score += h.soft
		h.raw += h.soft
	}
}

// fuseRef is fuse's answer as fusedHits.
func (s *Store) fuseRef(query string, o SearchOptions, bm25IDs []string, bm25 map[string]fulltext.Hit, vecIDs []string, sims map[string]float64, qvec []float32) []fusedHit {
	fused, raw, lifted := s.fuse(query, o, bm25IDs, bm25, vecIDs, sims, qvec)
	out := make([]fusedHit, len(fused))
	for i, f := range fused {
		out[i] = fusedHit{id: f.ID, score: f.Score, raw: raw[f.ID], lifted: lifted[f.ID]}
	}
	return out
}

// The legs, as indexes of fnode's per-leg fields.
const (
	legBM25 = iota
	legVector
)

// fnode is one record the fusion looks at: a candidate of either leg, or a
// neighbour (or a neighbour's neighbour) of one.
type fnode struct {
	id  string
	rec *Record // the order's record at pos; nil when deleted or not in the order
	pos int32   // place in the order, -1 when not in it
	// Neighbours: fuseScratch.nbs[nb : nb+nbB] before (nearest first), then nbA
	// after; walked says they were found.
	nb, nbB, nbA int32
	walked       bool
	asked        int8       // 0 not yet known, 1 the record asks a question, -1 not
	looked       bool       // vlook is computed
	vlook        float64    // a non-candidate's vector score from its stored vector
	in           [2]bool    // a candidate of the leg
	own          [2]float64 // the leg's own normalised (and boosted) score
	has          [2]bool    // in the leg's smoothed list
	sm           [2]float64 // smoothed score
}

// fuseScratch is one search's working space, kept in the order's pool: nodes are
// found by their place in the order through slot, not through maps keyed by id.
type fuseScratch struct {
	slot  []int32 // order position -> 1 + index in nodes (0: none)
	nodes []fnode
	nbs   []int32    // neighbour lists (indexes in nodes)
	extra []int32    // nodes not in the order (indexes in nodes)
	lists [2][]int32 // each leg's smoothed list, in the order first reached
	vbuf  []float32
	hits  []fusedHit
}

// reset clears the slots this search used, so the scratch can be reused.
func (fs *fuseScratch) reset() {
	for _, n := range fs.nodes {
		if n.pos >= 0 {
			fs.slot[n.pos] = 0
		}
	}
	clear(fs.nodes) // drop the record pointers
	clear(fs.hits)
	fs.nodes, fs.nbs, fs.extra, fs.hits = fs.nodes[:0], fs.nbs[:0], fs.extra[:0], fs.hits[:0]
	fs.lists[0], fs.lists[1] = fs.lists[0][:0], fs.lists[1][:0]
}

// at returns the node of order position p, making it.
func (fs *fuseScratch) at(o *order, p int) int32 {
	if k := fs.slot[p]; k != 0 {
		return k - 1
	}
	id, rec := o.at(p)
	fs.nodes = append(fs.nodes, fnode{id: id, rec: rec, pos: int32(p)})
	k := int32(len(fs.nodes) - 1)
	fs.slot[p] = k + 1
	return k
}

// candidate returns the node of a leg's candidate id.
func (fs *fuseScratch) candidate(o *order, id string) int32 {
	if p, ok := o.place(id); ok {
		return fs.at(o, p)
	}
	// The indexes may briefly hold a record the order does not: no neighbours.
	for _, k := range fs.extra {
		if fs.nodes[k].id == id {
			return k
		}
	}
	fs.nodes = append(fs.nodes, fnode{id: id, pos: -1, walked: true})
	k := int32(len(fs.nodes) - 1)
	fs.extra = append(fs.extra, k)
	return k
}

// walk finds node k's neighbours as order.neighbours does: up to w active
// records on each side in the same area and session, nearest first, stepping
// over at most maxNeighbourGap others.
func (fs *fuseScratch) walk(o *order, k int32, w int) {
	n := &fs.nodes[k]
	if n.walked {
		return
	}
	n.walked = true
	n.nb = int32(len(fs.nbs))
	r := n.rec
	if r == nil || w <= 0 {
		return
	}
	sess := sessionOf(r)
	if sess == "" {
		return // a note outside any exchange stands alone
	}
	i := int(n.pos)
	side := func(dir int) int32 {
		found := int32(0)
		for j, gap := i+dir, 0; j >= 0 && j < o.size() && gap <= maxNeighbourGap && int(found) < w; j += dir {
			x := o.rec(j)
			if x == nil || x.Area != r.Area || x.Status != StatusActive {
				gap++
				continue
			}
			if sessionOf(x) != sess {
				break
			}
			fs.nbs = append(fs.nbs, fs.at(o, j))
			found++
		}
		return found
	}
	b := side(-1)
	a := side(1)
	n = &fs.nodes[k] // at may have moved the nodes
	n.nbB, n.nbA = b, a
}

// asks reports whether node k's record asks a question (asksQuestion), once
// per node.
func (fs *fuseScratch) asks(k int32) bool {
	n := &fs.nodes[k]
	if n.asked == 0 {
		n.asked = -1
		if n.rec != nil && asksQuestion(n.rec.Text) {
			n.asked = 1
		}
	}
	return n.asked > 0
}

// neighbours returns node k's neighbours found by walk.
func (fs *fuseScratch) neighbours(k int32) (before, after []int32) {
	n := &fs.nodes[k]
	return fs.nbs[n.nb : n.nb+n.nbB], fs.nbs[n.nb+n.nbB : n.nb+n.nbB+n.nbA]
}

// fuseFast is fuse's score fusion on a fuseScratch. It returns the fused
// candidates best first, valid until release is called. The caller does not hold
// s.mu.
func (s *Store) fuseFast(query string, o SearchOptions, bm25IDs []string, bm25 map[string]fulltext.Hit, vecIDs []string, sims map[string]float64, qvec []float32) (hits []fusedHit, release func()) {
	wb, wvAlone, wconv := s.vectorWeights(o)
	beta := o.Context
	if beta == 0 {
		beta = DefaultContext
	}
	beta = max(beta, 0)
	decay := o.ContextDecay
	if decay == 0 {
		decay = DefaultContextDecay
	}
	w := o.ContextWindow
	if w == 0 {
		w = DefaultContextWindow
	}
	if beta <= 0 {
		w = 0 // no context: every candidate stands alone
	}

	s.mu.RLock()
	defer s.mu.RUnlock()
	ord := &s.ord
	ord.ensure(s.state)
	// From here the order changes only under s.mu held for writing (created,
	// deleted), so it is read without its own lock.
	fs := ord.scratch()

	// BM25: scores over the best (recall.MaxNormalize).
	best := 0.0
	for _, id := range bm25IDs {
		best = math.Max(best, bm25[id].Score)
	}
	for _, id := range bm25IDs {
		n := &fs.nodes[fs.candidate(ord, id)]
		n.in[legBM25] = true
		n.own[legBM25] = 0
		if best > 0 {
			n.own[legBM25] = math.Max(bm25[id].Score, 0) / best
		}
	}
	// Vectors: similarities scaled to [0, 1] over the candidates; a neighbour
	// outside them is scored from its stored vector on the same scale.
	lo, hi := 1.0, -1.0
	for _, id := range vecIDs {
		lo, hi = min(lo, sims[id]), max(hi, sims[id])
	}
	scale := func(sim float64) float64 {
		if hi <= lo {
			return 1
		}
		return max(0, (sim-lo)/(hi-lo))
	}
	for _, id := range vecIDs {
		n := &fs.nodes[fs.candidate(ord, id)]
		n.in[legVector] = true
		n.own[legVector] = scale(sims[id])
	}
	if o.SpeakerBoost > 0 {
		s.boostNodes(query, o.SpeakerBoost, fs)
	}
	ncand := int32(len(fs.nodes))

	score := func(leg int, k int32) float64 {
		n := &fs.nodes[k]
		if n.in[leg] {
			return n.own[leg]
		}
		if leg == legBM25 || qvec == nil {
			return 0 // a neighbour outside the BM25 candidates did not match (or barely)
		}
		if !n.looked {
			n.looked, n.vlook = true, 0
			if r := n.rec; r != nil {
				v, ok := s.vec.lookupInto(n.id, r.Area, fs.vbuf)
				fs.vbuf = v
				if ok {
					n.vlook = scale(cosine(qvec, v))
				}
			}
		}
		return n.vlook
	}
	// recall.Smooth for each leg: every candidate and every neighbour of one gets
	// its own score plus its neighbours', the nearest on each side times beta,
	// the next times beta·decay.
	// A record right after a question takes its score 1+reply times
	// (recall.SmoothReplies); asked caches each node's answer.
	reply := o.contextReply()
	side := func(leg int, ks []int32, before bool) float64 {
		t, wt := 0.0, beta
		for i, k := range ks {
			m := 1.0
			if before && i == 0 && reply > 0 && fs.asks(k) {
				m = 1 + reply
			}
			t += m * wt * score(leg, k)
			wt *= decay
		}
		return t
	}
	add := func(leg int, k int32) {
		if fs.nodes[k].has[leg] {
			return
		}
		fs.walk(ord, k, w)
		before, after := fs.neighbours(k)
		v := score(leg, k) + side(leg, before, true) + side(leg, after, false)
		n := &fs.nodes[k]
		n.has[leg], n.sm[leg] = true, v
		fs.lists[leg] = append(fs.lists[leg], k)
	}
	for leg := range 2 {
		for k := range ncand {
			if !fs.nodes[k].in[leg] {
				continue
			}
			add(leg, k)
			before, after := fs.neighbours(k)
			for _, nb := range before {
				add(leg, nb)
			}
			for _, nb := range after {
				add(leg, nb)
			}
		}
	}

	// recall.WeightedSum: wb·bsm + wv·vsm, a list lacking a record counting 0.
	emit := func(k int32) {
		n := &fs.nodes[k]
		wv := wvAlone
		if inConversation(n.rec) {
			wv = wconv
		}
		f := wb*n.sm[legBM25] + wv*n.sm[legVector]
		h := fusedHit{id: n.id, score: f, raw: f}
		if c := wb*(n.sm[legBM25]-n.own[legBM25]) + wv*(n.sm[legVector]-n.own[legVector]); c > 0 {
			h.lifted = c
		}
		fs.hits = append(fs.hits, h)
	}
	for _, k := range fs.lists[legBM25] {
		emit(k)
	}
	for _, k := range fs.lists[legVector] {
		if !fs.nodes[k].has[legBM25] {
			emit(k)
		}
	}
	// Search orders only the few it needs (bestFirst).
	return fs.hits, func() { ord.release(fs) }
}

// bestFirst moves the n best of hs (byFusedScore) to its front, best first,
// leaving the rest after them in no order: a top-n selection through a heap,
// where sorting all the fused candidates (about a thousand per search) would
// compare every one of them log n times.
func bestFirst(hs []fusedHit, n int) {
	if n <= 0 {
		return
	}
	if n >= len(hs)/4 {
		slices.SortFunc(hs, byFusedScore)
		return
	}
	// hs[:n] is a heap whose root is the worst of the best n so far.
	top := hs[:n]
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= n {
				return
			}
			if c+1 < n && byFusedScore(top[c+1], top[c]) > 0 {
				c++
			}
			if byFusedScore(top[c], top[i]) <= 0 {
				return
			}
			top[i], top[c] = top[c], top[i]
			i = c
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		down(i)
	}
	for i := n; i < len(hs); i++ {
		if byFusedScore(hs[i], top[0]) < 0 {
			hs[i], top[0] = top[0], hs[i]
			down(0)
		}
	}
	slices.SortFunc(top, byFusedScore)
}

// boostNodes applies boostSpeakers to the candidates' own scores. The caller
// holds s.mu.
func (s *Store) boostNodes(query string, boost float64, fs *fuseScratch) {
	for leg := range 2 {
		sc := recall.Scores{}
		for _, n := range fs.nodes {
			if n.in[leg] {
				sc[n.id] = n.own[leg]
			}
		}
		s.boostSpeakers(query, boost, sc)
		for i := range fs.nodes {
			if n := &fs.nodes[i]; n.in[leg] {
				n.own[leg] = sc[n.id]
			}
		}
	}
}
