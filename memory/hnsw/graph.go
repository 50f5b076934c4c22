package hnsw

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Node is a key with its vector, as given to Add and returned by Search.
type Node[K cmp.Ordered] struct {
	Key   K
	Value Vector
}

// MakeNode returns a Node with the given key and vector.
func MakeNode[K cmp.Ordered](key K, vec Vector) Node[K] {
	return Node[K]{Key: key, Value: vec}
}

// SearchResult is one hit of SearchWithDistance: a key and its distance to the query
// under the graph's Distance (for cosine, 1 - cosine similarity).
type SearchResult[K cmp.Ordered] struct {
	Key      K
	Distance float32
}

// Default tunables, chosen on 100-d GloVe vectors (docs/perf/hnsw.md).
const (
	DefaultM              = 16
	DefaultEfSearch       = 100
	DefaultEfConstruction = 200
	DefaultRebuildRatio   = 0.25
	maxLevel              = 31
	maxDim                = 1 << 16
	maxM                  = 1024
)

// Graph is a Hierarchical Navigable Small World graph keyed by K.
//
// The tunables must be set before the first Add (or are taken from the file by
// Import); M, Ml, EfConstruction and Distance are fixed from then on. EfSearch may
// be changed between searches. The zero Graph is not usable: call NewGraph.
type Graph[K cmp.Ordered] struct {
	// Distance is CosineDistance (the default) or EuclideanDistance, which run
	// through fast kernels, or any other function, which is called as given.
	Distance DistanceFunc

	// Rng draws each node's top layer. NewGraph seeds it with a constant so that a
	// single-threaded build is reproducible.
	Rng *rand.Rand

	// M is the maximum number of links per node on layers above 0; layer 0 allows
	// 2·M. 16 suits vectors of 100 to 1,000 dimensions.
	M int

	// Ml is the probability that a node on one layer also appears on the next one
	// up, so each layer is about Ml times the size of the one below. 0 means 1/M,
	// the paper's choice (its mL = 1/ln M).
	Ml float64

	// EfSearch is the size of the candidate list kept during a search; a search for
	// k results uses max(EfSearch, k). Higher means better recall and slower search.
	EfSearch int

	// EfConstruction is EfSearch for the searches that insert a node. Higher means a
	// better graph and a slower build.
	EfConstruction int

	// Parallelism is the number of goroutines a large Add (or a rebuild) inserts
	// with; 1 means a sequential, reproducible build. 0 means GOMAXPROCS for an
	// Add of AutoParallelMin nodes or more and a sequential build below it, so a
	// small graph (a conversation's turns, a test's fixture) is the same graph on
	// every build and its searches are reproducible.
	Parallelism int

	// RebuildRatio is the fraction of deleted nodes above which the graph is rebuilt
	// from its live nodes at the end of a Delete or Add. 0 means DefaultRebuildRatio;
	// a negative value disables rebuilding.
	RebuildRatio float64

	wmu  sync.Mutex   // serialises writers: Add, Delete, Import, Export
	ws   *searcher    // the writer's scratch space, guarded by wmu
	mu   sync.RWMutex // guards c and the slice headers inside it
	c    *core[K]
	pool sync.Pool // *searcher
}

// NewGraph returns an empty graph with the default tunables: cosine distance, M 16,
// EfSearch 100, EfConstruction 200.
func NewGraph[K cmp.Ordered]() *Graph[K] {
	return &Graph[K]{
		Distance:       CosineDistance,
		Rng:            rand.New(rand.NewSource(1)),
		M:              DefaultM,
		Ml:             1.0 / DefaultM,
		EfSearch:       DefaultEfSearch,
		EfConstruction: DefaultEfConstruction,
	}
}

// Len returns the number of live (not deleted) nodes.
func (g *Graph[K]) Len() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.c == nil {
		return 0
	}
	return g.c.live
}

// Dims returns the vector length the graph holds, or 0 if it is empty.
func (g *Graph[K]) Dims() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.c == nil {
		return 0
	}
	return g.c.dim
}

// Tombstones returns the number of deleted nodes still held as waypoints; it drops
// to zero when the graph is rebuilt.
func (g *Graph[K]) Tombstones() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.c == nil {
		return 0
	}
	return g.c.tombs
}

// Lookup returns a copy of the vector stored under key. For cosine distance the
// vector is stored normalised together with its length, and the copy is scaled
// back, so it equals what was added up to float32 rounding.
func (g *Graph[K]) Lookup(key K) (Vector, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	c := g.c
	if c == nil {
		return nil, false
	}
	id, ok := c.byKey.get(c, key)
	if !ok {
		return nil, false
	}
	return c.original(id), true
}

