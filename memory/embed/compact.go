package embed

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"log/slog"
	"math"
	"unsafe"

	_ "embed" // the built-in word-vector table
)

// The compact word-vector table is compiled into the binary, so the store has
// vectors on a machine where the full file (scripts/fetch-glove.sh) was never
// fetched. It holds the CompactWords most frequent words of the full file with
// their vectors quantised to int8 (one float32 scale per word), the full file's
// common component and its vocabulary size (the SIF weights are Zipf estimates
// from a word's rank among all the words, so a word weighs the same in both).
// cmd/glovecompact makes it from the full file; `make generate` runs it when the
// full file is there (docs/perf/memory.md has the measurements behind the size).
//
// The table's word index (index.go) is made from the table by the same
// command, so loading the table reads it in place (LoadBuiltin).
//
//go:generate go run ./cmd/glovecompact -in ../../data/glove-100d.bin -out compact/glove-compact.bin -skip-missing
//go:embed compact/glove-compact.bin
var compactTable string

//go:embed compact/glove-compact.bin.idx
var compactIndex string

// CompactWords and CompactBits are what cmd/glovecompact keeps by default: how
// many of the most frequent words, and bits per quantised value.
const (
	CompactWords = 50000
	CompactBits  = 8
)

// Compact word-vector table, version 1, little-endian:
//
//	header (64 bytes): magic "EXOGLVQ8", version u32, dim u32, count u32,
//	  source count u32 (words in the file it was taken from), source checksum u32
//	  (that file's body CRC-32C), flags u32 (bit 0: a principal component
//	  follows), vocabulary bytes u32, bits per value u32 (8 or 4), 20 reserved
//	  bytes, CRC-32C of the 60 bytes before it u32
//	body: count u8 word lengths; the words, concatenated, UTF-8; count f32
//	  scales; count × dim signed values of `bits` bits (word i's vector is value ×
//	  scale i; with 4 bits two values share a byte, the first in the low half);
//	  dim f32 principal component if flagged
//	trailer: CRC-32C of the body u32
const (
	cqMagic      = "EXOGLVQ8"
	cqVersion    = 1
	cqHeaderSize = 64
	cqFlagPC     = 1
)

// CompactInfo describes a compact table without decoding its vectors.
type CompactInfo struct {
	Dim, Words int
	// SourceWords is the vocabulary size of the file the table was taken from.
	SourceWords int
	// SourceChecksum is that file's body checksum (WordVectors.Checksum).
	SourceChecksum uint32
	// Bits is the width of a quantised value (8 or 4).
	Bits  int
	Bytes int
}

// IsCompact reports whether b starts like a compact word-vector table.
func IsCompact(b []byte) bool { return len(b) >= 8 && string(b[:8]) == cqMagic }

