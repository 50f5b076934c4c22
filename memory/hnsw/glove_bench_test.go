package hnsw_test

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/exocortex/exocortex/memory/hnsw"
	"github.com/exocortex/exocortex/memory/hnsw/internal/annbench"
)

// gloveFile is where scripts/fetch-glove.sh writes the vectors, from this package.
const gloveFile = "../../data/glove-100d.bin"

var glove struct {
	once  sync.Once
	ds    *annbench.Dataset
	err   error
	truth [][]int
	g     *hnsw.Graph[int]
	build annbench.Row
}

func loadGloVe(b *testing.B) {
	glove.once.Do(func() {
		path := gloveFile
		if p := os.Getenv("EXOCORTEX_GLOVE"); p != "" {
			path = p
		}
		glove.ds, glove.err = annbench.GloVe(path, 1000, 1)
		if glove.err != nil {
			return
		}
		if n := os.Getenv("EXOCORTEX_GLOVE_N"); n != "" {
			var lim int
			fmt.Sscan(n, &lim)
			if lim > 0 && lim < len(glove.ds.Base) {
				glove.ds.Base = glove.ds.Base[:lim]
			}
		}
		glove.truth, _ = annbench.Truth(glove.ds, 10)
		glove.g, glove.build, glove.err = annbench.BuildOurs(glove.ds, annbench.Config{M: 16, EfConstruction: 200})
	})
	if errors.Is(glove.err, annbench.ErrNoData) {
		b.Skipf("skipping the GloVe benchmark: %v", glove.err)
	}
	if glove.err != nil {
		b.Fatal(glove.err)
	}
}

// BenchmarkGloVe builds an index of 340,479 GloVe vectors (M 16, efConstruction
// 200, on GOMAXPROCS goroutines; a few minutes on 2 cores) and searches it with the
// 1,000 held-out words at several EfSearch values on one goroutine, reporting
// recall@10, queries/s, and the build's wall and CPU time.
// It needs data/glove-100d.bin (make glove) and skips without it; EXOCORTEX_GLOVE_N
// limits the base set for a quicker run. For the side-by-side table with
// coder/hnsw and brute force, run cmd/hnswbench.
//
//	go test ./memory/hnsw -run '^$' -bench GloVe -benchtime 1000x -timeout 0
func BenchmarkGloVe(b *testing.B) {
	loadGloVe(b)
	b.ReportMetric(glove.build.BuildSec, "build-s")
	b.ReportMetric(glove.build.BuildCPU, "build-cpu-s")
	b.ReportMetric(glove.build.HeapMB, "heap-MB")
	for _, ef := range []int{40, 80, 120, 200, 400} {
		b.Run(fmt.Sprintf("ef=%d", ef), func(b *testing.B) {
			g, ds := glove.g, glove.ds
			g.EfSearch = ef
			got := make([][]int, len(ds.Queries))
			i := 0
			for b.Loop() {
				q := i % len(ds.Queries)
				res, _ := g.SearchWithDistance(ds.Queries[q], 10)
				ids := make([]int, len(res))
				for j, r := range res {
					ids[j] = r.Key
				}
				got[q] = ids
				i++
			}
			if i >= len(ds.Queries) {
				b.ReportMetric(annbench.Recall(glove.truth, got), "recall@10")
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
		})
	}
}
