package hnsw

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"reflect"
	"unsafe"
)

// Version 2 of the file format is flat: after the 64-byte header (as in version
// 1, with version 2), the graph's own arrays follow as they are in memory, so that
// Import reads the body with one read and uses the vectors and the layer-0 links in
// place instead of decoding them node by node:
//
//	sizes (16 bytes): upper-layer words u64, key bytes u64
//	body, every section starting at a multiple of 8 bytes from the body's start:
//	  dead    slots × u32 (0 live, 1 deleted)
//	  norms   slots × f32
//	  levels  slots × u8
//	  vectors slots × dim × f32 (unit length for cosine)
//	  layer 0 slots × (2M+1) × u32: link count, then the links (words after the
//	          count are unused)
//	  upper   for each slot above layer 0 in slot order, level × (M+1) u32: per
//	          layer a link count, then the links
//	  keys    as in version 1: strings as uvarint length and bytes, other kinds as
//	          8 bytes each
//	CRC-32C of the sizes and the body u32
//
// Everything is little-endian; on a big-endian machine the arrays are decoded
// into new slices instead of used in place.
const flatVersion = 2

// littleEndian: the machine's own byte order is the file's.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// flatLayout is where each section of a version 2 body starts.
type flatLayout struct {
	dead, norms, levels, vecs, l0, upper, keys, end uint64
}

// layout computes the sections' offsets; ok is false when the sizes overflow.
func layout(n, dim, m0, upperWords, keyBytes uint64) (flatLayout, bool) {
	var l flatLayout
	if n >= 1<<32 || dim > maxDim || m0 > 2*maxM || upperWords > 1<<40 || keyBytes > 1<<40 {
		return l, false
	}
	l.dead = 0
	l.norms = align8(l.dead + 4*n)
	l.levels = align8(l.norms + 4*n)
	l.vecs = align8(l.levels + n)
	l.l0 = align8(l.vecs + 4*n*dim)
	l.upper = align8(l.l0 + 4*n*(m0+1))
	l.keys = align8(l.upper + 4*upperWords)
	l.end = l.keys + keyBytes
	return l, true
}

// words views 4-byte little-endian words of b as T (float32 or uint32), in place
// when the machine and the alignment allow, else decoded into a new slice.
func words[T float32 | uint32](b []byte) []T {
	n := len(b) / 4
	if n == 0 {
		return nil
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]T, n)
	for i := range out {
		u := binary.LittleEndian.Uint32(b[4*i:])
		*(*uint32)(unsafe.Pointer(&out[i])) = u
	}
	return out
}

// wordBytes is the little-endian encoding of s: the slice's own memory on a
// little-endian machine.
func wordBytes[T float32 | uint32](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s))
	}
	out := make([]byte, 4*len(s))
	for i := range s {
		binary.LittleEndian.PutUint32(out[4*i:], *(*uint32)(unsafe.Pointer(&s[i])))
	}
	return out
}

// exportFlat writes the body of a version 2 file (everything after the header).
func (g *Graph[K]) exportFlat(w io.Writer, c *core[K]) error {
	n := uint64(c.n)
	var upperWords uint64
	for id := range c.n {
		upperWords += uint64(c.levels[id]) * uint64(c.m+1)
	}
	var keys []byte
	for id := range c.n {
		keys = appendKey(keys, c.keys[id])
	}
	lay, ok := layout(n, uint64(c.dim), uint64(c.m0), upperWords, uint64(len(keys)))
	if !ok {
		return fmt.Errorf("hnsw: export: a graph of %d slots is too large for the file format", n)
	}
	crc := crc32.New(crcTable)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
	var sizes [16]byte
	binary.LittleEndian.PutUint64(sizes[0:], upperWords)
	binary.LittleEndian.PutUint64(sizes[8:], uint64(len(keys)))
	bw.Write(sizes[:])
	off := uint64(0)
	section := func(at uint64, b []byte) {
		var zero [8]byte
		bw.Write(zero[:at-off])
		bw.Write(b)
		off = at + uint64(len(b))
	}
	dead := make([]uint32, n)
	for id := range uint32(n) {
		if c.isDead(id) {
			dead[id] = 1
		}
	}
	section(lay.dead, wordBytes(dead))
	section(lay.norms, wordBytes(c.norms[:n]))
	section(lay.levels, c.levels[:n])
	section(lay.vecs, wordBytes(c.vecs[:n*uint64(c.dim)]))
	section(lay.l0, wordBytes(c.l0[:n*uint64(c.m0+1)]))
	upper := make([]uint32, 0, upperWords)
	for id := range c.n {
		upper = append(upper, c.upper[id]...)
	}
	section(lay.upper, wordBytes(upper))
	section(lay.keys, keys)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("hnsw: export: %w", err)
	}
	var tr [4]byte
	binary.LittleEndian.PutUint32(tr[:], crc.Sum32())
	if _, err := w.Write(tr[:]); err != nil {
		return fmt.Errorf("hnsw: export: writing checksum: %w", err)
	}
	return nil
}

