package sleep

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"runtime"
	"sort"
	"sync"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/hnsw"
)

// Neighbours come from an HNSW index (memory/hnsw) that the run builds for
// itself, one graph per area, rather than from the store's own vector index.
// The store's graph is shaped by its history: the order records arrived in,
// parallel inserts, deletes and repairs. Two stores in the same state can hold
// different graphs, and an approximate index can then return different
// neighbours, so decisions taken from it would not be a function of the state.
// The run's graph is: its members are every record of the area that is not a
// sleep summary (whatever its status, so the phases' archives do not change it),
// inserted one at a time in id order from a fixed random seed. A run killed and
// started again, or a second run right after the first, therefore sees exactly
// the same neighbours.
//
// The vectors are the store's (memory.Store.Vector, else its embedder). A store
// without an embedder gets lexical vectors: word stems and word pairs hashed
// into lexicalDims dimensions, enough to find restatements, not paraphrases by
// synonyms (docs/sleep.md).

// Graph tunables for the run's index: lower than the store's (M 16,
// EfConstruction 200), because what the run looks for (duplicates, close
// relatives) sits at the very top of each neighbour list.
const (
	graphM              = 12
	graphEfConstruction = 64
	graphEfSearch       = 64
	lexicalDims         = 512
)

// vectorSource gives unit vectors for records.
type vectorSource struct {
	store   memStore
	emb     memory.Embedder
	lexical bool
	lx      *lexicon
}

func newVectorSource(s memStore, e memory.Embedder, lx *lexicon) *vectorSource {
	return &vectorSource{store: s, emb: e, lexical: e == nil, lx: lx}
}

// describe says where vectors come from, for the report.
func (v *vectorSource) describe() string {
	if v.lexical {
		return fmt.Sprintf("lexical (hashed word stems, %d-d): the store has no embedder", lexicalDims)
	}
	return v.emb.ModelID()
}

// vectors returns unit vectors for recs (nil for a text without a direction).
func (v *vectorSource) vectors(ctx context.Context, recs []*memory.Record) ([][]float32, error) {
	out := make([][]float32, len(recs))
	var missing []int
	var held map[string][]float32
	if !v.lexical {
		ids := make([]string, len(recs))
		for i, r := range recs {
			ids[i] = r.ID
		}
		var err error
		if held, err = v.store.Vectors(ctx, ids); err != nil {
			return nil, fmt.Errorf("sleep: reading %d vectors: %w", len(ids), err)
		}
	}
	for i, r := range recs {
		if v.lexical {
			out[i] = v.lexicalVector(r.Text)
			continue
		}
		if vec, ok := held[r.ID]; ok {
			out[i] = unit(vec)
		} else {
			missing = append(missing, i)
		}
	}
	const batch = 256
	for start := 0; start < len(missing); start += batch {
		idx := missing[start:min(start+batch, len(missing))]
		texts := make([]string, len(idx))
		for j, i := range idx {
			texts[j] = recs[i].Text
		}
		vecs, err := v.emb.Embed(ctx, texts)
		if err != nil {
			return nil, fmt.Errorf("sleep: embedding %d records with %s: %w", len(texts), v.emb.ModelID(), err)
		}
		if len(vecs) != len(texts) {
			return nil, fmt.Errorf("sleep: the embedder %s returned %d vectors for %d texts", v.emb.ModelID(), len(vecs), len(texts))
		}
		for j, i := range idx {
			out[i] = unit(vecs[j])
		}
	}
	return out, nil
}

// lexicalVector hashes a text's content stems and adjacent stem pairs.
func (v *vectorSource) lexicalVector(text string) []float32 {
	ti := v.lx.analyse(text)
	vec := make([]float32, lexicalDims)
	add := func(s string, w float32) {
		h := fnv.New32a()
		h.Write([]byte(s))
		vec[h.Sum32()%lexicalDims] += w
	}
	prev := ""
	for _, w := range ti.content {
		add(w.stem, 1)
		if prev != "" {
			add(prev+" "+w.stem, 0.5)
		}
		prev = w.stem
	}
	for _, val := range ti.values {
		add("v:"+val, 1)
	}
	return unit(vec)
}

