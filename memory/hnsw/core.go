package hnsw

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
)

// core is one generation of the graph. Per-slot data (vector, norm, key, level,
// upper-layer list allocation) is written once, under the graph's write lock, before
// the slot can be reached; link lists and tombstones change afterwards and are read
// and written atomically.
type core[K cmp.Ordered] struct {
	dim    int
	kind   distKind
	custom DistanceFunc
	m, m0  int
	ml     float64
	efc    int

	vecs   []float32 // slot i at [i*dim, (i+1)*dim); unit length for cosine
	norms  []float32 // original length of each vector (cosine), else 1
	levels []uint8   // top layer of each slot
	l0     []uint32  // layer 0, m0+1 words per slot: count, then ids
	// The upper layers: slot id's layers 1..level are level×(m+1) words
	// (per layer a count, then ids) of up from upOff[id]. A new slot's words
	// are appended to up (under the write lock, no insert running).
	upOff []uint32
	up    []uint32
	// Keys (keys.go): slots below kbase have theirs in the key section of the
	// file they were imported from (ksect, string keys located by the kbase
	// u64 offsets of koffs), the others in keys[id-kbase].
	kk    reflect.Kind
	kbase int
	ksect []byte
	koffs []byte
	keys  []K
	dead  []uint32 // 1 once deleted
	n     int      // slots in use

	byKey keyIndex[K] // live keys only
	live  int
	tombs int

	// backing is what owns memory the arrays were imported in place from
	// (ImportBytes' keep): held so that it lives as long as this core.
	backing any

	entry   atomic.Uint64 // 1<<63 | level<<32 | slot, or 0 when empty
	entryMu sync.Mutex    // held by an insert that raises the top layer
	locks   *[lockStripes]sync.Mutex
}

func (c *core[K]) init() {
	c.kk = keyKind[K]()
	c.byKey = newKeyIndex[K](0)
	c.locks = new([lockStripes]sync.Mutex)
}

func (c *core[K]) emptyLike() *core[K] {
	nc := &core[K]{dim: c.dim, kind: c.kind, custom: c.custom, m: c.m, m0: c.m0, ml: c.ml, efc: c.efc}
	nc.init()
	return nc
}

// grow makes room for n slots. Called under the graph's write lock, with no insert
// running, so copying the link arrays is safe.
func (c *core[K]) grow(n int) {
	if n <= len(c.norms) {
		return
	}
	// Grow by a quarter, not double: the vectors dominate memory, and a quarter
	// still amortises the copies.
	c.resize(max(n, len(c.norms)+len(c.norms)/4, 64))
}

// resize sets the number of slots the arrays hold (never below c.n).
func (c *core[K]) resize(capacity int) {
	capacity = max(capacity, c.n)
	c.vecs = slices.Grow(c.vecs[:c.n*c.dim], (capacity-c.n)*c.dim)[:capacity*c.dim]
	c.norms = slices.Grow(c.norms[:c.n], capacity-c.n)[:capacity]
	c.keys = slices.Grow(c.keys[:c.n-c.kbase], capacity-c.n)[:capacity-c.kbase]
	c.levels = slices.Grow(c.levels[:c.n], capacity-c.n)[:capacity]
	c.upOff = slices.Grow(c.upOff[:c.n], capacity-c.n)[:capacity]
	c.dead = slices.Grow(c.dead[:c.n], capacity-c.n)[:capacity]
	stride := c.m0 + 1
	c.l0 = slices.Grow(c.l0[:c.n*stride], (capacity-c.n)*stride)[:capacity*stride]
}

// check rejects a vector the graph cannot index.
func (c *core[K]) check(v []float32) error {
	if len(v) != c.dim {
		return fmt.Errorf("vector has %d dimensions, the index holds %d", len(v), c.dim)
	}
	var ss float64
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return errors.New("vector contains NaN or Inf")
		}
		ss += float64(x) * float64(x)
	}
	if c.kind == distCosine && ss == 0 {
		return errors.New("zero vector has no direction for cosine distance")
	}
	return nil
}

// place writes a new slot's data and returns its number. Under the write lock.
func (c *core[K]) place(key K, v []float32, level int) uint32 {
	norm := float32(1)
	if c.kind == distCosine {
		norm = float32(math.Sqrt(float64(dot(v, v))))
	}
	id := c.placeNormalised(key, v, norm, level)
	if c.kind == distCosine {
		inv := 1 / norm
		dst := c.vec(id)
		for i := range dst {
			dst[i] *= inv
		}
	}
	return id
}

