package hnsw_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/exocortex/exocortex/memory/hnsw"
)

// FuzzImport feeds arbitrary bytes to Import: it must return an error or a graph
// that can be searched, and never panic. The seeds (a valid file and damaged
// copies) run as part of go test; `go test -fuzz FuzzImport ./memory/hnsw` explores.
func FuzzImport(f *testing.F) {
	g := hnsw.NewGraph[string]()
	for i, v := range clustered(20, 60, 4, 3) {
		_ = g.Add(hnsw.MakeNode(string(rune('a'+i%26))+string(rune('A'+i/26)), v))
	}
	g.Delete("bA")
	var buf bytes.Buffer
	if err := g.Export(&buf); err != nil {
		f.Fatal(err)
	}
	valid := buf.Bytes()
	f.Add(valid)
	f.Add(valid[:len(valid)/3])
	f.Add([]byte{})
	f.Add([]byte("EXOHNSW\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h := hnsw.NewGraph[string]()
		err := h.Import(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, hnsw.ErrCorrupt) && h.Len() != 0 {
				t.Fatalf("failed import changed the graph: %v", err)
			}
			return
		}
		if h.Len() > 0 {
			q := make([]float32, h.Dims())
			q[0] = 1
			h.Search(q, 5)
			_ = h.Add(hnsw.MakeNode("new", q))
		}
	})
}