// LookupInto is Lookup writing the vector into dst's storage (grown when it is
// too short) instead of a new slice, so that a caller reading many vectors in a
// row reuses one buffer. The result is valid until dst is written again.
func (g *Graph[K]) LookupInto(key K, dst Vector) (Vector, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	c := g.c
	if c == nil {
		return dst[:0], false
	}
	id, ok := c.byKey.get(c, key)
	if !ok {
		return dst[:0], false
	}
	return c.originalInto(id, dst), true
}

// Add inserts the nodes; a key already present has its vector replaced. The batch is
// checked first and, if any vector is unusable (wrong length, NaN or infinite, or
// zero under cosine distance), nothing is added and the error names the key. Large
// batches are inserted in parallel (see Parallelism).
//
// github.com/coder/hnsw's Add returns nothing and panics on bad input; callers
// that ignore the error here compile unchanged.
func (g *Graph[K]) Add(nodes ...Node[K]) error {
	if len(nodes) == 0 {
		return nil
	}
	g.wmu.Lock()
	defer g.wmu.Unlock()

	g.mu.Lock()
	c := g.c
	if c == nil {
		var err error
		if c, err = g.newCore(len(nodes[0].Value)); err != nil {
			g.mu.Unlock()
			return fmt.Errorf("hnsw: add key %v: %w", nodes[0].Key, err)
		}
	}
	for i := range nodes {
		if err := c.check(nodes[i].Value); err != nil {
			g.mu.Unlock()
			return fmt.Errorf("hnsw: add key %v (node %d of %d): %w; nothing was added", nodes[i].Key, i+1, len(nodes), err)
		}
	}
	c.grow(c.n + len(nodes))
	start := c.n
	var replaced []uint32
	for i := range nodes {
		if old, ok := c.byKey.get(c, nodes[i].Key); ok {
			c.kill(old)
			replaced = append(replaced, old)
		}
		id := c.place(nodes[i].Key, nodes[i].Value, g.randomLevel())
		c.byKey.put(c, nodes[i].Key, id)
		c.live++
	}
	g.c = c
	g.mu.Unlock()

	c.insertRange(g.writer(), uint32(start), uint32(c.n), g.workers(c.n-start))
	for _, old := range replaced {
		c.repair(g.writer(), old)
	}
	g.maybeRebuild()
	return nil
}

// Delete removes key and reports whether it was present. Its neighbours' links are
// repaired at once; the slot itself is reclaimed by the next rebuild.
func (g *Graph[K]) Delete(key K) bool {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	g.mu.Lock()
	c := g.c
	if c == nil {
		g.mu.Unlock()
		return false
	}
	id, ok := c.byKey.get(c, key)
	if !ok {
		g.mu.Unlock()
		return false
	}
	c.byKey.del(c, key)
	c.kill(id)
	if c.live == 0 {
		// Nothing left to find: start afresh, which also frees the slots.
		g.c = nil
		g.mu.Unlock()
		return true
	}
	g.mu.Unlock()
	c.repair(g.writer(), id)
	g.maybeRebuild()
	return true
}

// Search returns the k nodes nearest to near, nearest first, with copies of their
// vectors. It returns nil if the graph is empty or near has the wrong length; use
// SearchWithDistance to get distances and an error instead.
func (g *Graph[K]) Search(near Vector, k int) []Node[K] {
	g.mu.RLock()
	defer g.mu.RUnlock()
	hits, c, s, err := g.search(near, k)
	if err != nil || c == nil {
		return nil
	}
	defer g.pool.Put(s)
	out := make([]Node[K], len(hits))
	for i, h := range hits {
		out[i] = Node[K]{Key: c.key(h.id), Value: c.original(h.id)}
	}
	return out
}

// SearchWithDistance returns the keys of the k nodes nearest to near with their
// distances, nearest first. Deleted nodes are never returned.
func (g *Graph[K]) SearchWithDistance(near Vector, k int) ([]SearchResult[K], error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	hits, c, s, err := g.search(near, k)
	if err != nil || c == nil {
		return nil, err
	}
	defer g.pool.Put(s)
	out := make([]SearchResult[K], len(hits))
	for i, h := range hits {
		out[i] = SearchResult[K]{Key: c.key(h.id), Distance: c.external(h.d)}
	}
	return out, nil
}

