package hnsw_test

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/exocortex/exocortex/memory/hnsw"
)

// clustered returns n vectors of dim dimensions drawn around `clusters` random
// centres: the kind of data where a naive graph loses whole clusters.
func clustered(seed uint64, n, dim, clusters int) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 99))
	centres := make([][]float32, clusters)
	for i := range centres {
		centres[i] = make([]float32, dim)
		for j := range centres[i] {
			centres[i][j] = float32(r.NormFloat64() * 1.5)
		}
	}
	out := make([][]float32, n)
	for i := range out {
		c := centres[r.IntN(clusters)]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

// exact returns the keys of the k nearest vectors by brute force.
func exact(vecs map[int][]float32, q []float32, k int, dist hnsw.DistanceFunc) []int {
	type kd struct {
		k int
		d float32
	}
	all := make([]kd, 0, len(vecs))
	for key, v := range vecs {
		all = append(all, kd{key, dist(q, v)})
	}
	slices.SortFunc(all, func(a, b kd) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.k, b.k)) })
	out := make([]int, 0, k)
	for _, x := range all[:min(k, len(all))] {
		out = append(out, x.k)
	}
	return out
}

// recallAt measures mean recall@k of g against brute force over the queries.
func recallAt(t *testing.T, g *hnsw.Graph[int], vecs map[int][]float32, queries [][]float32, k int) float64 {
	t.Helper()
	var hit, total int
	for _, q := range queries {
		res, err := g.SearchWithDistance(q, k)
		if err != nil {
			t.Fatal(err)
		}
		want := exact(vecs, q, k, g.Distance)
		got := make(map[int]bool, len(res))
		for _, r := range res {
			if _, ok := vecs[r.Key]; !ok {
				t.Fatalf("search returned key %d, which is not in the index", r.Key)
			}
			got[r.Key] = true
		}
		for _, w := range want {
			if got[w] {
				hit++
			}
		}
		total += len(want)
	}
	return float64(hit) / float64(total)
}

// scaled shrinks a data-set size under the race detector.
func scaled(n int) int {
	if raceOn {
		return n / 4
	}
	return n
}

func build(t *testing.T, dist hnsw.DistanceFunc, vecs [][]float32, parallelism int) (*hnsw.Graph[int], map[int][]float32) {
	t.Helper()
	g := hnsw.NewGraph[int]()
	g.Distance = dist
	g.Parallelism = parallelism
	nodes := make([]hnsw.Node[int], len(vecs))
	m := make(map[int][]float32, len(vecs))
	for i, v := range vecs {
		nodes[i] = hnsw.MakeNode(i, v)
		m[i] = v
	}
	if err := g.Add(nodes...); err != nil {
		t.Fatal(err)
	}
	return g, m
}

// TestRecallClustered asserts recall@10 >= 0.95 at EfSearch 64 on 4,000 clustered
// 32-d vectors (overlapping clusters, so the intrinsic dimension stays high), for both built-in distances, sequential and parallel builds.
func TestRecallClustered(t *testing.T) {
	n := scaled(4000)
	data := clustered(1, n+200, 32, 40)
	base, queries := data[:n], data[n:]
	for _, tc := range []struct {
		name string
		dist hnsw.DistanceFunc
		par  int
	}{
		{"cosine/sequential", hnsw.CosineDistance, 1},
		{"cosine/parallel", hnsw.CosineDistance, 2},
		{"euclidean/parallel", hnsw.EuclideanDistance, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if raceOn && tc.par == 1 {
				t.Skip("the race detector needs only the parallel builds")
			}
			g, m := build(t, tc.dist, base, tc.par)
			g.EfSearch = 64
			if g.Len() != len(base) {
				t.Fatalf("Len = %d, want %d", g.Len(), len(base))
			}
			r := recallAt(t, g, m, queries, 10)
			t.Logf("recall@10 = %.4f", r)
			if r < 0.95 {
				t.Errorf("recall@10 = %.4f at EfSearch 64, want >= 0.95", r)
			}
		})
	}
}