// readFlat reads the rest of a version 2 file into c, whose header fields are
// set. r is the reader the caller wrapped in br (it may know its length).
func readFlat[K cmp.Ordered](c *core[K], kk reflect.Kind, n uint64, br *bufio.Reader, r io.Reader) error {
	var sizes [16]byte
	if _, err := io.ReadFull(br, sizes[:]); err != nil {
		return fmt.Errorf("%w: truncated after the header; rebuild the index from its source (%w)", ErrCorrupt, io.ErrUnexpectedEOF)
	}
	upperWords := binary.LittleEndian.Uint64(sizes[0:])
	keyBytes := binary.LittleEndian.Uint64(sizes[8:])
	lay, ok := layout(n, uint64(c.dim), uint64(c.m0), upperWords, keyBytes)
	if !ok || upperWords > n*maxLevel*uint64(c.m+1) {
		return corrupt("impossible section sizes (%d upper-layer words, %d key bytes for %d slots)", upperWords, keyBytes, n)
	}
	// The body is read whole: a reader that knows its length must hold it, and
	// any other is read in pieces, so a damaged size runs out of data before
	// it allocates much.
	var body []byte
	if left := readerLen(r); left >= 0 {
		left += int64(br.Buffered())
		if uint64(left) < lay.end+4 {
			return fmt.Errorf("%w: truncated: %d bytes after the header, the sizes need %d; rebuild the index from its source (%w)", ErrCorrupt, left, lay.end+4, io.ErrUnexpectedEOF)
		}
		body = make([]byte, lay.end)
		if _, err := io.ReadFull(br, body); err != nil {
			return fmt.Errorf("%w: truncated; rebuild the index from its source (%w)", ErrCorrupt, io.ErrUnexpectedEOF)
		}
	} else {
		var err error
		body, err = io.ReadAll(io.LimitReader(br, int64(lay.end)))
		if err != nil {
			return err
		}
		if uint64(len(body)) < lay.end {
			return fmt.Errorf("%w: truncated at byte %d; rebuild the index from its source (%w)", ErrCorrupt, headerSize+16+len(body), io.ErrUnexpectedEOF)
		}
	}
	var tr [4]byte
	if _, err := io.ReadFull(br, tr[:]); err != nil {
		return fmt.Errorf("%w: truncated before the body checksum; rebuild the index from its source (%w)", ErrCorrupt, io.ErrUnexpectedEOF)
	}
	return useFlat(c, kk, n, sizes[:], body, tr[:], lay, upperWords, true)
}