// search runs a query under the read lock held by the caller. The hits alias the
// searcher's buffer, which the caller returns to the pool when done with them.
func (g *Graph[K]) search(near Vector, k int) ([]cand, *core[K], *searcher, error) {
	c := g.c
	if c == nil || c.live == 0 || k <= 0 {
		return nil, nil, nil, nil
	}
	if len(near) != c.dim {
		return nil, nil, nil, fmt.Errorf("hnsw: search: query has %d dimensions, the index holds %d", len(near), c.dim)
	}
	s, _ := g.pool.Get().(*searcher)
	if s == nil {
		s = newSearcher()
	}
	q, err := c.query(s, near)
	if err != nil {
		g.pool.Put(s)
		return nil, nil, nil, fmt.Errorf("hnsw: search: %w", err)
	}
	ep, top, ok := c.loadEntry()
	if !ok {
		g.pool.Put(s)
		return nil, nil, nil, nil
	}
	cur := cand{c.distQ(q, ep), ep}
	for l := top; l > 0; l-- {
		cur = c.greedy(q, cur, l)
	}
	ef := max(g.EfSearch, k, 1)
	s.eps = append(s.eps[:0], cur)
	c.searchLayer(s, q, s.eps, ef, 0, true, noSlot)
	s.sorted = s.res.drainSorted(s.sorted[:0])
	hits := s.sorted
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, c, s, nil
}

// writer returns the scratch space of the (single, wmu-holding) writer.
func (g *Graph[K]) writer() *searcher {
	if g.ws == nil {
		g.ws = newSearcher()
	}
	return g.ws
}

// AutoParallelMin is the smallest Add that a Graph with Parallelism 0 splits
// among goroutines. Inserting fewer nodes alone takes well under a second.
const AutoParallelMin = 4096

// workers is the number of goroutines that insert n new nodes.
func (g *Graph[K]) workers(n int) int {
	switch {
	case g.Parallelism > 0:
		return g.Parallelism
	case n < AutoParallelMin:
		return 1
	}
	return runtime.GOMAXPROCS(0)
}

// randomLevel draws a top layer: P(level >= l) = Ml^l.
func (g *Graph[K]) randomLevel() int {
	p := g.Ml
	if p <= 0 || p >= 1 {
		p = 1 / float64(max(g.M, 2))
	}
	if g.Rng == nil {
		g.Rng = rand.New(rand.NewSource(1))
	}
	u := 1 - g.Rng.Float64() // (0, 1]
	l := int(math.Floor(math.Log(u) / math.Log(p)))
	return min(max(l, 0), maxLevel)
}

// maybeRebuild rebuilds the graph from its live nodes when tombstones exceed the
// ratio. Searches keep using the old graph until the new one is swapped in.
func (g *Graph[K]) maybeRebuild() {
	ratio := g.RebuildRatio
	if ratio == 0 {
		ratio = DefaultRebuildRatio
	}
	g.mu.RLock()
	c := g.c
	need := ratio > 0 && c != nil && c.tombs > 0 && float64(c.tombs) > ratio*float64(c.n)
	g.mu.RUnlock()
	if !need {
		return
	}
	nc := c.emptyLike()
	nc.grow(c.live)
	for id := range uint32(c.n) {
		if c.isDead(id) {
			continue
		}
		key := c.key(id)
		nid := nc.placeNormalised(key, c.vec(id), c.norms[id], int(c.levels[id]))
		nc.byKey.put(nc, key, nid)
		nc.live++
	}
	nc.insertRange(g.writer(), 0, uint32(nc.n), g.workers(nc.n))
	g.mu.Lock()
	g.c = nc
	g.mu.Unlock()
}

func (g *Graph[K]) newCore(dim int) (*core[K], error) {
	if dim <= 0 {
		return nil, errors.New("empty vector")
	}
	if dim > maxDim {
		return nil, fmt.Errorf("vector of %d dimensions, at most %d supported", dim, maxDim)
	}
	m := g.M
	if m < 2 {
		m = 2
	}
	if m > maxM {
		return nil, fmt.Errorf("M %d is too large (at most %d)", g.M, maxM)
	}
	ml := g.Ml
	if ml <= 0 || ml >= 1 {
		ml = 1 / float64(m)
	}
	efc := max(g.EfConstruction, m)
	c := &core[K]{
		dim:    dim,
		kind:   kindOf(g.Distance),
		custom: g.Distance,
		m:      m,
		m0:     2 * m,
		ml:     ml,
		efc:    efc,
	}
	c.init()
	return c, nil
}

// noSlot marks "no node" where a slot number is expected.
const noSlot = ^uint32(0)

// lockStripes is the number of mutexes shared by all nodes' link lists. A writer
// holds one stripe at a time, so striping cannot deadlock.
const lockStripes = 4096

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
