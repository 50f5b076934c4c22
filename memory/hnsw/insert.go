package hnsw

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

// greedy walks one layer to a local minimum: the one-candidate search used above the
// target layer.
func (c *core[K]) greedy(q []float32, cur cand, level int) cand {
	for changed := true; changed; {
		changed = false
		l := c.links(cur.id, level)
		cnt := min(int(atomic.LoadUint32(&l[0])), len(l)-1)
		for i := 1; i <= cnt; i++ {
			nb := atomic.LoadUint32(&l[i])
			if d := c.distQ(q, nb); d < cur.d {
				cur = cand{d, nb}
				changed = true
			}
		}
	}
	return cur
}

// searchLayer is the paper's SEARCH-LAYER: best-first search from eps keeping the
// ef nearest nodes in s.res. Deleted nodes are followed but, with skipDead, never
// become results. self (or noSlot) is treated as already visited.
func (c *core[K]) searchLayer(s *searcher, q []float32, eps []cand, ef, level int, skipDead bool, self uint32) {
	s.vis.reset(c.n)
	if self != noSlot {
		s.vis.visit(self)
	}
	s.cands = s.cands[:0]
	s.res = s.res[:0]
	for _, e := range eps {
		if !s.vis.visit(e.id) {
			continue
		}
		s.cands.push(e)
		if !skipDead || !c.isDead(e.id) {
			s.res.push(e)
			if len(s.res) > ef {
				s.res.pop()
			}
		}
	}
	for len(s.cands) > 0 {
		cur := s.cands.pop()
		if len(s.res) >= ef && cur.d > s.res[0].d {
			break
		}
		l := c.links(cur.id, level)
		cnt := min(int(atomic.LoadUint32(&l[0])), len(l)-1)
		// Collect the unvisited neighbours and prefetch their vectors first, so
		// their memory loads overlap.
		ids := s.ids[:0]
		for i := 1; i <= cnt; i++ {
			nb := atomic.LoadUint32(&l[i])
			if s.vis.visit(nb) {
				ids = append(ids, nb)
				prefetch(&c.vecs[int(nb)*c.dim], c.dim)
			}
		}
		s.ids = ids
		for _, nb := range ids {
			d := c.distQ(q, nb)
			if len(s.res) < ef || d < s.res[0].d {
				s.cands.push(cand{d, nb})
				if skipDead && c.isDead(nb) {
					continue
				}
				s.res.push(cand{d, nb})
				if len(s.res) > ef {
					s.res.pop()
				}
			}
		}
	}
}

// selectNeighbours is the paper's heuristic (algorithm 4): walk the candidates from
// nearest, keeping one only if it is nearer to the base than to every one kept.
// cands must be sorted by distance to the base.
func (c *core[K]) selectNeighbours(cands []cand, m int, out []cand) []cand {
	out = out[:0]
	if len(cands) <= m {
		return append(out, cands...)
	}
	for i, e := range cands {
		if len(out) >= m {
			break
		}
		if i+1 < len(cands) {
			prefetch(&c.vecs[int(cands[i+1].id)*c.dim], c.dim)
		}
		ev := c.vec(e.id)
		good := true
		for _, r := range out {
			if c.distQ(ev, r.id) < e.d {
				good = false
				break
			}
		}
		if good {
			out = append(out, e)
		}
	}
	return out
}

// setLinks replaces a slot's list on one layer. Readers may see the list half
// rewritten; every id in it is a valid slot, which is all a search needs.
func (c *core[K]) setLinks(id uint32, level int, sel []cand) {
	mu := c.lockFor(id)
	mu.Lock()
	l := c.links(id, level)
	for i, x := range sel {
		atomic.StoreUint32(&l[i+1], x.id)
	}
	atomic.StoreUint32(&l[0], uint32(len(sel)))
	mu.Unlock()
}

// link adds a back-link from e to id (at distance d), shrinking e's list with the
// heuristic when it is full.
func (c *core[K]) link(s *searcher, e, id uint32, d float32, level int) {
	mu := c.lockFor(e)
	mu.Lock()
	defer mu.Unlock()
	l := c.links(e, level)
	limit := c.maxLinks(level)
	cnt := int(l[0])
	for i := 1; i <= cnt; i++ {
		if l[i] == id {
			return
		}
	}
	if cnt < limit {
		atomic.StoreUint32(&l[cnt+1], id)
		atomic.StoreUint32(&l[0], uint32(cnt+1))
		return
	}
	ev := c.vec(e)
	for i := 1; i <= cnt; i++ {
		prefetch(&c.vecs[int(l[i])*c.dim], c.dim)
	}
	s.tmp = s.tmp[:0]
	for i := 1; i <= cnt; i++ {
		nb := l[i]
		if c.isDead(nb) {
			continue
		}
		s.tmp = append(s.tmp, cand{c.distQ(ev, nb), nb})
	}
	s.tmp = append(s.tmp, cand{d, id})
	slices.SortFunc(s.tmp, func(a, b cand) int { return cmp.Compare(a.d, b.d) })
	s.sel = c.selectNeighbours(s.tmp, limit, s.sel)
	for i, x := range s.sel {
		atomic.StoreUint32(&l[i+1], x.id)
	}
	atomic.StoreUint32(&l[0], uint32(len(s.sel)))
}