func TestSearchResultsOrderedWithDistances(t *testing.T) {
	g, m := build(t, hnsw.EuclideanDistance, clustered(2, 500, 8, 5), 1)
	q := m[7]
	res, err := g.SearchWithDistance(q, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 10 || res[0].Key != 7 || res[0].Distance != 0 {
		t.Fatalf("nearest to a stored vector should be itself at distance 0, got %+v", res[0])
	}
	for i, r := range res {
		if want := hnsw.EuclideanDistance(q, m[r.Key]); math.Abs(float64(want-r.Distance)) > 1e-4 {
			t.Errorf("result %d: distance %v, want %v", i, r.Distance, want)
		}
		if i > 0 && r.Distance < res[i-1].Distance {
			t.Errorf("results not sorted: %v after %v", r.Distance, res[i-1].Distance)
		}
	}
	nodes := g.Search(q, 3)
	if len(nodes) != 3 || nodes[0].Key != 7 || !slices.Equal(nodes[0].Value, m[7]) {
		t.Fatalf("Search returned %+v", nodes)
	}
	if got := g.Search(q, 1000); len(got) != 500 {
		t.Errorf("k beyond the size returned %d nodes, want all 500", len(got))
	}
}

func TestCustomDistance(t *testing.T) {
	manhattan := func(a, b []float32) float32 {
		var s float32
		for i := range a {
			s += float32(math.Abs(float64(a[i] - b[i])))
		}
		return s
	}
	n := scaled(1000)
	data := clustered(3, n+100, 16, 10)
	g, m := build(t, manhattan, data[:n], 1)
	g.EfSearch = 64
	if r := recallAt(t, g, m, data[n:], 10); r < 0.95 {
		t.Errorf("recall@10 with a custom distance = %.3f", r)
	}
}

func TestBadInputRejected(t *testing.T) {
	g := hnsw.NewGraph[string]()
	if err := g.Add(hnsw.MakeNode("a", []float32{1, 2, 3})); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		vec  []float32
	}{
		{"wrong length", []float32{1, 2}},
		{"NaN", []float32{1, float32(math.NaN()), 0}},
		{"Inf", []float32{1, float32(math.Inf(1)), 0}},
		{"zero under cosine", []float32{0, 0, 0}},
	} {
		err := g.Add(hnsw.MakeNode("good", []float32{3, 2, 1}), hnsw.MakeNode("bad", tc.vec))
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !bytes.Contains([]byte(err.Error()), []byte("bad")) {
			t.Errorf("%s: error does not name the key: %v", tc.name, err)
		}
		if _, ok := g.Lookup("good"); ok || g.Len() != 1 {
			t.Errorf("%s: a rejected batch was partly added", tc.name)
		}
	}
	if _, err := g.SearchWithDistance([]float32{1, 2}, 3); err == nil {
		t.Error("query of the wrong length: no error")
	}
	if _, err := g.SearchWithDistance([]float32{0, 0, 0}, 3); err == nil {
		t.Error("zero query under cosine: no error")
	}
	if g.Search([]float32{1, 2}, 3) != nil {
		t.Error("Search with a bad query should return nil")
	}
}

func TestEmptyGraph(t *testing.T) {
	g := hnsw.NewGraph[int]()
	if g.Search([]float32{1, 2}, 5) != nil || g.Len() != 0 || g.Delete(3) {
		t.Fatal("empty graph misbehaves")
	}
	if _, ok := g.Lookup(1); ok {
		t.Fatal("Lookup on an empty graph found something")
	}
	var buf bytes.Buffer
	if err := g.Export(&buf); err != nil {
		t.Fatal(err)
	}
	h := hnsw.NewGraph[int]()
	if err := h.Import(&buf); err != nil {
		t.Fatalf("importing an empty graph: %v", err)
	}
	if h.Len() != 0 {
		t.Fatal("imported empty graph is not empty")
	}
	// Deleting the last node empties the graph, and it accepts a new dimension.
	_ = g.Add(hnsw.MakeNode(1, []float32{1, 2}))
	if !g.Delete(1) || g.Len() != 0 || g.Search([]float32{1, 2}, 1) != nil {
		t.Fatal("deleting the only node")
	}
	if err := g.Add(hnsw.MakeNode(2, []float32{1, 2, 3})); err != nil || g.Len() != 1 {
		t.Fatalf("re-adding to an emptied graph: %v", err)
	}
}

