package hnsw

import "hash/maphash"

// keyIndex finds the live slot of a key: an open-addressing hash table
// (linear probing, at most half full) of slot numbers, whose keys are the
// core's keys slice. Against a map[K]uint32 it holds 4 bytes per entry
// instead of a copy of every key, and is made and filled in a fraction of the
// time, which a graph imported on every open pays.
type keyIndex[K comparable] struct {
	seed maphash.Seed
	tab  []uint32 // 1 + slot, 0 for empty
	n    int
}

func newKeyIndex[K comparable](hint int) keyIndex[K] {
	size := 8
	for size < 2*hint {
		size *= 2
	}
	return keyIndex[K]{seed: maphash.MakeSeed(), tab: make([]uint32, size)}
}

func (x *keyIndex[K]) home(k K) int {
	return int(maphash.Comparable(x.seed, k) & uint64(len(x.tab)-1))
}

// len is the number of keys.
func (x *keyIndex[K]) len() int { return x.n }

// get returns the slot of k.
func (x *keyIndex[K]) get(keys []K, k K) (uint32, bool) {
	if x.n == 0 {
		return 0, false
	}
	mask := len(x.tab) - 1
	for i := x.home(k); ; i = (i + 1) & mask {
		e := x.tab[i]
		if e == 0 {
			return 0, false
		}
		if keys[e-1] == k {
			return e - 1, true
		}
	}
}

// put makes k (whose key keys[slot] is) map to slot, replacing the slot it
// had; it reports whether k was there already.
func (x *keyIndex[K]) put(keys []K, k K, slot uint32) bool {
	if 2*(x.n+1) > len(x.tab) {
		x.grow(keys)
	}
	mask := len(x.tab) - 1
	for i := x.home(k); ; i = (i + 1) & mask {
		e := x.tab[i]
		if e == 0 {
			x.tab[i] = slot + 1
			x.n++
			return false
		}
		if keys[e-1] == k {
			x.tab[i] = slot + 1
			return true
		}
	}
}

// del removes k, reporting whether it was there; the entries after it in
// its run move back so that no probe stops short of them.
func (x *keyIndex[K]) del(keys []K, k K) bool {
	if x.n == 0 {
		return false
	}
	mask := len(x.tab) - 1
	i := x.home(k)
	for ; ; i = (i + 1) & mask {
		e := x.tab[i]
		if e == 0 {
			return false
		}
		if keys[e-1] == k {
			break
		}
	}
	x.tab[i] = 0
	x.n--
	for j := (i + 1) & mask; x.tab[j] != 0; j = (j + 1) & mask {
		h := x.home(keys[x.tab[j]-1])
		// The entry at j may move to the hole at i unless its home lies
		// cyclically in (i, j].
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			x.tab[i], x.tab[j] = x.tab[j], 0
			i = j
		}
	}
	return true
}

func (x *keyIndex[K]) grow(keys []K) {
	old := x.tab
	if len(old) == 0 {
		x.seed = maphash.MakeSeed()
	}
	x.tab = make([]uint32, max(8, 2*len(old)))
	x.n = 0
	mask := len(x.tab) - 1
	for _, e := range old {
		if e == 0 {
			continue
		}
		i := x.home(keys[e-1])
		for x.tab[i] != 0 {
			i = (i + 1) & mask
		}
		x.tab[i] = e
		x.n++
	}
}
