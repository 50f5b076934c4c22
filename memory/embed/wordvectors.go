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
//
// A table is either held in memory (Words and Vectors set: ReadWordVectors,
// DecodeCompact, ParseWink, or built by hand) or used in place (OpenWordVectors,
// LoadBuiltin): then Words is nil and the words are read from the table's bytes
// through its word index, and so are the vectors of a compact table (Vectors nil
// too). Word, Vector and Lookup work on both.
type WordVectors struct {
	Dim int
	// Words is the vocabulary of a table held in memory; nil for one used in
	// place (use Word and Len).
	Words []string
	// Vectors holds word i at [i*Dim, (i+1)*Dim); nil for a compact table used in
	// place (use Vector).
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
	place *inPlace
}

// inPlace is a table used straight from its bytes.
type inPlace struct {
	ix    *wordIndex
	vocab []byte // the words, concatenated
	// A compact table's quantised rows (Vectors nil): count f32 scales and
	// count × dim values of bits bits.
	scales, values []byte
	bits           int
}

// Len returns the number of words.
func (wv *WordVectors) Len() int {
	if wv.place != nil {
		return wv.place.ix.count
	}
	return len(wv.Words)
}

// Word returns word i.
func (wv *WordVectors) Word(i int) string {
	if wv.place != nil {
		return wv.place.ix.word(wv.place.vocab, i)
	}
	return wv.Words[i]
}

// Vector returns word i's vector: aliasing the table for float32 vectors (do
// not modify), a new slice for a compact table used in place.
func (wv *WordVectors) Vector(i int) []float32 {
	if wv.Vectors == nil && wv.place != nil {
		v := make([]float32, wv.Dim)
		wv.addRow(i, 1, v)
		return v
	}
	return wv.Vectors[i*wv.Dim : (i+1)*wv.Dim : (i+1)*wv.Dim]
}

// addRow adds w × word i's vector to v, reading a compact table's values in
// place. Each value is rounded to float32 as DecodeCompact stores it, so the
// sums are the same bit for bit.
func (wv *WordVectors) addRow(i int, w float32, v []float32) {
	if wv.Vectors != nil || wv.place == nil {
		for j, x := range wv.Vectors[i*wv.Dim : (i+1)*wv.Dim : (i+1)*wv.Dim] {
			v[j] += w * x
		}
		return
	}
	p, dim := wv.place, wv.Dim
	s := math.Float32frombits(binary.LittleEndian.Uint32(p.scales[4*i:]))
	if p.bits == 8 {
		for j, q := range p.values[i*dim : (i+1)*dim : (i+1)*dim] {
			x := float32(float32(int8(q)) * s)
			v[j] += w * x
		}
		return
	}
	for j, q := range p.values[i*dim/2 : (i+1)*dim/2 : (i+1)*dim/2] {
		lo := float32(float32(int8(q<<4)>>4) * s)
		hi := float32(float32(int8(q)>>4) * s)
		v[2*j] += w * lo
		v[2*j+1] += w * hi
	}
}

// Lookup returns the index of word, which is its frequency rank minus one.
func (wv *WordVectors) Lookup(word string) (int, bool) {
	if wv.place != nil {
		return wv.place.ix.lookup(wv.place.vocab, word)
	}
	if wv.index == nil {
		return 0, false
	}
	i, ok := wv.index[word]
	return int(i), ok
}