// insert links a placed slot into the graph (the paper's INSERT).
func (c *core[K]) insert(s *searcher, id uint32) {
	level := int(c.levels[id])
	q := c.vec(id)
	ep, top, ok := c.loadEntry()
	locked := false
	if !ok || level > top {
		// This node may become the entry point: hold the entry lock for the whole
		// insert so two nodes cannot both raise the top layer.
		c.entryMu.Lock()
		locked = true
		ep, top, ok = c.loadEntry()
		if !ok {
			c.storeEntry(id, level)
			c.entryMu.Unlock()
			return
		}
		if level <= top {
			c.entryMu.Unlock()
			locked = false
		}
	}
	cur := cand{c.distQ(q, ep), ep}
	for l := top; l > level; l-- {
		cur = c.greedy(q, cur, l)
	}
	s.eps = append(s.eps[:0], cur)
	for l := min(level, top); l >= 0; l-- {
		c.searchLayer(s, q, s.eps, c.efc, l, true, id)
		s.sorted = s.res.drainSorted(s.sorted[:0])
		if len(s.sorted) == 0 {
			// Everything reachable is deleted: link to the waypoints rather than
			// leave the node unreachable; the next rebuild cleans up.
			s.sorted = append(s.sorted, s.eps...)
		}
		s.sel = c.selectNeighbours(s.sorted, c.m, s.sel)
		c.setLinks(id, l, s.sel)
		// link reuses s.sel and s.tmp, so walk a copy of the selection.
		s.pairs = append(s.pairs[:0], s.sel...)
		s.eps = append(s.eps[:0], s.sorted...)
		for _, x := range s.pairs {
			c.link(s, x.id, id, x.d, l)
		}
	}
	if locked {
		if level > top {
			c.storeEntry(id, level)
		}
		c.entryMu.Unlock()
	}
}

// insertRange links slots [from, to), on several goroutines when the range is large.
func (c *core[K]) insertRange(s *searcher, from, to uint32, workers int) {
	n := int(to - from)
	if n <= 0 {
		return
	}
	if workers <= 1 || n < 256*workers {
		for id := from; id < to; id++ {
			if !c.isDead(id) {
				c.insert(s, id)
			}
		}
		return
	}
	// Insert the first slots alone so the workers start from a connected graph.
	head := from + uint32(min(n, 64))
	for id := from; id < head; id++ {
		if !c.isDead(id) {
			c.insert(s, id)
		}
	}
	var next atomic.Uint32
	next.Store(head)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			s := newSearcher()
			for {
				id := next.Add(1) - 1
				if id >= to {
					return
				}
				if !c.isDead(id) {
					c.insert(s, id)
				}
			}
		})
	}
	wg.Wait()
}

// repair fixes the links that pointed at a deleted slot: each live neighbour that
// linked to it re-selects its links among its other neighbours and the deleted
// slot's neighbours.
func (c *core[K]) repair(s *searcher, dead uint32) {
	for level := 0; level <= int(c.levels[dead]); level++ {
		l := c.links(dead, level)
		cnt := min(int(atomic.LoadUint32(&l[0])), len(l)-1)
		around := make([]uint32, 0, cnt)
		for i := 1; i <= cnt; i++ {
			around = append(around, atomic.LoadUint32(&l[i]))
		}
		for _, n := range around {
			if !c.isDead(n) {
				c.relink(s, n, dead, around, level)
			}
		}
	}
}

func (c *core[K]) relink(s *searcher, n, dead uint32, around []uint32, level int) {
	mu := c.lockFor(n)
	mu.Lock()
	defer mu.Unlock()
	l := c.links(n, level)
	cnt := int(l[0])
	if !slices.Contains(l[1:cnt+1], dead) {
		return
	}
	nv := c.vec(n)
	s.tmp = s.tmp[:0]
	seen := func(id uint32) bool {
		for _, x := range s.tmp {
			if x.id == id {
				return true
			}
		}
		return false
	}
	for i := 1; i <= cnt; i++ {
		nb := l[i]
		if nb != dead && !c.isDead(nb) && !seen(nb) {
			s.tmp = append(s.tmp, cand{c.distQ(nv, nb), nb})
		}
	}
	for _, nb := range around {
		if nb != n && !c.isDead(nb) && !seen(nb) {
			s.tmp = append(s.tmp, cand{c.distQ(nv, nb), nb})
		}
	}
	slices.SortFunc(s.tmp, func(a, b cand) int { return cmp.Compare(a.d, b.d) })
	s.sel = c.selectNeighbours(s.tmp, c.maxLinks(level), s.sel)
	for i, x := range s.sel {
		atomic.StoreUint32(&l[i+1], x.id)
	}
	atomic.StoreUint32(&l[0], uint32(len(s.sel)))
}