// unit returns v scaled to length 1, or nil for a zero or unusable vector.
func unit(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
		return nil
	}
	inv := 1 / math.Sqrt(ss)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// cos is the cosine similarity of two unit vectors, in float64.
func cos(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// neighbour is one entry of a neighbour list.
type neighbour struct {
	id  string
	sim float64 // cosine similarity
}

// stored is a neighbour as an area index keeps it: a position and the
// cosine similarity the graph computed (the same in every run).
type stored struct {
	pos int32
	sim float32
}

// areaIndex is the run's index of one area.
type areaIndex struct {
	area  string
	ids   []string // members in id order; the graph's keys are positions here
	pos   map[string]int32
	graph *hnsw.Graph[int32]

	mu    sync.Mutex
	lists [][]stored // neighbour lists by position, nil until asked for
	have  []bool
}

// index is the run's vector index over the work areas.
type index struct {
	src   *vectorSource
	k     int
	areas map[string]*areaIndex
}

// buildIndex indexes members (records of work areas that are not summaries),
// one graph per area, areas in parallel, each graph single-threaded.
func buildIndex(ctx context.Context, src *vectorSource, members []*memory.Record, k int, progress func(done, total int)) (*index, error) {
	byArea := map[string][]*memory.Record{}
	for _, r := range members {
		byArea[r.Area] = append(byArea[r.Area], r)
	}
	ix := &index{src: src, k: k, areas: map[string]*areaIndex{}}
	areas := sortedKeys(byArea)
	// Largest first, so the longest build starts first.
	sort.SliceStable(areas, func(i, j int) bool { return len(byArea[areas[i]]) > len(byArea[areas[j]]) })
	total := len(members)
	var mu sync.Mutex
	done := 0
	var firstErr error
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for _, area := range areas {
		recs := byArea[area]
		sort.Slice(recs, func(i, j int) bool { return recs[i].ID < recs[j].ID })
		ai := &areaIndex{area: area, pos: map[string]int32{}}
		ix.areas[area] = ai
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			err := ai.build(ctx, src, recs, func(n int) {
				mu.Lock()
				done += n
				d := done
				mu.Unlock()
				if progress != nil {
					progress(d, total)
				}
			})
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return ix, nil
}

func (ai *areaIndex) build(ctx context.Context, src *vectorSource, recs []*memory.Record, progress func(int)) error {
	vecs, err := src.vectors(ctx, recs)
	if err != nil {
		return err
	}
	g := hnsw.NewGraph[int32]()
	g.M, g.Ml, g.EfConstruction, g.EfSearch, g.Parallelism = graphM, 1/float64(graphM), graphEfConstruction, graphEfSearch, 1
	g.RebuildRatio = -1
	// One Add: the graph sizes its arrays once, and inserts in order.
	nodes := make([]hnsw.Node[int32], 0, len(recs))
	for i, r := range recs {
		if vecs[i] == nil {
			continue
		}
		p := int32(len(ai.ids))
		ai.ids = append(ai.ids, r.ID)
		ai.pos[r.ID] = p
		nodes = append(nodes, hnsw.MakeNode(p, vecs[i]))
	}
	vecs = nil
	if err := g.Add(nodes...); err != nil {
		return fmt.Errorf("sleep: indexing area %s: %w", ai.area, err)
	}
	progress(len(recs))
	ai.graph = g
	ai.lists = make([][]stored, len(ai.ids))
	ai.have = make([]bool, len(ai.ids))
	return ctx.Err()
}

// vector returns the unit vector of a member (a copy, from the graph).
func (ix *index) vector(area, id string) ([]float32, bool) {
	ai := ix.areas[area]
	if ai == nil {
		return nil, false
	}
	p, ok := ai.pos[id]
	if !ok {
		return nil, false
	}
	return ai.vector(p), true
}

func (ai *areaIndex) vector(p int32) []float32 {
	v, _ := ai.graph.Lookup(p)
	return unit(v)
}

// search returns up to k members of area nearest to vec (excluding the member
// at position skip, -1 for none), best first, with exact similarities; ties go
// to the smaller position, which is the smaller id.
func (ai *areaIndex) search(vec []float32, k int, skip int32) ([]stored, error) {
	if ai.graph == nil || ai.graph.Len() == 0 {
		return nil, nil
	}
	res, err := ai.graph.SearchWithDistance(vec, k+1)
	if err != nil {
		return nil, fmt.Errorf("sleep: searching area %s: %w", ai.area, err)
	}
	out := make([]stored, 0, len(res))
	for _, h := range res {
		if h.Key == skip {
			continue
		}
		out = append(out, stored{pos: h.Key, sim: 1 - h.Distance})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].sim != out[j].sim {
			return out[i].sim > out[j].sim
		}
		return out[i].pos < out[j].pos
	})
	if len(out) > k {
		out = out[:k]
	}
	return out, nil
}