// harmonic is H(source words), the Zipf normaliser of the SIF weights: stored
// in the word index of a table used in place, summed here otherwise.
func (wv *WordVectors) harmonic() float64 {
	if wv.place != nil {
		return wv.place.ix.harmonic
	}
	return harmonic(max(wv.SourceWords, wv.Len()))
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
	n := wv.Len()
	if wv.Dim <= 0 || wv.place == nil && len(wv.Vectors) != n*wv.Dim {
		return fmt.Errorf("write word vectors: %d words of %d dimensions but %d floats", n, wv.Dim, len(wv.Vectors))
	}
	if wv.PC != nil && len(wv.PC) != wv.Dim {
		return fmt.Errorf("write word vectors: principal component has %d dimensions, want %d", len(wv.PC), wv.Dim)
	}
	var vocab uint64
	for i := range n {
		vocab += uint64(len(wv.Word(i)))
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
	for i := range n {
		off += uint32(len(wv.Word(i)))
		put(off)
	}
	for i := range n {
		bw.WriteString(wv.Word(i))
	}
	pos := wvHeaderSize + 4*(n+1) + int(vocab)
	for ; pos%64 != 0; pos++ {
		bw.WriteByte(0)
	}
	for i := range n {
		for _, x := range wv.Vector(i) {
			put(math.Float32bits(x))
		}
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

// wvLayout is where the parts of a word-vector file are.
type wvLayout struct {
	dim, n            int
	vocab             uint64 // vocabulary bytes
	vocabStart        int
	vecStart, pcStart int
	pcLen             int
	headerSum         uint32 // the header's own checksum field
	bodySum           uint32 // the trailer: the body's checksum as written
}

// layoutWordVectors checks a word-vector file's header and size (not its body).
func layoutWordVectors(buf []byte) (wvLayout, error) {
	if len(buf) < wvHeaderSize+4 {
		return wvLayout{}, wvCorrupt("%d bytes is too short", len(buf))
	}
	hdr := buf[:wvHeaderSize]
	if string(hdr[:8]) != wvMagic {
		return wvLayout{}, wvCorrupt("not a word-vector file (bad magic %q)", hdr[:8])
	}
	if v := binary.LittleEndian.Uint32(hdr[8:]); v != wvVersion {
		return wvLayout{}, wvCorrupt("format version %d, this build reads version %d", v, wvVersion)
	}
	if crc32.Checksum(hdr[:60], castagnoli) != binary.LittleEndian.Uint32(hdr[60:]) {
		return wvLayout{}, wvCorrupt("header checksum mismatch")
	}
	l := wvLayout{
		dim:       int(binary.LittleEndian.Uint32(hdr[12:])),
		n:         int(binary.LittleEndian.Uint32(hdr[16:])),
		vocab:     binary.LittleEndian.Uint64(hdr[24:]),
		headerSum: binary.LittleEndian.Uint32(hdr[60:]),
		bodySum:   binary.LittleEndian.Uint32(buf[len(buf)-4:]),
	}
	if binary.LittleEndian.Uint32(hdr[20:])&wvFlagPC != 0 {
		l.pcLen = l.dim
	}
	if l.dim <= 0 || l.dim > 1<<16 || l.vocab > uint64(len(buf)) {
		return wvLayout{}, wvCorrupt("size %d bytes does not match the header (%d words of %d dimensions)", len(buf), l.n, l.dim)
	}
	l.vocabStart = wvHeaderSize + 4*(l.n+1)
	l.vecStart = (l.vocabStart + int(l.vocab) + 63) &^ 63
	l.pcStart = l.vecStart + 4*l.n*l.dim
	want := uint64(l.vecStart) + 4*uint64(l.n)*uint64(l.dim) + 4*uint64(l.pcLen) + 4
	if want != uint64(len(buf)) {
		return wvLayout{}, wvCorrupt("size %d bytes does not match the header (%d words of %d dimensions, expected %d bytes)", len(buf), l.n, l.dim, want)
	}
	return l, nil
}

// checkBody checks the body's checksum against the trailer.
func (l wvLayout) checkBody(buf []byte) error {
	if crc32.Checksum(buf[wvHeaderSize:len(buf)-4], castagnoli) != l.bodySum {
		return wvCorrupt("body checksum mismatch")
	}
	return nil
}

// offsets checks the vocabulary's offsets and returns them.
func (l wvLayout) offsets(buf []byte) ([]uint32, error) {
	offs := make([]uint32, l.n+1)
	raw := buf[wvHeaderSize:l.vocabStart]
	prev := uint32(0)
	for i := range offs {
		o := binary.LittleEndian.Uint32(raw[4*i:])
		if o < prev || uint64(o) > l.vocab || i == 0 && o != 0 {
			return nil, wvCorrupt("word %d has offsets %d..%d", max(i-1, 0), prev, o)
		}
		offs[i], prev = o, o
	}
	if uint64(prev) != l.vocab {
		return nil, wvCorrupt("the words take %d bytes, the header says %d", prev, l.vocab)
	}
	return offs, nil
}

func parseWordVectors(buf []byte) (*WordVectors, error) {
	l, err := layoutWordVectors(buf)
	if err != nil {
		return nil, err
	}
	if err := l.checkBody(buf); err != nil {
		return nil, err
	}
	offs, err := l.offsets(buf)
	if err != nil {
		return nil, err
	}
	words := buf[l.vocabStart : l.vocabStart+int(l.vocab)]
	wv := &WordVectors{Dim: l.dim, Words: make([]string, l.n), Checksum: l.bodySum}
	for i := range l.n {
		wv.Words[i] = bytesString(words[offs[i]:offs[i+1]])
	}
	wv.Vectors = floats(buf[l.vecStart:], l.n*l.dim)
	if l.pcLen > 0 {
		wv.PC = floats(buf[l.pcStart:], l.pcLen)
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
