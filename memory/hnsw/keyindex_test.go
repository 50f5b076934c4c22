package hnsw

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestKeyIndex runs random puts, replacements and deletes against a map and
// checks every key after each step: runs that wrap around the table's end and
// deletions in the middle of a run (the entries after it move back) included.
func TestKeyIndex(t *testing.T) {
	for _, tc := range []struct {
		name       string
		keys, ops  int
		deleteFrac float64
	}{
		{"few keys, many collisions", 12, 2000, 0.4},
		{"growing", 3000, 6000, 0.1},
		{"mostly deletes", 200, 4000, 0.7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.keys)))
			var keys sliceKeys // slot -> key, as the core's keys
			x := newKeyIndex[string](0)
			want := map[string]uint32{}
			for op := range tc.ops {
				k := fmt.Sprintf("k%d", rng.IntN(tc.keys))
				if rng.Float64() < tc.deleteFrac {
					_, had := want[k]
					if got := x.del(&keys, k); got != had {
						t.Fatalf("op %d: del(%s) = %v, want %v", op, k, got, had)
					}
					delete(want, k)
				} else {
					slot := uint32(len(keys))
					keys = append(keys, k)
					_, had := want[k]
					if got := x.put(&keys, k, slot); got != had {
						t.Fatalf("op %d: put(%s) = %v, want %v", op, k, got, had)
					}
					want[k] = slot
				}
				if x.len() != len(want) {
					t.Fatalf("op %d: %d keys, want %d", op, x.len(), len(want))
				}
				for i := range tc.keys {
					k := fmt.Sprintf("k%d", i)
					slot, ok := x.get(&keys, k)
					if w, has := want[k]; ok != has || ok && slot != w {
						t.Fatalf("op %d: get(%s) = %d, %v; want %d, %v", op, k, slot, ok, w, has)
					}
				}
			}
		})
	}
}

// sliceKeys is a keySource over a slice of strings.
type sliceKeys []string

func (s *sliceKeys) keyIs(id uint32, k string) bool { return (*s)[id] == k }
func (s *sliceKeys) slotHash(seed uint64, id uint32) uint64 {
	return hashString(seed, (*s)[id])
}
func (s *sliceKeys) keyHash(seed uint64, k string) uint64 { return hashString(seed, k) }
