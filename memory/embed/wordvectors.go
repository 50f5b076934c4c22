package embed

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"unsafe"
)

// WordVectors is a vocabulary with one vector per word, in order of descending
// corpus frequency: word i has frequency rank i+1. It is what the word-vector
// file holds and is read-only once loaded, so it is safe for concurrent use.
type WordVectors struct {
	Dim   int
	Words []string
	// Vectors holds word i at [i*Dim, (i+1)*Dim).
	Vectors []float32
	// PC is the first principal component of SIF sentence vectors over a sample
	// (unit length), or nil if the file has none.
	PC []float32
	// Checksum is the CRC-32C of the file's body: it identifies the data.
	Checksum uint32
	// SourceWords is the vocabulary size of the file the words were taken from
	// when they are its most frequent part (a compact table); 0 means Len(). The
	// SIF weights estimate a word's frequency from its rank among them.
	SourceWords int
	// QuantBits is the width of the quantised values the vectors were decoded
	// from (a compact table: 8 or 4), 0 for float32 vectors.
	QuantBits int

	index map[string]int32
}

// Len returns the number of words.
func (wv *WordVectors) Len() int { return len(wv.Words) }

// Vector returns word i's vector (aliasing the table; do not modify).
func (wv *WordVectors) Vector(i int) []float32 {
	return wv.Vectors[i*wv.Dim : (i+1)*wv.Dim : (i+1)*wv.Dim]
}

// Lookup returns the index of word, which is its frequency rank minus one.
func (wv *WordVectors) Lookup(word string) (int, bool) {
	if wv.index == nil {
		return 0, false
	}
	i, ok := wv.index[word]
	return int(i), ok
}

func (wv *WordVectors) buildIndex() {
	wv.index = make(map[string]int32, len(wv.Words))
	for i := len(wv.Words) - 1; i >= 0; i-- {
		// Iterating backwards keeps the first (most frequent) of any duplicates.
		wv.index[wv.Words[i]] = int32(i)
	}
}

// Word-vector file, version 1, little-endian:
//
//	header (64 bytes): magic "EXOGLOVE", version u32, dim u32, count u32, flags u32
//	  (bit 0: a principal component follows the vectors), vocabulary bytes u64,
//	  28 reserved bytes, CRC-32C of the 60 bytes before it u32
//	body: count+1 u32 offsets into the vocabulary; the words, concatenated, UTF-8;
//	  zero padding to a multiple of 64 bytes from the start of the file;
//	  count × dim f32 vectors; dim f32 principal component if flagged
//	trailer: CRC-32C of the body u32
const (
	wvMagic      = "EXOGLOVE"
	wvVersion    = 1
	wvHeaderSize = 64
	wvFlagPC     = 1
)

// ErrCorruptVectors is wrapped by ReadWordVectors errors caused by the file's content.
var ErrCorruptVectors = errors.New("word-vector file is corrupt")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteWordVectors writes wv in the word-vector file format.
func WriteWordVectors(w io.Writer, wv *WordVectors) error {
	n := len(wv.Words)
	if wv.Dim <= 0 || len(wv.Vectors) != n*wv.Dim {
		return fmt.Errorf("write word vectors: %d words of %d dimensions but %d floats", n, wv.Dim, len(wv.Vectors))
	}
	if wv.PC != nil && len(wv.PC) != wv.Dim {
		return fmt.Errorf("write word vectors: principal component has %d dimensions, want %d", len(wv.PC), wv.Dim)
	}
	var vocab uint64
	for _, s := range wv.Words {
		vocab += uint64(len(s))
	}
	if vocab > math.MaxUint32 {
		return errors.New("write word vectors: vocabulary over 4 GiB")
	}
	var hdr [wvHeaderSize]byte
	copy(hdr[:8], wvMagic)
	binary.LittleEndian.PutUint32(hdr[8:], wvVersion)
	binary.LittleEndian.PutUint32(hdr[12:], uint32(wv.Dim))
	binary.LittleEndian.PutUint32(hdr[16:], uint32(n))
	if wv.PC != nil {
		binary.LittleEndian.PutUint32(hdr[20:], wvFlagPC)
	}
	binary.LittleEndian.PutUint64(hdr[24:], vocab)
	binary.LittleEndian.PutUint32(hdr[60:], crc32.Checksum(hdr[:60], castagnoli))
	if _, err := w.Write(hdr[:]); err != nil {
		return fmt.Errorf("write word vectors: %w", err)
	}
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
	var b4 [4]byte
	put := func(u uint32) {
		binary.LittleEndian.PutUint32(b4[:], u)
		bw.Write(b4[:])
	}
	off := uint32(0)
	put(off)
	for _, s := range wv.Words {
		off += uint32(len(s))
		put(off)
	}
	for _, s := range wv.Words {
		bw.WriteString(s)
	}
	pos := wvHeaderSize + 4*(n+1) + int(vocab)
	for ; pos%64 != 0; pos++ {
		bw.WriteByte(0)
	}
	for _, x := range wv.Vectors {
		put(math.Float32bits(x))
	}
	for _, x := range wv.PC {
		put(math.Float32bits(x))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write word vectors: %w", err)
	}
	binary.LittleEndian.PutUint32(b4[:], crc.Sum32())
	if _, err := w.Write(b4[:]); err != nil {
		return fmt.Errorf("write word vectors: %w", err)
	}
	return nil
}