func TestDeleteAndReAdd(t *testing.T) {
	n := scaled(2000)
	data := clustered(4, n+600, 16, 20)
	g, m := build(t, hnsw.CosineDistance, data[:n], 1)
	g.RebuildRatio = -1 // test repair alone here
	r := rand.New(rand.NewPCG(5, 5))
	deleted := map[int]bool{}
	for len(deleted) < n/5 {
		k := r.IntN(n)
		if deleted[k] {
			continue
		}
		if !g.Delete(k) {
			t.Fatalf("Delete(%d) = false for a present key", k)
		}
		if g.Delete(k) {
			t.Fatalf("second Delete(%d) = true", k)
		}
		deleted[k] = true
		delete(m, k)
	}
	if g.Len() != n-n/5 || g.Tombstones() != n/5 {
		t.Fatalf("Len %d, tombstones %d; want %d, %d", g.Len(), g.Tombstones(), n-n/5, n/5)
	}
	for k := range deleted {
		if _, ok := g.Lookup(k); ok {
			t.Fatalf("Lookup found deleted key %d", k)
		}
	}
	// recallAt fails on any deleted key in the results.
	if rec := recallAt(t, g, m, data[n:n+200], 10); rec < 0.93 {
		t.Errorf("recall after deleting 20%% = %.3f", rec)
	}
	// Re-add deleted keys with new vectors, and replace some live keys' vectors.
	i := n + 200
	var nodes []hnsw.Node[int]
	for k := range deleted {
		if i == n+400 {
			break
		}
		nodes = append(nodes, hnsw.MakeNode(k, data[i]))
		m[k] = data[i]
		i++
	}
	for k := 0; k < n && i < n+600; k++ {
		if !deleted[k] {
			nodes = append(nodes, hnsw.MakeNode(k, data[i]))
			m[k] = data[i]
			i++
		}
	}
	if err := g.Add(nodes...); err != nil {
		t.Fatal(err)
	}
	if g.Len() != len(m) {
		t.Fatalf("Len = %d after re-adding, want %d", g.Len(), len(m))
	}
	for _, n := range nodes {
		v, ok := g.Lookup(n.Key)
		if !ok {
			t.Fatalf("re-added key %d not found", n.Key)
		}
		for j := range v {
			if math.Abs(float64(v[j]-n.Value[j])) > 1e-4*(1+math.Abs(float64(n.Value[j]))) {
				t.Fatalf("Lookup(%d) returned the old vector", n.Key)
			}
		}
		res := g.Search(n.Value, 1)
		if len(res) == 0 || res[0].Key != n.Key {
			t.Fatalf("re-added key %d is not its own nearest neighbour: %+v", n.Key, res)
		}
	}
	if rec := recallAt(t, g, m, data[n:n+200], 10); rec < 0.93 {
		t.Errorf("recall after re-adding = %.3f", rec)
	}
}

// TestRecallAfterDeleteRounds runs 40 rounds of deleting 10% of the keys and adding
// them back with new vectors (one at a time, as a store would) and checks recall
// never falls below 0.93 and ends at 0.95 or better, while the tombstones stay
// bounded by the rebuild ratio.
func TestRecallAfterDeleteRounds(t *testing.T) {
	n, rounds := scaled(2000), 40
	if raceOn {
		rounds = 12
	}
	pool := clustered(6, 8000, 16, 20)
	queries := clustered(6, 8100, 16, 20)[8000:]
	g, m := build(t, hnsw.CosineDistance, pool[:n], 1)
	g.EfSearch = 64
	r := rand.New(rand.NewPCG(7, 7))
	next := n
	var worst float64 = 1
	var last float64
	for round := range rounds {
		keys := r.Perm(n)[:n/10]
		for _, k := range keys {
			g.Delete(k)
		}
		for _, k := range keys {
			v := pool[next%len(pool)]
			next++
			m[k] = v
			if err := g.Add(hnsw.MakeNode(k, v)); err != nil {
				t.Fatal(err)
			}
		}
		if g.Len() != n {
			t.Fatalf("round %d: Len = %d", round, g.Len())
		}
		if ts := g.Tombstones(); float64(ts) > 0.25*float64(n+ts)+1 {
			t.Fatalf("round %d: %d tombstones, above the rebuild ratio", round, ts)
		}
		if round%5 == 4 {
			last = recallAt(t, g, m, queries, 10)
			worst = min(worst, last)
		}
	}
	t.Logf("recall@10 after %d rounds: last %.4f, worst %.4f", rounds, last, worst)
	if worst < 0.93 || last < 0.95 {
		t.Errorf("recall eroded: worst %.4f, last %.4f", worst, last)
	}
}