// useFlat sets c's arrays to the sections of body, in place, and checks them.
// With verify it checks body against the checksum trailer (what sizes and body
// must sum to) and every link against the slots; without, only what reading
// the keys and the levels needs (a caller that knows the bytes are the ones it
// verified before).
func useFlat[K cmp.Ordered](c *core[K], kk reflect.Kind, n uint64, sizes, body, trailer []byte, lay flatLayout, upperWords uint64, verify bool) error {
	if verify {
		sum := crc32.Update(crc32.Checksum(sizes, crcTable), crcTable, body)
		if binary.LittleEndian.Uint32(trailer) != sum {
			return corrupt("body checksum mismatch")
		}
	}
	dim, m0, m := uint64(c.dim), uint64(c.m0), uint64(c.m)
	c.dead = words[uint32](body[lay.dead : lay.dead+4*n])
	c.norms = words[float32](body[lay.norms : lay.norms+4*n])
	c.levels = body[lay.levels : lay.levels+n : lay.levels+n]
	c.vecs = words[float32](body[lay.vecs : lay.vecs+4*n*dim])
	c.l0 = words[uint32](body[lay.l0 : lay.l0+4*n*(m0+1)])
	// The upper layers are small: copied, so that the body is not kept alive by
	// them once the graph grows out of it.
	upper := append([]uint32(nil), words[uint32](body[lay.upper:lay.upper+4*upperWords])...)
	c.upper = make([][]uint32, n)
	c.keys = make([]K, n)
	c.n = int(n)

	used := uint64(0)
	for id := range n {
		level := uint64(c.levels[id])
		if level > maxLevel || c.dead[id] > 1 {
			return corrupt("slot %d has flag %d and level %d", id, c.dead[id], level)
		}
		if level > 0 {
			w := level * (m + 1)
			if used+w > upperWords {
				return corrupt("the upper layers hold %d words, the levels need more", upperWords)
			}
			c.upper[id] = upper[used : used+w : used+w]
			used += w
		}
	}
	if used != upperWords {
		return corrupt("the upper layers hold %d words, the levels need %d", upperWords, used)
	}
	for id := range n {
		if !verify {
			break
		}
		ls := c.l0[id*(m0+1) : (id+1)*(m0+1)]
		if uint64(ls[0]) > m0 {
			return corrupt("slot %d has %d links on layer 0, at most %d allowed", id, ls[0], m0)
		}
		for _, nb := range ls[1 : ls[0]+1] {
			if uint64(nb) >= n || uint64(nb) == id {
				return corrupt("slot %d links to slot %d of %d", id, nb, n)
			}
		}
		for l := 1; l <= int(c.levels[id]); l++ {
			ls := c.links(uint32(id), l)
			if uint64(ls[0]) > m {
				return corrupt("slot %d has %d links on layer %d, at most %d allowed", id, ls[0], l, m)
			}
			for _, nb := range ls[1 : ls[0]+1] {
				if uint64(nb) >= n || uint64(nb) == id {
					return corrupt("slot %d links to slot %d of %d", id, nb, n)
				}
				if int(c.levels[nb]) < l {
					return corrupt("slot %d links on layer %d to slot %d, which has no such layer", id, l, nb)
				}
			}
		}
	}

	// Keys: strings are cut from one copy of the key section (not the body,
	// which would then live as long as any key).
	kb := body[lay.keys:lay.end]
	var keyStr string
	if kk == reflect.String {
		keyStr = string(kb)
	}
	c.byKey = newKeyIndex[K](int(n))
	off := uint64(0)
	for id := range n {
		var key K
		if kk == reflect.String {
			l, k := binary.Uvarint(kb[off:])
			if k <= 0 || l > maxKeyLen || l > uint64(len(kb))-off-uint64(k) {
				return corrupt("bad key of slot %d", id)
			}
			off += uint64(k)
			s := keyStr[off : off+l]
			*(*string)(unsafe.Pointer(&key)) = s
			off += l
		} else {
			if off+8 > uint64(len(kb)) {
				return corrupt("bad key of slot %d", id)
			}
			if err := setKey(&key, kk, binary.LittleEndian.Uint64(kb[off:])); err != nil {
				return err
			}
			off += 8
		}
		c.keys[id] = key
		if c.dead[id] == 1 {
			c.tombs++
			continue
		}
		if c.byKey.put(c.keys, key, uint32(id)) {
			return corrupt("key %v appears twice", key)
		}
		c.live++
	}
	if off != uint64(len(kb)) {
		return corrupt("%d bytes left after the keys", uint64(len(kb))-off)
	}
	return nil
}

