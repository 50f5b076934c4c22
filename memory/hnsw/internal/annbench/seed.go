package annbench

import (
	"math/rand"

	coder "github.com/coder/hnsw"
)

// withSeed gives coder/hnsw a fixed level generator, as ours has.
func withSeed(g *coder.Graph[int]) *coder.Graph[int] {
	g.Rng = rand.New(rand.NewSource(1))
	return g
}