// TestConcurrentSearchWhileWriting runs four searching goroutines against one writer
// that adds, replaces and deletes; run it with -race.
func TestConcurrentSearchWhileWriting(t *testing.T) {
	data := clustered(8, 3000, 16, 10)
	g, _ := build(t, hnsw.CosineDistance, data[:1000], 2)
	g.RebuildRatio = 0.1 // rebuild often, to race searches against swaps too
	var stop atomic.Bool
	var searches atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for !stop.Load() {
				q := data[r.IntN(len(data))]
				res, err := g.SearchWithDistance(q, 10)
				if err != nil {
					errs <- err
					return
				}
				for i := 1; i < len(res); i++ {
					if res[i].Distance < res[i-1].Distance {
						errs <- fmt.Errorf("unsorted results %v", res)
						return
					}
				}
				g.Lookup(r.IntN(3000))
				g.Len()
				searches.Add(1)
			}
		})
	}
	r := rand.New(rand.NewPCG(9, 9))
	for i := 1000; i < 1000+scaled(2000); i += 50 {
		batch := make([]hnsw.Node[int], 0, 50)
		for j := i; j < i+50; j++ {
			batch = append(batch, hnsw.MakeNode(j, data[j]))
		}
		if err := g.Add(batch...); err != nil {
			t.Fatal(err)
		}
		for range 20 {
			g.Delete(r.IntN(i))
		}
		_ = g.Add(hnsw.MakeNode(r.IntN(i), data[r.IntN(i)]))
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d searches ran alongside the writer", searches.Load())
	if searches.Load() == 0 {
		t.Fatal("no search ran")
	}
}

