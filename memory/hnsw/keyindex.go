package hnsw

import "unsafe"

// keyIndex finds the live slot of a key: an open-addressing hash table
// (linear probing, at most half full) of slot numbers, whose keys the core
// holds (keySource). Against a map[K]uint32 it holds 4 bytes per entry instead
// of a copy of every key. Its hash is part of the flat file format (version 3
// stores the table and its seed, and an import uses the stored table in place),
// so it is a fixed function of the key's bytes in the file's encoding (the
// string's bytes, or its keyWord) and the seed: FNV-1a
// over the bytes, then the seed mixed in with a 64-bit finaliser.
type keyIndex[K comparable] struct {
	seed uint64
	tab  []uint32 // 1 + slot, 0 for empty; a power of two long
	n    int
}

// keySource is what holds the keys of a keyIndex's slots.
type keySource[K comparable] interface {
	// keyIs reports whether slot id holds key k.
	keyIs(id uint32, k K) bool
	// slotHash is hashKey of slot id's key.
	slotHash(seed uint64, id uint32) uint64
	// keyHash is hashKey of k.
	keyHash(seed uint64, k K) uint64
}

// newSeed is the seed of a new table: fixed, since the table is stored with
// its seed and never meets keys chosen to collide.
const newSeed = 0x9e3779b97f4a7c15

func newKeyIndex[K comparable](hint int) keyIndex[K] {
	size := 8
	for size < 2*hint {
		size *= 2
	}
	return keyIndex[K]{seed: newSeed, tab: make([]uint32, size)}
}

// hashBytes is the table's hash of a key's encoded bytes.
func hashBytes(seed uint64, b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return mix64(h ^ seed)
}

// hashString is hashBytes of s's bytes (read in place, not copied).
func hashString(seed uint64, s string) uint64 {
	return hashBytes(seed, unsafe.Slice(unsafe.StringData(s), len(s)))
}

// hashWord is the hash of a key stored as an 8-byte word.
func hashWord(seed, w uint64) uint64 { return mix64(w ^ seed ^ 0x2545f4914f6cdd1d) }

func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// len is the number of keys.
func (x *keyIndex[K]) len() int { return x.n }

// get returns the slot of k. A probe stops after one turn of the table, so a
// damaged table taken on trust cannot make it loop.
func (x *keyIndex[K]) get(ks keySource[K], k K) (uint32, bool) {
	if x.n == 0 || len(x.tab) == 0 {
		return 0, false
	}
	mask := len(x.tab) - 1
	i := int(ks.keyHash(x.seed, k)) & mask
	for range len(x.tab) {
		e := x.tab[i]
		if e == 0 {
			return 0, false
		}
		if ks.keyIs(e-1, k) {
			return e - 1, true
		}
		i = (i + 1) & mask
	}
	return 0, false
}

// put makes k (the key of slot) map to slot, replacing the slot it had; it
// reports whether k was there already.
func (x *keyIndex[K]) put(ks keySource[K], k K, slot uint32) bool {
	if 2*(x.n+1) > len(x.tab) {
		x.grow(ks)
	}
	mask := len(x.tab) - 1
	for i := int(ks.keyHash(x.seed, k)) & mask; ; i = (i + 1) & mask {
		e := x.tab[i]
		if e == 0 {
			x.tab[i] = slot + 1
			x.n++
			return false
		}
		if ks.keyIs(e-1, k) {
			x.tab[i] = slot + 1
			return true
		}
	}
}

// del removes k, reporting whether it was there; the entries after it in
// its run move back so that no probe stops short of them.
func (x *keyIndex[K]) del(ks keySource[K], k K) bool {
	if x.n == 0 {
		return false
	}
	mask := len(x.tab) - 1
	i := int(ks.keyHash(x.seed, k)) & mask
	for ; ; i = (i + 1) & mask {
		e := x.tab[i]
		if e == 0 {
			return false
		}
		if ks.keyIs(e-1, k) {
			break
		}
	}
	x.tab[i] = 0
	x.n--
	for j := (i + 1) & mask; x.tab[j] != 0; j = (j + 1) & mask {
		h := int(ks.slotHash(x.seed, x.tab[j]-1)) & mask
		// The entry at j may move to the hole at i unless its home lies
		// cyclically in (i, j].
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			x.tab[i], x.tab[j] = x.tab[j], 0
			i = j
		}
	}
	return true
}

func (x *keyIndex[K]) grow(ks keySource[K]) {
	old := x.tab
	if len(old) == 0 {
		x.seed = newSeed
	}
	x.tab = make([]uint32, max(8, 2*len(old)))
	x.n = 0
	mask := len(x.tab) - 1
	for _, e := range old {
		if e == 0 {
			continue
		}
		i := int(ks.slotHash(x.seed, e-1)) & mask
		for x.tab[i] != 0 {
			i = (i + 1) & mask
		}
		x.tab[i] = e
		x.n++
	}
}
