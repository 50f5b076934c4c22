package hnsw_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"unsafe"

	"github.com/exocortex/exocortex/memory/hnsw"
)

// aligned8 returns a copy of b starting at an 8-byte aligned address, as a
// mapped file (page-aligned) is.
func aligned8(b []byte) []byte {
	buf := make([]uint64, (len(b)+7)/8)
	out := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(b))
	copy(out, b)
	return out
}

// TestImportBytes: a graph imported from its file's bytes answers as the
// exported one did, checked or trusted and from either format version; the
// flat format's arrays are used in place (a deletion writes to the bytes) and
// the graph grows out of them; a changed byte in the body is found unless the
// bytes are trusted, and a cut or padded file is found either way.
func TestImportBytes(t *testing.T) {
	n := scaled(1500)
	data := clustered(16, n+50, 16, 20)
	g, _ := build(t, hnsw.CosineDistance, data[:n], 2)
	g.RebuildRatio = -1
	for k := 0; k < n; k += 13 {
		g.Delete(k)
	}
	for _, version := range []uint32{1, 2, 3} {
		var buf bytes.Buffer
		if err := g.ExportVersion(&buf, version); err != nil {
			t.Fatal(err)
		}
		file := buf.Bytes()
		for _, trusted := range []bool{false, true} {
			t.Run(fmt.Sprintf("version %d trusted %v", version, trusted), func(t *testing.T) {
				b := aligned8(file)
				h := hnsw.NewGraph[int]()
				if err := h.ImportBytes(b, hnsw.ImportOptions{Trusted: trusted, Keep: b}); err != nil {
					t.Fatal(err)
				}
				if h.Len() != g.Len() || h.Tombstones() != g.Tombstones() {
					t.Fatalf("Len %d/%d, tombstones %d/%d", h.Len(), g.Len(), h.Tombstones(), g.Tombstones())
				}
				for i, q := range data[n:] {
					a, _ := g.SearchWithDistance(q, 10)
					c, _ := h.SearchWithDistance(q, 10)
					if !slices.Equal(a, c) {
						t.Fatalf("query %d: results differ after ImportBytes:\n%v\n%v", i, a, c)
					}
				}
				before := bytes.Clone(b)
				h.Delete(1)
				if inPlace := !bytes.Equal(before, b); inPlace != (version != 1) {
					t.Errorf("a deletion changed the imported bytes: %v, want %v (in place only for the flat format)", inPlace, version != 1)
				}
				for k := range 300 {
					if err := h.Add(hnsw.MakeNode(n+k, data[n+k%50])); err != nil {
						t.Fatal(err)
					}
				}
				if res := h.Search(data[n+3], 1); len(res) != 1 {
					t.Fatalf("search after adding: %v", res)
				}
			})
		}
	}

	var buf bytes.Buffer
	if err := g.Export(&buf); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	body := 64 + 48 + 12*n // a byte of the vectors in the flat body (after 9n bytes of flags, norms and levels)
	damage := []struct {
		name    string
		b       []byte
		trusted bool
		wantErr bool
	}{
		{"a body byte changed", flipAt(file, body), false, true},
		{"a body byte changed, trusted", flipAt(file, body), true, false},
		{"cut short", file[:len(file)-9], false, true},
		{"cut short, trusted", file[:len(file)-9], true, true},
		{"padded, trusted", append(bytes.Clone(file), 0, 0, 0, 0), true, true},
		{"header changed, trusted", flipAt(file, 20), true, true},
	}
	for _, d := range damage {
		t.Run(d.name, func(t *testing.T) {
			h := hnsw.NewGraph[int]()
			err := h.ImportBytes(aligned8(d.b), hnsw.ImportOptions{Trusted: d.trusted})
			if (err != nil) != d.wantErr || (err != nil && !errors.Is(err, hnsw.ErrCorrupt)) {
				t.Fatalf("ImportBytes: %v, want an error wrapping ErrCorrupt: %v", err, d.wantErr)
			}
			if err != nil && h.Len() != 0 {
				t.Fatalf("a failed import left %d nodes", h.Len())
			}
		})
	}
}

func flipAt(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x10
	return c
}