// TestParallelAddCalls: Add and Delete may be called from several goroutines; the
// graph serialises them.
func TestParallelAddCalls(t *testing.T) {
	data := clustered(10, 2000, 8, 8)
	g := hnsw.NewGraph[int]()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(data); i += 4 {
				if err := g.Add(hnsw.MakeNode(i, data[i])); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if g.Len() != len(data) {
		t.Fatalf("Len = %d, want %d", g.Len(), len(data))
	}
}

func TestExportImportRoundTrip(t *testing.T) {
	n := scaled(3000)
	data := clustered(11, n+100, 24, 30)
	g, _ := build(t, hnsw.CosineDistance, data[:n], 2)
	g.RebuildRatio = -1
	for k := 0; k < n; k += 7 {
		g.Delete(k) // keep tombstones in the file
	}
	g.EfSearch = 40
	var buf bytes.Buffer
	if err := g.Export(&buf); err != nil {
		t.Fatal(err)
	}
	h := hnsw.NewGraph[int]()
	h.Distance = hnsw.EuclideanDistance // Import takes the distance from the file
	if err := h.Import(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if h.Len() != g.Len() || h.Tombstones() != g.Tombstones() || h.EfSearch != 40 || h.M != g.M {
		t.Fatalf("imported graph differs: Len %d/%d, tombstones %d/%d, EfSearch %d, M %d",
			h.Len(), g.Len(), h.Tombstones(), g.Tombstones(), h.EfSearch, h.M)
	}
	for i, q := range data[n:] {
		a, _ := g.SearchWithDistance(q, 10)
		b, _ := h.SearchWithDistance(q, 10)
		if !slices.Equal(a, b) {
			t.Fatalf("query %d: results differ after import:\n%v\n%v", i, a, b)
		}
	}
	for k := range n {
		va, oka := g.Lookup(k)
		vb, okb := h.Lookup(k)
		if oka != okb || !slices.Equal(va, vb) {
			t.Fatalf("Lookup(%d) differs after import", k)
		}
	}
	// Exporting the imported graph gives the same bytes.
	var again bytes.Buffer
	if err := h.Export(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("export of the imported graph differs from the original file")
	}
	// The imported graph keeps working as a graph.
	if err := h.Add(hnsw.MakeNode(5000, data[n+50])); err != nil {
		t.Fatal(err)
	}
	if res := h.Search(data[n+50], 1); len(res) != 1 || res[0].Key != 5000 {
		t.Fatalf("add after import: %+v", res)
	}
}

type docID string

func TestExportImportKeyTypes(t *testing.T) {
	g := hnsw.NewGraph[docID]()
	g.Distance = hnsw.EuclideanDistance
	for i, v := range clustered(12, 300, 4, 3) {
		_ = g.Add(hnsw.MakeNode(docID(fmt.Sprintf("doc-%d-é", i)), v))
	}
	var buf bytes.Buffer
	if err := g.Export(&buf); err != nil {
		t.Fatal(err)
	}
	h := hnsw.NewGraph[docID]()
	if err := h.Import(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if v, ok := h.Lookup("doc-17-é"); !ok || len(v) != 4 {
		t.Fatal("string key lost in round trip")
	}
	wrong := hnsw.NewGraph[int64]()
	err := wrong.Import(bytes.NewReader(buf.Bytes()))
	if err == nil {
		t.Fatal("importing string keys into an int64 graph: no error")
	}
	t.Log(err)
}

// TestImportVersions reads a graph written in each file format version (1, the
// node-by-node format older builds wrote; 2, the flat one) and checks it answers
// as the original does.
func TestImportVersions(t *testing.T) {
	n := scaled(2000)
	data := clustered(15, n+50, 16, 20)
	g, _ := build(t, hnsw.CosineDistance, data[:n], 2)
	g.RebuildRatio = -1
	for k := 0; k < n; k += 11 {
		g.Delete(k)
	}
	for _, v := range []uint32{1, 2, 3} {
		t.Run(fmt.Sprintf("version %d", v), func(t *testing.T) {
			var buf bytes.Buffer
			if err := g.ExportVersion(&buf, v); err != nil {
				t.Fatal(err)
			}
			// Both a reader that knows its length and one that does not.
			for _, r := range []io.Reader{bytes.NewReader(buf.Bytes()), io.MultiReader(bytes.NewReader(buf.Bytes()))} {
				h := hnsw.NewGraph[int]()
				if err := h.Import(r); err != nil {
					t.Fatal(err)
				}
				if h.Len() != g.Len() || h.Tombstones() != g.Tombstones() {
					t.Fatalf("Len %d/%d, tombstones %d/%d", h.Len(), g.Len(), h.Tombstones(), g.Tombstones())
				}
				for i, q := range data[n:] {
					a, _ := g.SearchWithDistance(q, 10)
					b, _ := h.SearchWithDistance(q, 10)
					if !slices.Equal(a, b) {
						t.Fatalf("query %d: results differ after import:\n%v\n%v", i, a, b)
					}
				}
				// Adding and deleting after the import grows the graph out of
				// the file's arrays.
				for k := range 300 {
					if err := h.Add(hnsw.MakeNode(n+k, data[n+k%50])); err != nil {
						t.Fatal(err)
					}
				}
				h.Delete(1)
				if res := h.Search(data[n+3], 1); len(res) != 1 {
					t.Fatalf("search after adding: %v", res)
				}
			}
		})
	}
}

func TestImportCorruptFile(t *testing.T) {
	for _, v := range []uint32{1, 2, 3} {
		t.Run(fmt.Sprintf("version %d", v), func(t *testing.T) { importCorruptFile(t, v) })
	}
}

func importCorruptFile(t *testing.T, version uint32) {
	g, _ := build(t, hnsw.CosineDistance, clustered(13, 400, 8, 4), 1)
	var buf bytes.Buffer
	if err := g.ExportVersion(&buf, version); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()

	// A graph that already holds data must keep it when an import fails.
	target, _ := build(t, hnsw.CosineDistance, clustered(14, 50, 8, 2), 1)
	check := func(t *testing.T, name string, data []byte) {
		t.Helper()
		err := target.Import(bytes.NewReader(data))
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		if !errors.Is(err, hnsw.ErrCorrupt) {
			t.Fatalf("%s: error does not wrap ErrCorrupt: %v", name, err)
		}
		if target.Len() != 50 {
			t.Fatalf("%s: failed import changed the graph", name)
		}
	}
	t.Run("truncated", func(t *testing.T) {
		for _, n := range []int{0, 1, 7, 8, 63, 64, 65, 100, len(file) / 2, len(file) - 5, len(file) - 1} {
			check(t, fmt.Sprintf("first %d bytes", n), file[:n])
		}
		for n := 0; n < len(file); n += 997 {
			check(t, fmt.Sprintf("first %d bytes", n), file[:n])
		}
	})
	t.Run("bit flips", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 1))
		for i := range 200 {
			bad := bytes.Clone(file)
			pos := r.IntN(len(bad))
			if i < 64 {
				pos = i // every header byte
			}
			bad[pos] ^= 1 << r.IntN(8)
			check(t, fmt.Sprintf("flip at byte %d", pos), bad)
		}
	})
	t.Run("not an index", func(t *testing.T) {
		check(t, "text", []byte("this is not an index file, just some text that is long enough for a header"))
		err := target.Import(bytes.NewReader([]byte("this is not an index file, just some text that is long enough for a header")))
		t.Log(err)
	})
	t.Run("other version", func(t *testing.T) {
		bad := bytes.Clone(file)
		bad[8] = 9
		err := target.Import(bytes.NewReader(bad))
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte("version 9")) {
			t.Fatalf("wrong version: %v", err)
		}
	})
}

