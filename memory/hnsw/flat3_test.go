package hnsw

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	mrand "math/rand"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// v3Graph builds a string-keyed graph with tombstones, for the flat format's
// version 3 tests, and returns it with queries.
func v3Graph(t *testing.T, n int) (*Graph[string], [][]float32) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	vec := func() []float32 {
		v := make([]float32, 8)
		for i := range v {
			v[i] = rng.Float32()*2 - 1
		}
		return v
	}
	g := NewGraph[string]()
	g.RebuildRatio = -1
	g.Rng = mrand.New(mrand.NewSource(2))
	nodes := make([]Node[string], n)
	for i := range nodes {
		nodes[i] = MakeNode(fmt.Sprintf("rec-%d%s", i, strings.Repeat("x", i%5)), vec())
	}
	if err := g.Add(nodes...); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += 7 {
		g.Delete(nodes[i].Key)
	}
	qs := make([][]float32, 30)
	for i := range qs {
		qs[i] = vec()
	}
	return g, qs
}

func aligned(b []byte) []byte {
	buf := make([]uint64, (len(b)+7)/8)
	out := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(b))
	copy(out, b)
	return out
}

// v3Layout returns the sections of a version 3 file of a string-keyed graph.
func v3Layout(t *testing.T, file []byte) (flatLayout, int) {
	t.Helper()
	n := binary.LittleEndian.Uint64(file[40:])
	m := binary.LittleEndian.Uint32(file[20:])
	dim := binary.LittleEndian.Uint32(file[16:])
	z, err := parseSizes(flatVersion, file[headerSize:headerSize+48], n, int(m))
	if err != nil {
		t.Fatal(err)
	}
	lay, ok := layout(flatVersion, n, uint64(dim), uint64(2*m), z, true)
	if !ok {
		t.Fatal("layout")
	}
	return lay, headerSize + 48
}