// setKey stores a key of a numeric kind read as 8 bytes.
func setKey[K cmp.Ordered](key *K, kind reflect.Kind, u uint64) error {
	v := reflect.ValueOf(key).Elem()
	switch kind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.OverflowInt(int64(u)) {
			return corrupt("key %d does not fit %v", int64(u), kind)
		}
		v.SetInt(int64(u))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(math.Float64frombits(u))
	default:
		if v.OverflowUint(u) {
			return corrupt("key %d does not fit %v", u, kind)
		}
		v.SetUint(u)
	}
	return nil
}

// ImportOptions tune ImportBytes.
type ImportOptions struct {
	// Trusted skips the checks that read the whole body: its checksum and the
	// bounds of every link. Set it only for bytes the caller verified before
	// (a file it knows has not changed since it was imported with the checks):
	// damage in unchecked bytes then shows up as wrong distances or a panic
	// in a search, not as an error here. The header, the sizes, the levels and
	// the keys are checked either way.
	Trusted bool
	// Keep is held by the graph for as long as it may use b (it owns b's
	// memory: a mapping whose release is tied to Keep becoming unreachable).
	Keep any
}

// ImportBytes is Import from a file held whole in b. A file of the flat format
// (version 2) is used in place: the vectors, norms, levels, tombstones and
// layer-0 links stay in b (copied only when the graph grows past them or is
// rebuilt), and b's bytes are written to where those change (a link added, a
// node deleted), so b must be writable memory private to this graph (a
// copy-on-write mapping, a buffer nothing else uses) and valid while the
// graph lives. On a little-endian machine b must start 8-byte aligned for the
// arrays to be used in place (else they are copied). A version 1 file is
// decoded as Import does. On any error the graph is left as it was.
func (g *Graph[K]) ImportBytes(b []byte, o ImportOptions) error {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	c, efs, err := g.readBytes(b, o)
	if err != nil {
		return fmt.Errorf("hnsw: import: %w", err)
	}
	g.install(c, efs)
	return nil
}

func (g *Graph[K]) readBytes(b []byte, o ImportOptions) (*core[K], int, error) {
	if len(b) < headerSize {
		return nil, 0, fmt.Errorf("%w: file too short for a header (%d of %d bytes); rebuild the index from its source (%w)", ErrCorrupt, len(b), headerSize, io.ErrUnexpectedEOF)
	}
	h, err := g.parseHeader(b[:headerSize])
	if err != nil {
		return nil, 0, err
	}
	if h.version != flatVersion {
		return g.read(bytes.NewReader(b))
	}
	c, n := h.c, h.n
	rest := b[headerSize:]
	if len(rest) < 16 {
		return nil, 0, fmt.Errorf("%w: truncated after the header; rebuild the index from its source (%w)", ErrCorrupt, io.ErrUnexpectedEOF)
	}
	sizes := rest[:16]
	upperWords := binary.LittleEndian.Uint64(sizes[0:])
	keyBytes := binary.LittleEndian.Uint64(sizes[8:])
	lay, ok := layout(n, uint64(c.dim), uint64(c.m0), upperWords, keyBytes)
	if !ok || upperWords > n*maxLevel*uint64(c.m+1) {
		return nil, 0, corrupt("impossible section sizes (%d upper-layer words, %d key bytes for %d slots)", upperWords, keyBytes, n)
	}
	rest = rest[16:]
	if uint64(len(rest)) < lay.end+4 {
		return nil, 0, fmt.Errorf("%w: truncated: %d bytes after the header, the sizes need %d; rebuild the index from its source (%w)", ErrCorrupt, len(rest), lay.end+4, io.ErrUnexpectedEOF)
	}
	if uint64(len(rest)) > lay.end+4 {
		return nil, 0, corrupt("%d bytes after the body checksum", uint64(len(rest))-lay.end-4)
	}
	body := rest[:lay.end:lay.end]
	if err := useFlat(c, h.kk, n, sizes, body, rest[lay.end:], lay, upperWords, !o.Trusted); err != nil {
		return nil, 0, err
	}
	c.backing = o.Keep
	return c, h.efs, checkEntry(c, h.entry, n)
}
