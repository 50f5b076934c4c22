package hnsw_test

import (
	"bytes"
	"fmt"

	"github.com/exocortex/exocortex/memory/hnsw"
)

func Example() {
	g := hnsw.NewGraph[string]() // cosine distance, M 16, EfSearch 100
	_ = g.Add(
		hnsw.MakeNode("apple", []float32{1, 0.1, 0}),
		hnsw.MakeNode("pear", []float32{0.9, 0.2, 0}),
		hnsw.MakeNode("car", []float32{0, 0.1, 1}),
	)
	hits, _ := g.SearchWithDistance([]float32{1, 0, 0}, 2)
	for _, h := range hits {
		fmt.Printf("%s %.3f\n", h.Key, h.Distance)
	}

	g.Delete("pear")
	_ = g.Add(hnsw.MakeNode("apple", []float32{0, 0, 1})) // replaces the vector
	fmt.Println(g.Len(), g.Search([]float32{0, 0, 1}, 1)[0].Key)

	var file bytes.Buffer
	_ = g.Export(&file)
	h := hnsw.NewGraph[string]()
	if err := h.Import(&file); err != nil {
		fmt.Println("rebuild:", err)
	}
	fmt.Println(h.Len())
	// Output:
	// apple 0.005
	// pear 0.024
	// 2 apple
	// 2
}
