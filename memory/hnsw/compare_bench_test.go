package hnsw_test

import (
	"fmt"
	"sync"
	"testing"

	coder "github.com/coder/hnsw"

	"github.com/exocortex/exocortex/memory/hnsw"
	"github.com/exocortex/exocortex/memory/hnsw/internal/annbench"
)

var synth struct {
	once  sync.Once
	ds    *annbench.Dataset
	truth [][]int
	ours  *hnsw.Graph[int]
	coder *coder.Graph[int]
}

// BenchmarkCompareSynthetic runs our index, coder/hnsw v0.6.1 and brute force on
// the same 20,000 clustered 64-d vectors (no data file needed), reporting recall@10
// and queries/s for each at several ef, one goroutine per search.
//
//	go test ./memory/hnsw -run '^$' -bench CompareSynthetic -benchtime 500x
func BenchmarkCompareSynthetic(b *testing.B) {
	synth.once.Do(func() {
		synth.ds = annbench.Synthetic(20000, 500, 64, 100, 1)
		synth.truth, _ = annbench.Truth(synth.ds, 10)
		synth.ours, _, _ = annbench.BuildOurs(synth.ds, annbench.Config{M: 16, EfConstruction: 200})
		synth.coder = coder.NewGraph[int]()
		synth.coder.M = 16
		synth.coder.EfSearch = 200
		for i, v := range synth.ds.Base {
			synth.coder.Add(coder.MakeNode(i, v))
		}
	})
	ds := synth.ds
	run := func(b *testing.B, search func(q []float32) []int) {
		got := make([][]int, len(ds.Queries))
		i := 0
		for b.Loop() {
			q := i % len(ds.Queries)
			got[q] = search(ds.Queries[q])
			i++
		}
		if i >= len(ds.Queries) {
			b.ReportMetric(annbench.Recall(synth.truth, got), "recall@10")
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
	}
	b.Run("brute-force", func(b *testing.B) {
		ex := annbench.NewExact(ds)
		run(b, func(q []float32) []int { return ex.Search(q, 10) })
	})
	for _, ef := range []int{20, 40, 80, 200} {
		b.Run(fmt.Sprintf("ours/ef=%d", ef), func(b *testing.B) {
			synth.ours.EfSearch = ef
			run(b, func(q []float32) []int {
				res, _ := synth.ours.SearchWithDistance(q, 10)
				ids := make([]int, len(res))
				for j, r := range res {
					ids[j] = r.Key
				}
				return ids
			})
		})
		b.Run(fmt.Sprintf("coder/ef=%d", ef), func(b *testing.B) {
			synth.coder.EfSearch = ef
			run(b, func(q []float32) []int {
				res := synth.coder.Search(q, 10)
				ids := make([]int, len(res))
				for j, r := range res {
					ids[j] = r.Key
				}
				return ids
			})
		})
	}
}

// BenchmarkAdd measures inserting into a 20,000-vector graph one node at a time, as
// the store does when a memory is saved.
func BenchmarkAdd(b *testing.B) {
	ds := annbench.Synthetic(20000+5000, 0, 64, 100, 2)
	g, _, _ := annbench.BuildOurs(&annbench.Dataset{Dim: 64, Base: ds.Base[:20000]}, annbench.Config{M: 16, EfConstruction: 200})
	i := 0
	for b.Loop() {
		if err := g.Add(hnsw.MakeNode(20000+i, ds.Base[20000+i%5000])); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkDelete measures deleting (with link repair) from a 20,000-vector graph.
// Every deleted key is added back outside the timer, so the graph keeps its size
// however many iterations run.
func BenchmarkDelete(b *testing.B) {
	ds := annbench.Synthetic(20000, 0, 64, 100, 3)
	g, _, _ := annbench.BuildOurs(ds, annbench.Config{M: 16, EfConstruction: 200})
	i := 0
	for b.Loop() {
		k := (i * 7919) % 20000
		if !g.Delete(k) {
			b.Fatalf("key %d missing", k)
		}
		b.StopTimer()
		if err := g.Add(hnsw.MakeNode(k, ds.Base[k])); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		i++
	}
}