// TestFlatV3InPlace: a version 3 import uses the key table, the upper layers
// and the keys where the bytes lie (no per-slot slice is made), answers as
// the exported graph does, hands out keys that do not point into the bytes,
// and keeps working as it grows, deletes, rebuilds and is exported again.
func TestFlatV3InPlace(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		t.Run(fmt.Sprintf("trusted %v", trusted), func(t *testing.T) {
			g, qs := v3Graph(t, 700)
			var buf bytes.Buffer
			if err := g.Export(&buf); err != nil {
				t.Fatal(err)
			}
			b := aligned(buf.Bytes())
			h := NewGraph[string]()
			h.RebuildRatio = -1
			if err := h.ImportBytes(b, ImportOptions{Trusted: trusted, Keep: b}); err != nil {
				t.Fatal(err)
			}
			c := h.c
			inB := func(p unsafe.Pointer) bool {
				a := uintptr(p)
				return a >= uintptr(unsafe.Pointer(&b[0])) && a < uintptr(unsafe.Pointer(&b[0]))+uintptr(len(b))
			}
			if c.kbase != c.n || len(c.keys) != 0 || !inB(unsafe.Pointer(&c.byKey.tab[0])) || !inB(unsafe.Pointer(&c.upOff[0])) || !inB(unsafe.Pointer(&c.up[0])) {
				t.Fatalf("not used in place: kbase %d of %d, %d keys in memory", c.kbase, c.n, len(c.keys))
			}
			if h.Len() != g.Len() || h.Tombstones() != g.Tombstones() {
				t.Fatalf("Len %d/%d, tombstones %d/%d", h.Len(), g.Len(), h.Tombstones(), g.Tombstones())
			}
			var kept []string
			for i, q := range qs {
				a, _ := g.SearchWithDistance(q, 10)
				r, _ := h.SearchWithDistance(q, 10)
				if !slices.Equal(a, r) {
					t.Fatalf("query %d: %v, want %v", i, r, a)
				}
				for _, x := range r {
					if inB(unsafe.Pointer(unsafe.StringData(x.Key))) {
						t.Fatalf("key %q points into the imported bytes", x.Key)
					}
					kept = append(kept, x.Key)
				}
			}
			for i := range 700 {
				k := fmt.Sprintf("rec-%d%s", i, strings.Repeat("x", i%5))
				v1, ok1 := g.Lookup(k)
				v2, ok2 := h.Lookup(k)
				if ok1 != ok2 || !slices.Equal(v1, v2) {
					t.Fatalf("Lookup(%s): %v %v, want %v %v", k, ok2, v2, ok1, v1)
				}
			}
			// Grow: new keys, a replaced imported key, deletes of both kinds.
			rng := rand.New(rand.NewPCG(3, 4))
			for i := range 300 {
				v := make([]float32, 8)
				for j := range v {
					v[j] = rng.Float32()*2 - 1
				}
				key := fmt.Sprintf("new-%d", i)
				if i%10 == 0 {
					key = fmt.Sprintf("rec-%d%s", i+1, strings.Repeat("x", (i+1)%5)) // replaces an imported one
				}
				for _, gr := range []*Graph[string]{g, h} {
					if err := gr.Add(MakeNode(key, v)); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, k := range []string{"rec-2xx", "new-5", "rec-3xxx", "missing"} {
				if a, b := g.Delete(k), h.Delete(k); a != b {
					t.Fatalf("Delete(%s) = %v, want %v", k, b, a)
				}
			}
			if h.Len() != g.Len() {
				t.Fatalf("Len %d, want %d", h.Len(), g.Len())
			}
			// A rebuild drops the imported bytes' slots; an export and a fresh
			// import answer the same.
			h.RebuildRatio = 0.01
			h.Delete("rec-4xxxx")
			g.Delete("rec-4xxxx")
			if h.c.kbase != 0 || h.Tombstones() != 0 {
				t.Fatalf("no rebuild: kbase %d, %d tombstones", h.c.kbase, h.Tombstones())
			}
			var again bytes.Buffer
			if err := h.Export(&again); err != nil {
				t.Fatal(err)
			}
			h2 := NewGraph[string]()
			if err := h2.ImportBytes(aligned(again.Bytes()), ImportOptions{}); err != nil {
				t.Fatal(err)
			}
			for i, q := range qs {
				a, _ := h.SearchWithDistance(q, 10)
				r, _ := h2.SearchWithDistance(q, 10)
				if !slices.Equal(a, r) || len(r) == 0 {
					t.Fatalf("query %d after rebuild and export: %v, want %v", i, r, a)
				}
				for _, x := range r {
					if _, ok := g.Lookup(x.Key); !ok {
						t.Fatalf("hit %q is not in the reference graph", x.Key)
					}
				}
			}
			// The keys handed out survive the bytes being overwritten (as an
			// unmapped file's would be).
			want := slices.Clone(kept)
			for i := range b {
				b[i] = 'z'
			}
			if !slices.Equal(kept, want) {
				t.Fatal("keys changed when the imported bytes did")
			}
		})
	}
}

// TestFlatV3Damage: damage in each section version 3 adds is found by a
// checked import even when the body checksum is made to match (so the
// structural checks, not the checksum, find it); the sizes' own checksum
// and a cut are found even when trusted; a trusted import of a key table
// with no empty entry cannot make a lookup loop.
func TestFlatV3Damage(t *testing.T) {
	g, _ := v3Graph(t, 400)
	var buf bytes.Buffer
	if err := g.Export(&buf); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	lay, body := v3Layout(t, file)
	resum := func(b []byte) []byte {
		sum := crc32.Checksum(b[headerSize:len(b)-4], crcTable)
		binary.LittleEndian.PutUint32(b[len(b)-4:], sum)
		return b
	}
	at := func(off uint64) int { return body + int(off) }
	put32 := func(off int, v uint32) func([]byte) {
		return func(b []byte) { binary.LittleEndian.PutUint32(b[off:], v) }
	}
	zeroTab := func(b []byte) {
		for i := at(lay.tab); i < at(lay.koffs); i += 4 {
			if binary.LittleEndian.Uint32(b[i:]) != 0 {
				binary.LittleEndian.PutUint32(b[i:], 0)
				return
			}
		}
	}
	dupTab := func(b []byte) { // an empty entry names a live slot a second time
		var live uint32
		for i := at(lay.tab); i < at(lay.koffs); i += 4 {
			if e := binary.LittleEndian.Uint32(b[i:]); e != 0 {
				live = e
				break
			}
		}
		for i := at(lay.tab); i < at(lay.koffs); i += 4 {
			if binary.LittleEndian.Uint32(b[i:]) == 0 {
				binary.LittleEndian.PutUint32(b[i:], live)
				return
			}
		}
	}
	for _, tc := range []struct {
		name    string
		damage  func([]byte)
		trusted bool // the error is found when trusted too
	}{
		{"upper offset", put32(at(lay.upOff)+4*5, 99999), false},
		{"key table entry removed", zeroTab, false},
		{"key table entry doubled", dupTab, false},
		{"key table names a slot past the end", func(b []byte) { zeroTab(b); dupTab(b); put32(at(lay.tab), 100000)(b) }, false},
		{"key offset", func(b []byte) { b[at(lay.koffs)+8*3] ^= 1 }, false},
		{"key length", func(b []byte) { b[at(lay.keys)] = 0x7f }, false},
		{"duplicate key", func(b []byte) { // live slot 8's key "rec-8xxx" becomes live slot 3's
			off := binary.LittleEndian.Uint64(b[at(lay.koffs)+8*8:])
			copy(b[at(lay.keys)+int(off)+1:], "rec-3")
		}, false},
		{"sizes", func(b []byte) { b[headerSize+20] ^= 1 }, true},
		{"sizes: live count", func(b []byte) {
			binary.LittleEndian.PutUint64(b[headerSize+32:], 3)
			binary.LittleEndian.PutUint32(b[headerSize+40:], crc32.Checksum(b[headerSize:headerSize+40], crcTable))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := bytes.Clone(file)
			tc.damage(b)
			resum(b)
			for _, trusted := range []bool{false, true} {
				h := NewGraph[string]()
				err := h.ImportBytes(aligned(b), ImportOptions{Trusted: trusted})
				want := !trusted || tc.trusted
				if (err != nil) != want || err != nil && !errors.Is(err, ErrCorrupt) {
					t.Fatalf("trusted %v: %v, want an error wrapping ErrCorrupt: %v", trusted, err, want)
				}
				t.Logf("trusted %v: %v", trusted, err)
			}
		})
	}
	t.Run("cut in a new section", func(t *testing.T) {
		for _, end := range []uint64{lay.upOff + 8, lay.tab + 8, lay.koffs + 8, lay.keys + 8} {
			for _, trusted := range []bool{false, true} {
				h := NewGraph[string]()
				if err := h.ImportBytes(aligned(file[:at(end)]), ImportOptions{Trusted: trusted}); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("cut at %d, trusted %v: %v", end, trusted, err)
				}
			}
		}
	})
	t.Run("full key table, trusted", func(t *testing.T) {
		b := aligned(file)
		for i := at(lay.tab); i < at(lay.koffs); i += 4 {
			binary.LittleEndian.PutUint32(b[i:], 2) // every entry slot 1
		}
		h := NewGraph[string]()
		if err := h.ImportBytes(b, ImportOptions{Trusted: true, Keep: b}); err != nil {
			t.Fatal(err)
		}
		if _, ok := h.Lookup("no such key"); ok {
			t.Fatal("found a key that is not there")
		}
	})
}
