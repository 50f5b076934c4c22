package hnsw

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"sync"
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