func (c *core[K]) placeNormalised(key K, v []float32, norm float32, level int) uint32 {
	id := uint32(c.n)
	c.n++
	if v != nil {
		copy(c.vecs[int(id)*c.dim:], v[:c.dim])
	}
	c.norms[id] = norm
	c.keys[int(id)-c.kbase] = key
	c.levels[id] = uint8(level)
	c.dead[id] = 0
	c.upOff[id] = uint32(len(c.up))
	if level > 0 {
		c.up = append(c.up, make([]uint32, level*(c.m+1))...)
	}
	stride := c.m0 + 1
	clear(c.l0[int(id)*stride : int(id+1)*stride])
	return id
}

// kill marks a slot deleted. Under the write lock.
func (c *core[K]) kill(id uint32) {
	atomic.StoreUint32(&c.dead[id], 1)
	c.live--
	c.tombs++
}

func (c *core[K]) isDead(id uint32) bool { return atomic.LoadUint32(&c.dead[id]) != 0 }

func (c *core[K]) vec(id uint32) []float32 {
	o := int(id) * c.dim
	return c.vecs[o : o+c.dim : o+c.dim]
}

// original returns a copy of a slot's vector at its original length.
func (c *core[K]) original(id uint32) Vector { return c.originalInto(id, nil) }

// originalInto is original writing into dst's storage when it is long enough.
func (c *core[K]) originalInto(id uint32, dst Vector) Vector {
	out := dst[:0]
	if cap(out) < c.dim {
		out = make(Vector, c.dim)
	}
	out = out[:c.dim]
	copy(out, c.vec(id))
	if c.kind == distCosine {
		for i := range out {
			out[i] *= c.norms[id]
		}
	}
	return out
}

// query prepares a query vector in the graph's internal form.
func (c *core[K]) query(s *searcher, near []float32) ([]float32, error) {
	if c.kind != distCosine {
		return near, nil
	}
	n := float32(math.Sqrt(float64(dot(near, near))))
	if n == 0 || math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return nil, errors.New("query vector is zero, NaN or infinite")
	}
	s.q = append(s.q[:0], near...)
	inv := 1 / n
	for i := range s.q {
		s.q[i] *= inv
	}
	return s.q, nil
}

// distQ is the internal distance from a prepared query to a slot: 1 - dot for
// cosine, the squared L2 distance for Euclidean (same order, no square root).
func (c *core[K]) distQ(q []float32, id uint32) float32 {
	o := int(id) * c.dim
	v := c.vecs[o : o+c.dim : o+c.dim]
	switch c.kind {
	case distCosine:
		return 1 - dotKernel(q, v)
	case distEuclidean:
		return l2sqKernel(q, v)
	}
	return c.custom(q, v)
}

// external converts an internal distance to the one the caller asked for.
func (c *core[K]) external(d float32) float32 {
	switch c.kind {
	case distCosine:
		return max(d, 0)
	case distEuclidean:
		return float32(math.Sqrt(float64(max(d, 0))))
	}
	return d
}

func (c *core[K]) loadEntry() (id uint32, level int, ok bool) {
	e := c.entry.Load()
	if e == 0 {
		return 0, 0, false
	}
	return uint32(e), int(e>>32) & 0xff, true
}

func (c *core[K]) storeEntry(id uint32, level int) {
	c.entry.Store(1<<63 | uint64(level)<<32 | uint64(id))
}

// links returns a slot's list on one layer: word 0 is the count, then the ids.
func (c *core[K]) links(id uint32, level int) []uint32 {
	if level == 0 {
		stride := c.m0 + 1
		o := int(id) * stride
		return c.l0[o : o+stride : o+stride]
	}
	stride := c.m + 1
	o := int(c.upOff[id]) + (level-1)*stride
	return c.up[o : o+stride : o+stride]
}

func (c *core[K]) maxLinks(level int) int {
	if level == 0 {
		return c.m0
	}
	return c.m
}

func (c *core[K]) lockFor(id uint32) *sync.Mutex { return &c.locks[id%lockStripes] }

// searcher holds the scratch space of one search or insert.
type searcher struct {
	vis    visitSet
	cands  minHeap
	res    maxHeap
	sorted []cand
	eps    []cand
	sel    []cand
	tmp    []cand
	pairs  []cand
	ids    []uint32
	q      []float32
}

func newSearcher() *searcher { return &searcher{} }