// search returns up to k members of area nearest to vec (excluding the member
// skip), best first.
func (ix *index) search(area string, vec []float32, k int, skip string) ([]neighbour, error) {
	ai := ix.areas[area]
	if ai == nil {
		return nil, nil
	}
	sp := int32(-1)
	if p, ok := ai.pos[skip]; ok {
		sp = p
	}
	l, err := ai.search(vec, k, sp)
	return ai.expand(l), err
}

func (ai *areaIndex) expand(l []stored) []neighbour {
	out := make([]neighbour, len(l))
	for i, s := range l {
		out[i] = neighbour{id: ai.ids[s.pos], sim: float64(s.sim)}
	}
	return out
}

// list returns the stored neighbour list of the member at p (computed once).
func (ai *areaIndex) list(p int32, k int) ([]stored, error) {
	ai.mu.Lock()
	if ai.have[p] {
		l := ai.lists[p]
		ai.mu.Unlock()
		return l, nil
	}
	ai.mu.Unlock()
	l, err := ai.search(ai.vector(p), k, p)
	if err != nil {
		return nil, err
	}
	ai.mu.Lock()
	ai.lists[p], ai.have[p] = l, true
	ai.mu.Unlock()
	return l, nil
}

// neighbours returns the neighbour list of member id.
func (ix *index) neighbours(area, id string) ([]neighbour, error) {
	ai := ix.areas[area]
	if ai == nil {
		return nil, nil
	}
	p, ok := ai.pos[id]
	if !ok {
		return nil, nil
	}
	l, err := ai.list(p, ix.k)
	return ai.expand(l), err
}

// lists reports whether b's neighbour list holds a (both members of area).
func (ix *index) listHolds(area, b, a string) bool {
	ai := ix.areas[area]
	if ai == nil {
		return false
	}
	pb, okb := ai.pos[b]
	pa, oka := ai.pos[a]
	if !okb || !oka {
		return false
	}
	l, err := ai.list(pb, ix.k)
	if err != nil {
		return false
	}
	for _, s := range l {
		if s.pos == pa {
			return true
		}
	}
	return false
}

// prefetch computes the neighbour lists of ids in parallel (each list is the
// same whichever goroutine computes it).
func (ix *index) prefetch(ctx context.Context, recs []*memory.Record, progress func(done, total int)) error {
	workers := max(1, runtime.GOMAXPROCS(0))
	var next, done int
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				mu.Lock()
				if next >= len(recs) || firstErr != nil {
					mu.Unlock()
					return
				}
				r := recs[next]
				next++
				mu.Unlock()
				_, err := ix.neighbours(r.Area, r.ID)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil && ctx.Err() != nil && firstErr == nil {
					firstErr = ctx.Err()
				}
				done++
				d := done
				mu.Unlock()
				if progress != nil && (d%1000 == 0 || d == len(recs)) {
					progress(d, len(recs))
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}