// TestLookupIntoEqualsLookup: LookupInto gives Lookup's values bit for bit,
// reusing the buffer it is given when it is long enough, and reports a missing
// or deleted key as Lookup does.
func TestLookupIntoEqualsLookup(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bufCap int
	}{
		{"no buffer", 0},
		{"short buffer", 3},
		{"long enough", 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := hnsw.NewGraph[string]()
			r := rand.New(rand.NewPCG(5, 6))
			var nodes []hnsw.Node[string]
			for i := range 50 {
				v := make(hnsw.Vector, 8)
				for j := range v {
					v[j] = r.Float32()*2 - 1
				}
				nodes = append(nodes, hnsw.MakeNode(fmt.Sprintf("k%d", i), v))
			}
			if err := g.Add(nodes...); err != nil {
				t.Fatal(err)
			}
			g.Delete("k7")
			buf := make(hnsw.Vector, 0, tc.bufCap)
			for _, n := range nodes {
				want, wok := g.Lookup(n.Key)
				got, gok := g.LookupInto(n.Key, buf)
				if gok != wok || !slices.Equal(got, want) {
					t.Fatalf("LookupInto(%s) = %v %v, Lookup = %v %v", n.Key, got, gok, want, wok)
				}
				if gok && tc.bufCap >= 8 && &got[0] != &buf[:1][0] {
					t.Fatalf("LookupInto(%s) did not reuse a buffer of capacity %d", n.Key, tc.bufCap)
				}
			}
			if _, ok := g.LookupInto("missing", buf); ok {
				t.Error("LookupInto found a key never added")
			}
		})
	}
}

// TestDefaultSmallBuildIsReproducible asserts that with the default Parallelism a
// graph below AutoParallelMin nodes is built in order, so the same inputs give the
// same graph, byte for byte, on every build, even with several cores: a small
// store's searches (and an evaluation on it) do not vary from run to run.
func TestDefaultSmallBuildIsReproducible(t *testing.T) {
	vecs := clustered(7, min(scaled(3000), hnsw.AutoParallelMin-1), 16, 12)
	export := func() []byte {
		g, _ := build(t, hnsw.CosineDistance, vecs, 0)
		var b bytes.Buffer
		if err := g.Export(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	first := export()
	for i := range 3 {
		if !bytes.Equal(export(), first) {
			t.Fatalf("build %d of %d vectors with Parallelism 0 differs from the first", i+2, len(vecs))
		}
	}
}