// EncodeCompact quantises the first n words of wv (all of them if n <= 0 or n
// exceeds its length) into a compact table of bits-bit values (8 or 4). Each
// vector keeps its direction to within the rounding: value = round(x / scale),
// scale = max|x| / (2^(bits-1) - 1). The output depends only on its arguments.
func EncodeCompact(wv *WordVectors, n, bits int) ([]byte, error) {
	if n <= 0 || n > wv.Len() {
		n = wv.Len()
	}
	dim := wv.Dim
	if dim <= 0 || wv.place == nil && len(wv.Vectors) < n*dim {
		return nil, fmt.Errorf("compact table: %d words of %d dimensions but %d floats", wv.Len(), dim, len(wv.Vectors))
	}
	if bits != 8 && bits != 4 {
		return nil, fmt.Errorf("compact table: %d bits per value; use 8 or 4", bits)
	}
	if bits == 4 && dim%2 != 0 {
		return nil, fmt.Errorf("compact table: 4-bit values need an even number of dimensions, not %d", dim)
	}
	top := float32(int(1)<<(bits-1) - 1)
	if wv.PC != nil && len(wv.PC) != dim {
		return nil, fmt.Errorf("compact table: principal component has %d dimensions, want %d", len(wv.PC), dim)
	}
	vocab := 0
	for i := range n {
		w := wv.Word(i)
		if len(w) > 255 {
			return nil, fmt.Errorf("compact table: word %d is %d bytes long (at most 255)", i, len(w))
		}
		vocab += len(w)
	}
	source := wv.SourceWords
	if source < wv.Len() {
		source = wv.Len()
	}
	body := make([]byte, 0, n+vocab+4*n+n*dim*bits/8+4*dim)
	for i := range n {
		body = append(body, byte(len(wv.Word(i))))
	}
	for i := range n {
		body = append(body, wv.Word(i)...)
	}
	scales := make([]float32, n)
	for i := range n {
		var m float32
		for _, x := range wv.Vector(i) {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("compact table: word %d %q has a non-finite value", i, wv.Word(i))
			}
			m = max(m, float32(math.Abs(float64(x))))
		}
		scales[i] = m / top
		body = binary.LittleEndian.AppendUint32(body, math.Float32bits(scales[i]))
	}
	for i := range n {
		s := scales[i]
		for j, x := range wv.Vector(i) {
			var q float64
			if s > 0 {
				q = math.Round(float64(x) / float64(s))
			}
			v := byte(int8(max(-float64(top), min(float64(top), q))))
			switch {
			case bits == 8:
				body = append(body, v)
			case j%2 == 0:
				body = append(body, v&0x0f)
			default:
				body[len(body)-1] |= v << 4
			}
		}
	}
	var flags uint32
	if wv.PC != nil {
		flags |= cqFlagPC
		for _, x := range wv.PC {
			body = binary.LittleEndian.AppendUint32(body, math.Float32bits(x))
		}
	}
	out := make([]byte, cqHeaderSize, cqHeaderSize+len(body)+4)
	copy(out, cqMagic)
	binary.LittleEndian.PutUint32(out[8:], cqVersion)
	binary.LittleEndian.PutUint32(out[12:], uint32(dim))
	binary.LittleEndian.PutUint32(out[16:], uint32(n))
	binary.LittleEndian.PutUint32(out[20:], uint32(source))
	binary.LittleEndian.PutUint32(out[24:], wv.Checksum)
	binary.LittleEndian.PutUint32(out[28:], flags)
	binary.LittleEndian.PutUint32(out[32:], uint32(vocab))
	binary.LittleEndian.PutUint32(out[36:], uint32(bits))
	binary.LittleEndian.PutUint32(out[60:], crc32.Checksum(out[:60], castagnoli))
	out = append(out, body...)
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(body, castagnoli)), nil
}

func cqCorrupt(format string, args ...any) error {
	return fmt.Errorf("%w: compact table: %s", ErrCorruptVectors, fmt.Sprintf(format, args...))
}

