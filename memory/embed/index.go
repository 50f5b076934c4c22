package embed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"unsafe"
)

// A word index lets a word-vector table be used in place, straight from its
// bytes (a mapped file, the table compiled into the binary): a lookup hashes the
// word and probes an open-addressing table stored in the index, and the vectors
// are read when a word is looked up. Nothing is decoded or built when the table
// is loaded, so loading costs a few checks instead of a map of every word.
//
// The index is made from its table (BuildWordIndex) and names the table it was
// made from (its size, modification time, header checksum and body checksum); a
// table that changed, or an index damaged or of another version, is detected at
// load and the index rebuilt, saying so (wordindex.go's callers).
//
// Word index, version 1, little-endian:
//
//	header (128 bytes): magic "EXOGLIDX", version u32, kind u32 (1: the full
//	  word-vector file, 2: a compact table), count u32 (words), slots u32 (a
//	  power of two), source size u64, source modification time u64 (Unix ns; 0
//	  for the compiled-in table), source header checksum u32 (the table's own
//	  header CRC field), source body checksum u32 (the table's trailer), harmonic
//	  number H(source words) f64 (the Zipf normaliser of the SIF weights), source
//	  words u32, CRC-32C of the body u32, 60 reserved bytes, CRC-32C of the 124
//	  bytes before it u32
//	body: count+1 u32 offsets of the words in the table's vocabulary; zero
//	  padding to a multiple of 8 bytes; slots u64 (low 32 bits: word row + 1, 0
//	  for an empty slot; high 32 bits: the top half of the word's FNV-1a 64 hash),
//	  probed linearly from hash & (slots - 1)
const (
	wiMagic      = "EXOGLIDX"
	wiVersion    = 1
	wiHeaderSize = 128
	// wiKindFile and wiKindCompact are the kinds of table an index serves.
	wiKindFile    = 1
	wiKindCompact = 2
)

// ErrStaleIndex is wrapped by the errors of a word index that is well formed but
// was made from another table than the one beside it.
var ErrStaleIndex = errors.New("word index is stale")

// wordIndexSource identifies the table an index is made from.
type wordIndexSource struct {
	kind      uint32
	size      uint64
	mtime     uint64
	headerSum uint32
	bodySum   uint32
	words     uint32 // source words: the SIF weights' vocabulary size
}

// wordIndex is a parsed word index; its slices alias the index's bytes.
type wordIndex struct {
	src      wordIndexSource
	count    int
	offs     []byte // count+1 u32
	slots    []byte // u64 each
	mask     uint64
	harmonic float64
}

// harmonic returns H(n) = 1 + 1/2 + … + 1/n, summed from the smallest term as
// sifWeights always has (the same float64 result bit for bit).
func harmonic(n int) float64 {
	var h float64
	for r := n; r >= 1; r-- {
		h += 1 / float64(r)
	}
	return h
}

// fnv1a64 hashes a word (FNV-1a, 64 bits): stable across processes and builds,
// which the stored table needs.
func fnv1a64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// wiSlots is the number of slots for n words: a power of two at least 1.5 n, so
// linear probing stays short (load factor at most 2/3).
func wiSlots(n int) int {
	want := max(n+n/2, 8)
	return 1 << bits.Len(uint(want-1))
}

// buildWordIndex makes the index of a table of count words whose i-th word is
// vocab[offs[i]:offs[i+1]] (offs holds count+1 offsets, checked by the caller).
// The first of duplicate words wins, as in the frequency order the most
// frequent does.
func buildWordIndex(src wordIndexSource, offs []uint32, vocab []byte) []byte {
	count := len(offs) - 1
	nslots := wiSlots(count)
	offBytes := (4*(count+1) + 7) &^ 7
	out := make([]byte, wiHeaderSize+offBytes+8*nslots)
	body := out[wiHeaderSize:]
	for i, o := range offs {
		binary.LittleEndian.PutUint32(body[4*i:], o)
	}
	slots := body[offBytes:]
	mask := uint64(nslots - 1)
	for i := range count {
		w := bytesString(vocab[offs[i]:offs[i+1]])
		h := fnv1a64(w)
		for s := h & mask; ; s = (s + 1) & mask {
			slot := binary.LittleEndian.Uint64(slots[8*s:])
			if slot == 0 {
				binary.LittleEndian.PutUint64(slots[8*s:], h&^0xffffffff|uint64(i+1))
				break
			}
			if slot>>32 == h>>32 {
				r := int(uint32(slot)) - 1
				if string(vocab[offs[r]:offs[r+1]]) == w {
					break // a duplicate: the earlier, more frequent word keeps the slot
				}
			}
		}
	}
	hdr := out[:wiHeaderSize]
	copy(hdr, wiMagic)
	binary.LittleEndian.PutUint32(hdr[8:], wiVersion)
	binary.LittleEndian.PutUint32(hdr[12:], src.kind)
	binary.LittleEndian.PutUint32(hdr[16:], uint32(count))
	binary.LittleEndian.PutUint32(hdr[20:], uint32(nslots))
	binary.LittleEndian.PutUint64(hdr[24:], src.size)
	binary.LittleEndian.PutUint64(hdr[32:], src.mtime)
	binary.LittleEndian.PutUint32(hdr[40:], src.headerSum)
	binary.LittleEndian.PutUint32(hdr[44:], src.bodySum)
	binary.LittleEndian.PutUint64(hdr[48:], math.Float64bits(harmonic(int(src.words))))
	binary.LittleEndian.PutUint32(hdr[56:], src.words)
	binary.LittleEndian.PutUint32(hdr[60:], crc32.Checksum(body, castagnoli))
	binary.LittleEndian.PutUint32(hdr[124:], crc32.Checksum(hdr[:124], castagnoli))
	return out
}