// ReadWordVectors loads a word-vector file with one read, checks its checksums, and
// indexes the vocabulary. The vectors and words alias the one buffer read.
func ReadWordVectors(path string) (*WordVectors, error) {
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read word vectors: %w (run scripts/fetch-glove.sh to create it)", err)
	}
	var wv *WordVectors
	if IsCompact(buf) {
		wv, err = DecodeCompact(buf)
	} else {
		wv, err = parseWordVectors(buf)
	}
	if err != nil {
		return nil, fmt.Errorf("read word vectors %s: %w", path, err)
	}
	return wv, nil
}

func wvCorrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s; delete it and run scripts/fetch-glove.sh again", ErrCorruptVectors, fmt.Sprintf(format, args...))
}

func parseWordVectors(buf []byte) (*WordVectors, error) {
	if len(buf) < wvHeaderSize+4 {
		return nil, wvCorrupt("%d bytes is too short", len(buf))
	}
	hdr := buf[:wvHeaderSize]
	if string(hdr[:8]) != wvMagic {
		return nil, wvCorrupt("not a word-vector file (bad magic %q)", hdr[:8])
	}
	if v := binary.LittleEndian.Uint32(hdr[8:]); v != wvVersion {
		return nil, wvCorrupt("format version %d, this build reads version %d", v, wvVersion)
	}
	if crc32.Checksum(hdr[:60], castagnoli) != binary.LittleEndian.Uint32(hdr[60:]) {
		return nil, wvCorrupt("header checksum mismatch")
	}
	dim := int(binary.LittleEndian.Uint32(hdr[12:]))
	n := int(binary.LittleEndian.Uint32(hdr[16:]))
	flags := binary.LittleEndian.Uint32(hdr[20:])
	vocab := binary.LittleEndian.Uint64(hdr[24:])
	pcLen := 0
	if flags&wvFlagPC != 0 {
		pcLen = dim
	}
	vecStart := wvHeaderSize + 4*(n+1) + int(vocab)
	vecStart = (vecStart + 63) &^ 63
	want := uint64(vecStart) + 4*uint64(n)*uint64(dim) + 4*uint64(pcLen) + 4
	if dim <= 0 || dim > 1<<16 || vocab > uint64(len(buf)) || want != uint64(len(buf)) {
		return nil, wvCorrupt("size %d bytes does not match the header (%d words of %d dimensions, expected %d bytes)", len(buf), n, dim, want)
	}
	body := buf[wvHeaderSize : len(buf)-4]
	sum := crc32.Checksum(body, castagnoli)
	if sum != binary.LittleEndian.Uint32(buf[len(buf)-4:]) {
		return nil, wvCorrupt("body checksum mismatch")
	}
	offs := buf[wvHeaderSize : wvHeaderSize+4*(n+1)]
	words := buf[wvHeaderSize+4*(n+1) : wvHeaderSize+4*(n+1)+int(vocab)]
	wv := &WordVectors{Dim: dim, Words: make([]string, n), Checksum: sum}
	prev := uint32(0)
	for i := range n {
		a := binary.LittleEndian.Uint32(offs[4*i:])
		b := binary.LittleEndian.Uint32(offs[4*i+4:])
		if a != prev || b < a || uint64(b) > vocab {
			return nil, wvCorrupt("word %d has offsets %d..%d", i, a, b)
		}
		prev = b
		if b > a {
			wv.Words[i] = unsafe.String(&words[a], b-a)
		}
	}
	wv.Vectors = floats(buf[vecStart:], n*dim)
	if pcLen > 0 {
		wv.PC = floats(buf[vecStart+4*n*dim:], pcLen)
	}
	wv.buildIndex()
	return wv, nil
}

// littleEndian is true on the machines Go mostly runs on; there the floats are used
// in place, elsewhere they are decoded into a new slice.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func floats(b []byte, n int) []float32 {
	if n == 0 {
		return nil
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}