// ReadCompactInfo checks a compact table's header and size.
func ReadCompactInfo(b []byte) (CompactInfo, error) {
	if len(b) < cqHeaderSize+4 {
		return CompactInfo{}, cqCorrupt("%d bytes is too short", len(b))
	}
	if !IsCompact(b) {
		return CompactInfo{}, cqCorrupt("bad magic %q", b[:8])
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != cqVersion {
		return CompactInfo{}, cqCorrupt("format version %d, this build reads version %d", v, cqVersion)
	}
	if crc32.Checksum(b[:60], castagnoli) != binary.LittleEndian.Uint32(b[60:]) {
		return CompactInfo{}, cqCorrupt("header checksum mismatch")
	}
	info := CompactInfo{
		Dim:            int(binary.LittleEndian.Uint32(b[12:])),
		Words:          int(binary.LittleEndian.Uint32(b[16:])),
		SourceWords:    int(binary.LittleEndian.Uint32(b[20:])),
		SourceChecksum: binary.LittleEndian.Uint32(b[24:]),
		Bits:           int(binary.LittleEndian.Uint32(b[36:])),
		Bytes:          len(b),
	}
	if info.Bits != 8 && info.Bits != 4 {
		return CompactInfo{}, cqCorrupt("%d bits per value (8 or 4)", info.Bits)
	}
	flags := binary.LittleEndian.Uint32(b[28:])
	vocab := uint64(binary.LittleEndian.Uint32(b[32:]))
	pc := uint64(0)
	if flags&cqFlagPC != 0 {
		pc = uint64(info.Dim)
	}
	n, dim := uint64(info.Words), uint64(info.Dim)
	want := cqHeaderSize + n + vocab + 4*n + n*dim*uint64(info.Bits)/8 + 4*pc + 4
	if info.Dim <= 0 || info.Dim > 1<<16 || info.Dim%2 != 0 && info.Bits == 4 || want != uint64(len(b)) || info.SourceWords < info.Words {
		return CompactInfo{}, cqCorrupt("size %d bytes does not match the header (%d words of %d dimensions, expected %d bytes)", len(b), n, dim, want)
	}
	return info, nil
}

// DecodeCompact checks a compact table and expands it into word vectors (float32,
// value × scale). The words alias b, which must not change afterwards.
func DecodeCompact(b []byte) (*WordVectors, error) {
	info, err := ReadCompactInfo(b)
	if err != nil {
		return nil, err
	}
	body := b[cqHeaderSize : len(b)-4]
	sum := crc32.Checksum(body, castagnoli)
	if sum != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, cqCorrupt("body checksum mismatch")
	}
	n, dim := info.Words, info.Dim
	lens := body[:n]
	vocab := int(binary.LittleEndian.Uint32(b[32:]))
	words := body[n : n+vocab]
	scales := body[n+vocab : n+vocab+4*n]
	valBytes := n * dim * info.Bits / 8
	values := body[n+vocab+4*n : n+vocab+4*n+valBytes]
	wv := &WordVectors{Dim: dim, Words: make([]string, n), Vectors: make([]float32, n*dim),
		SourceWords: info.SourceWords, Checksum: sum, QuantBits: info.Bits}
	off := 0
	for i, l := range lens {
		if off+int(l) > vocab {
			return nil, cqCorrupt("word %d runs past the vocabulary", i)
		}
		if l > 0 {
			wv.Words[i] = unsafe.String(&words[off], int(l))
		}
		off += int(l)
	}
	if off != vocab {
		return nil, cqCorrupt("the words take %d bytes, the header says %d", off, vocab)
	}
	for i := range n {
		s := math.Float32frombits(binary.LittleEndian.Uint32(scales[4*i:]))
		if math.IsNaN(float64(s)) || math.IsInf(float64(s), 0) || s < 0 {
			return nil, cqCorrupt("word %d has scale %v", i, s)
		}
		row := wv.Vectors[i*dim : (i+1)*dim]
		if info.Bits == 8 {
			for j, q := range values[i*dim : (i+1)*dim] {
				row[j] = float32(int8(q)) * s
			}
			continue
		}
		for j, q := range values[i*dim/2 : (i+1)*dim/2] {
			row[2*j] = float32(int8(q<<4)>>4) * s
			row[2*j+1] = float32(int8(q)>>4) * s
		}
	}
	if flags := binary.LittleEndian.Uint32(b[28:]); flags&cqFlagPC != 0 {
		pc := body[n+vocab+4*n+valBytes:]
		wv.PC = make([]float32, dim)
		for j := range wv.PC {
			wv.PC[j] = math.Float32frombits(binary.LittleEndian.Uint32(pc[4*j:]))
		}
	}
	wv.buildIndex()
	return wv, nil
}

// builtinTable is the compiled-in table as bytes (read-only: it aliases the
// binary's data).
func builtinTable() []byte { return stringBytes(compactTable) }

// builtinIndex is the compiled-in table's word index.
func builtinIndex() []byte { return stringBytes(compactIndex) }

func stringBytes(s string) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// BuiltinInfo describes the compiled-in table.
func BuiltinInfo() (CompactInfo, error) {
	return ReadCompactInfo(builtinTable())
}

// loadBuiltin uses table in place through index, or through an index made now
// when that one does not fit it.
func loadBuiltin(table, index []byte) (*WordVectors, error) {
	wv, err := compactInPlace(table, index)
	if err == nil {
		return wv, nil
	}
	why := err
	if index, err = BuildCompactIndex(table); err != nil {
		return nil, err
	}
	slog.Warn("word vectors: the built-in word index does not fit the built-in table; made it again for this process (`make generate` remakes the one compiled in)", "why", why)
	return compactInPlace(table, index)
}

// BuiltinSource is what GloVe.Source says of the compiled-in table.
const BuiltinSource = "built in"

// LoadBuiltin returns the GloVe embedder over the compiled-in compact table,
// used in place through its compiled-in word index: nothing is decoded at load,
// and a word's values are read when it is looked up. An index that does not fit
// the table (stale or damaged) is made again in memory, saying so; the vectors
// are the same either way.
func LoadBuiltin(cfg GloVeConfig) (*GloVe, error) {
	wv, err := loadBuiltin(builtinTable(), builtinIndex())
	if err != nil {
		return nil, fmt.Errorf("the built-in word vectors: %w (rebuild the binary; `make generate` remakes the table)", err)
	}
	g := NewGloVe(wv, cfg)
	g.source = BuiltinSource
	return g, nil
}