func wiCorrupt(format string, args ...any) error {
	return fmt.Errorf("%w: word index: %s", ErrCorruptVectors, fmt.Sprintf(format, args...))
}

// parseWordIndex checks an index (header, size, body checksum) and that it was
// made from the table src describes; vocabBytes is the size of that table's
// vocabulary, which every offset must stay within. The result aliases b.
func parseWordIndex(b []byte, src wordIndexSource, vocabBytes uint64) (*wordIndex, error) {
	if len(b) < wiHeaderSize {
		return nil, wiCorrupt("%d bytes is too short", len(b))
	}
	hdr := b[:wiHeaderSize]
	if string(hdr[:8]) != wiMagic {
		return nil, wiCorrupt("bad magic %q", hdr[:8])
	}
	if v := binary.LittleEndian.Uint32(hdr[8:]); v != wiVersion {
		return nil, fmt.Errorf("%w: format version %d, this build reads version %d", ErrStaleIndex, v, wiVersion)
	}
	if crc32.Checksum(hdr[:124], castagnoli) != binary.LittleEndian.Uint32(hdr[124:]) {
		return nil, wiCorrupt("header checksum mismatch")
	}
	got := wordIndexSource{
		kind:      binary.LittleEndian.Uint32(hdr[12:]),
		size:      binary.LittleEndian.Uint64(hdr[24:]),
		mtime:     binary.LittleEndian.Uint64(hdr[32:]),
		headerSum: binary.LittleEndian.Uint32(hdr[40:]),
		bodySum:   binary.LittleEndian.Uint32(hdr[44:]),
		words:     binary.LittleEndian.Uint32(hdr[56:]),
	}
	if got != src {
		return nil, fmt.Errorf("%w: made from a table of %d bytes (modified %d, checksums %08x/%08x), not this one of %d bytes (modified %d, checksums %08x/%08x)",
			ErrStaleIndex, got.size, got.mtime, got.headerSum, got.bodySum, src.size, src.mtime, src.headerSum, src.bodySum)
	}
	count := int(binary.LittleEndian.Uint32(hdr[16:]))
	nslots := int(binary.LittleEndian.Uint32(hdr[20:]))
	if nslots != wiSlots(count) {
		return nil, wiCorrupt("%d slots for %d words, expected %d", nslots, count, wiSlots(count))
	}
	offBytes := (4*(count+1) + 7) &^ 7
	if want := wiHeaderSize + offBytes + 8*nslots; len(b) != want {
		return nil, wiCorrupt("size %d bytes does not match the header (%d words, %d slots: %d bytes)", len(b), count, nslots, want)
	}
	body := b[wiHeaderSize:]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(hdr[60:]) {
		return nil, wiCorrupt("body checksum mismatch")
	}
	ix := &wordIndex{
		src:      src,
		count:    count,
		offs:     body[:4*(count+1)],
		slots:    body[offBytes:],
		mask:     uint64(nslots - 1),
		harmonic: math.Float64frombits(binary.LittleEndian.Uint64(hdr[48:])),
	}
	if h := ix.harmonic; math.IsNaN(h) || h < 1 {
		return nil, wiCorrupt("harmonic number %v", h)
	}
	if last := binary.LittleEndian.Uint32(ix.offs[4*count:]); binary.LittleEndian.Uint32(ix.offs) != 0 || uint64(last) != vocabBytes {
		return nil, wiCorrupt("the offsets span %d..%d of a %d-byte vocabulary", binary.LittleEndian.Uint32(ix.offs), last, vocabBytes)
	}
	return ix, nil
}

// off returns word i's start and end in the vocabulary.
func (ix *wordIndex) off(i int) (uint32, uint32) {
	return binary.LittleEndian.Uint32(ix.offs[4*i:]), binary.LittleEndian.Uint32(ix.offs[4*i+4:])
}

// word returns word i, aliasing vocab.
func (ix *wordIndex) word(vocab []byte, i int) string {
	a, b := ix.off(i)
	if b <= a || uint64(b) > uint64(len(vocab)) {
		return ""
	}
	return bytesString(vocab[a:b])
}

// lookup returns word's row.
func (ix *wordIndex) lookup(vocab []byte, word string) (int, bool) {
	h := fnv1a64(word)
	s := h & ix.mask
	for range len(ix.slots) / 8 {
		slot := binary.LittleEndian.Uint64(ix.slots[8*s:])
		if slot == 0 {
			return 0, false
		}
		if slot>>32 == h>>32 {
			if r := int(uint32(slot)) - 1; r < ix.count && ix.word(vocab, r) == word {
				return r, true
			}
		}
		s = (s + 1) & ix.mask
	}
	return 0, false
}

// bytesString views b as a string without copying; b must not change.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
