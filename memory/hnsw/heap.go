package hnsw

// cand is a node slot with its distance to the query.
type cand struct {
	d  float32
	id uint32
}

// minHeap pops the nearest candidate first (the frontier of a search).
type minHeap []cand

func (h *minHeap) push(c cand) {
	s := append(*h, c)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].d <= c.d {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = c
	*h = s
}

func (h *minHeap) pop() cand {
	s := *h
	top := s[0]
	n := len(s) - 1
	last := s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		if r := l + 1; r < n && s[r].d < s[l].d {
			l = r
		}
		if last.d <= s[l].d {
			break
		}
		s[i] = s[l]
		i = l
	}
	if n > 0 {
		s[i] = last
	}
	*h = s
	return top
}

// maxHeap keeps the best ef results with the furthest on top, so the worst result
// can be compared and replaced in O(log ef).
type maxHeap []cand

func (h *maxHeap) push(c cand) {
	s := append(*h, c)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].d >= c.d {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = c
	*h = s
}

func (h *maxHeap) pop() cand {
	s := *h
	top := s[0]
	n := len(s) - 1
	last := s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		if r := l + 1; r < n && s[r].d > s[l].d {
			l = r
		}
		if last.d >= s[l].d {
			break
		}
		s[i] = s[l]
		i = l
	}
	if n > 0 {
		s[i] = last
	}
	*h = s
	return top
}

// drainSorted empties the heap into dst in ascending distance order.
func (h *maxHeap) drainSorted(dst []cand) []cand {
	n := len(*h)
	start := len(dst)
	for range n {
		dst = append(dst, cand{})
	}
	for i := n - 1; i >= 0; i-- {
		dst[start+i] = h.pop()
	}
	return dst
}

// visitSet marks slots seen during one search. Clearing is O(1): each search uses a
// new generation number, and the marks are only zeroed when the counter wraps.
type visitSet struct {
	gen   uint16
	marks []uint16
}

func (v *visitSet) reset(n int) {
	if len(v.marks) < n {
		v.marks = make([]uint16, n+n/4+64)
		v.gen = 0
	}
	v.gen++
	if v.gen == 0 {
		clear(v.marks)
		v.gen = 1
	}
}

// visit marks id and reports whether it was unmarked.
func (v *visitSet) visit(id uint32) bool {
	if v.marks[id] == v.gen {
		return false
	}
	v.marks[id] = v.gen
	return true
}
