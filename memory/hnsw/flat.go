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
// Version 3 (what Export writes) also stores what an import of version 2
// computes with a pass over every slot, so that an import of version 3 uses it
// in place and touches no per-slot data:
//
//	sizes (48 bytes): upper-layer words u64, key bytes u64, key-table words
//	        u64, key-table seed u64, live slots u64, CRC-32C of these 40 bytes
//	        u32, 4 zero bytes
//	body: dead, norms, levels, vectors, layer 0 as in version 2, then
//	  upper offsets slots × u32: where each slot's upper layers start in upper
//	          (in words; the slots' layers lie in slot order without gaps)
//	  upper   as in version 2
//	  key table  key-table words × u32 (a power of two, at least twice the live
//	          slots): keyIndex's open-addressing table, 1 + slot or 0, under
//	          the hash of keyindex.go with the stored seed
//	  key offsets  for string keys, slots × u64: where each slot's key starts in
//	          keys (absent for other kinds)
//	  keys    as in version 2
//	CRC-32C of the sizes and the body u32
//
// Everything is little-endian; on a big-endian machine the arrays are decoded
// into new slices instead of used in place.
const (
	flatVersion2 = 2
	flatVersion  = 3
)

// littleEndian: the machine's own byte order is the file's.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// flatSizes is the sizes block of a flat file (version 2 has the first two).
type flatSizes struct {
	upperWords, keyBytes, tabWords, seed, live uint64
}

// sizesLen is the length of a flat file's sizes block.
func sizesLen(version uint32) int {
	if version == flatVersion2 {
		return 16
	}
	return 48
}

func (z flatSizes) encode(version uint32) []byte {
	b := make([]byte, sizesLen(version))
	binary.LittleEndian.PutUint64(b[0:], z.upperWords)
	binary.LittleEndian.PutUint64(b[8:], z.keyBytes)
	if version != flatVersion2 {
		binary.LittleEndian.PutUint64(b[16:], z.tabWords)
		binary.LittleEndian.PutUint64(b[24:], z.seed)
		binary.LittleEndian.PutUint64(b[32:], z.live)
		binary.LittleEndian.PutUint32(b[40:], crc32.Checksum(b[:40], crcTable))
	}
	return b
}

// parseSizes decodes and checks a sizes block against the header's values.
func parseSizes(version uint32, b []byte, n uint64, m int) (flatSizes, error) {
	z := flatSizes{upperWords: binary.LittleEndian.Uint64(b[0:]), keyBytes: binary.LittleEndian.Uint64(b[8:])}
	if version != flatVersion2 {
		if crc32.Checksum(b[:40], crcTable) != binary.LittleEndian.Uint32(b[40:]) || binary.LittleEndian.Uint32(b[44:]) != 0 {
			return z, corrupt("section sizes checksum mismatch")
		}
		z.tabWords = binary.LittleEndian.Uint64(b[16:])
		z.seed = binary.LittleEndian.Uint64(b[24:])
		z.live = binary.LittleEndian.Uint64(b[32:])
		if z.tabWords < 8 || z.tabWords&(z.tabWords-1) != 0 || z.tabWords > 1<<34 || z.live > n || 2*z.live > z.tabWords {
			return z, corrupt("impossible key table (%d words for %d live of %d slots)", z.tabWords, z.live, n)
		}
	}
	if z.upperWords > n*maxLevel*uint64(m+1) {
		return z, corrupt("impossible section sizes (%d upper-layer words, %d key bytes for %d slots)", z.upperWords, z.keyBytes, n)
	}
	return z, nil
}

// flatLayout is where each section of a flat body starts (a section a version
// does not have is empty).
type flatLayout struct {
	dead, norms, levels, vecs, l0, upOff, upper, tab, koffs, keys, end uint64
}

// layout computes the sections' offsets; ok is false when the sizes overflow.
func layout(version uint32, n, dim, m0 uint64, z flatSizes, strKeys bool) (flatLayout, bool) {
	var l flatLayout
	if n >= 1<<32 || dim > maxDim || m0 > 2*maxM || z.upperWords > 1<<40 || z.keyBytes > 1<<40 || z.tabWords > 1<<34 {
		return l, false
	}
	l.dead = 0
	l.norms = align8(l.dead + 4*n)
	l.levels = align8(l.norms + 4*n)
	l.vecs = align8(l.levels + n)
	l.l0 = align8(l.vecs + 4*n*dim)
	l.upOff = align8(l.l0 + 4*n*(m0+1))
	if version == flatVersion2 {
		l.upper = l.upOff
		l.tab = align8(l.upper + 4*z.upperWords)
		l.koffs, l.keys = l.tab, l.tab
	} else {
		l.upper = align8(l.upOff + 4*n)
		l.tab = align8(l.upper + 4*z.upperWords)
		l.koffs = align8(l.tab + 4*z.tabWords)
		l.keys = l.koffs
		if strKeys {
			l.keys = align8(l.koffs + 8*n)
		}
	}
	l.end = l.keys + z.keyBytes
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

// exportFlat writes the body of a flat file of version 2 or 3 (everything
// after the header).
func (g *Graph[K]) exportFlat(w io.Writer, c *core[K], version uint32) error {
	n := uint64(c.n)
	strKeys := keyKind[K]() == reflect.String
	upOff := make([]uint32, 0, n)
	upper := make([]uint32, 0)
	for id := range uint32(n) {
		upOff = append(upOff, uint32(len(upper)))
		for l := 1; l <= int(c.levels[id]); l++ {
			upper = append(upper, c.links(id, l)...)
		}
	}
	if uint64(len(upper)) >= 1<<32 {
		return fmt.Errorf("hnsw: export: %d upper-layer words do not fit the file format's 32-bit offsets", len(upper))
	}
	var keys, koffs []byte
	for id := range uint32(n) {
		if strKeys {
			koffs = binary.LittleEndian.AppendUint64(koffs, uint64(len(keys)))
		}
		keys = c.appendKeyBytes(keys, id)
	}
	tab := c.byKey.tab
	if len(tab) == 0 {
		tab = make([]uint32, 8)
	}
	z := flatSizes{upperWords: uint64(len(upper)), keyBytes: uint64(len(keys)), tabWords: uint64(len(tab)), seed: c.byKey.seed, live: uint64(c.live)}
	lay, ok := layout(version, n, uint64(c.dim), uint64(c.m0), z, strKeys)
	if !ok {
		return fmt.Errorf("hnsw: export: a graph of %d slots is too large for the file format", n)
	}
	crc := crc32.New(crcTable)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
	bw.Write(z.encode(version))
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
	if version != flatVersion2 {
		section(lay.upOff, wordBytes(upOff))
	}
	section(lay.upper, wordBytes(upper))
	if version != flatVersion2 {
		section(lay.tab, wordBytes(tab))
		section(lay.koffs, koffs)
	}
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

// readFlat reads the rest of a flat file into c, whose header fields are set.
// r is the reader the caller wrapped in br (it may know its length).
func readFlat[K cmp.Ordered](c *core[K], kk reflect.Kind, version uint32, n uint64, br *bufio.Reader, r io.Reader) error {
	sizes := make([]byte, sizesLen(version))
	if _, err := io.ReadFull(br, sizes); err != nil {
		return fmt.Errorf("%w: truncated after the header; rebuild the index from its source (%w)", ErrCorrupt, io.ErrUnexpectedEOF)
	}
	z, err := parseSizes(version, sizes, n, c.m)
	if err != nil {
		return err
	}
	lay, ok := layout(version, n, uint64(c.dim), uint64(c.m0), z, kk == reflect.String)
	if !ok {
		return corrupt("impossible section sizes (%d upper-layer words, %d key bytes for %d slots)", z.upperWords, z.keyBytes, n)
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
			return fmt.Errorf("%w: truncated at byte %d; rebuild the index from its source (%w)", ErrCorrupt, headerSize+len(sizes)+len(body), io.ErrUnexpectedEOF)
		}
	}
	var tr [4]byte
	if _, err := io.ReadFull(br, tr[:]); err != nil {
		return fmt.Errorf("%w: truncated before the body checksum; rebuild the index from its source (%w)", ErrCorrupt, io.ErrUnexpectedEOF)
	}
	return useFlat(c, kk, version, n, sizes, z, body, tr[:], lay, true)
}

// useFlat sets c's arrays to the sections of body, in place, and checks them.
// With verify it checks body against the checksum trailer (what sizes and body
// must sum to), every slot's level, flag, upper offset and key, the key table
// and every link against the slots; without, version 2 still checks what
// reading the keys and the levels needs and version 3 nothing per slot (a
// caller that knows the bytes are the ones it verified before).
func useFlat[K cmp.Ordered](c *core[K], kk reflect.Kind, version uint32, n uint64, sizes []byte, z flatSizes, body, trailer []byte, lay flatLayout, verify bool) error {
	if verify {
		sum := crc32.Update(crc32.Checksum(sizes, crcTable), crcTable, body)
		if binary.LittleEndian.Uint32(trailer) != sum {
			return corrupt("body checksum mismatch")
		}
	}
	dim, m0 := uint64(c.dim), uint64(c.m0)
	c.dead = words[uint32](body[lay.dead : lay.dead+4*n])
	c.norms = words[float32](body[lay.norms : lay.norms+4*n])
	c.levels = body[lay.levels : lay.levels+n : lay.levels+n]
	c.vecs = words[float32](body[lay.vecs : lay.vecs+4*n*dim])
	c.l0 = words[uint32](body[lay.l0 : lay.l0+4*n*(m0+1)])
	c.n = int(n)
	if version == flatVersion2 {
		return useFlat2(c, kk, n, z, body, lay, verify)
	}
	c.upOff = words[uint32](body[lay.upOff : lay.upOff+4*n])
	c.up = words[uint32](body[lay.upper : lay.upper+4*z.upperWords])
	c.byKey = keyIndex[K]{seed: z.seed, tab: words[uint32](body[lay.tab : lay.tab+4*z.tabWords]), n: int(z.live)}
	c.kbase = int(n)
	c.ksect = body[lay.keys:lay.end:lay.end]
	c.koffs = body[lay.koffs:lay.keys:lay.keys]
	c.live = int(z.live)
	c.tombs = int(n - z.live)
	if !verify {
		return nil
	}
	if err := checkUpper(c, n, z.upperWords, true); err != nil {
		return err
	}
	if err := checkLinks(c, n); err != nil {
		return err
	}
	// Every key readable, the offsets of string keys exactly where the keys
	// lie one after the other.
	kb := c.ksect
	off := uint64(0)
	for id := range n {
		if kk == reflect.String {
			if binary.LittleEndian.Uint64(c.koffs[8*id:]) != off {
				return corrupt("the key offset of slot %d is not where its key lies", id)
			}
			l, k := binary.Uvarint(kb[off:])
			if k <= 0 || l > maxKeyLen || l > uint64(len(kb))-off-uint64(k) {
				return corrupt("bad key of slot %d", id)
			}
			off += uint64(k) + l
		} else {
			if off+8 > uint64(len(kb)) {
				return corrupt("bad key of slot %d", id)
			}
			var key K
			if err := setKey(&key, kk, binary.LittleEndian.Uint64(kb[off:])); err != nil {
				return err
			}
			off += 8
		}
	}
	if off != uint64(len(kb)) {
		return corrupt("%d bytes left after the keys", uint64(len(kb))-off)
	}
	// The key table: exactly the live slots, each found under its own key
	// (so no key appears twice).
	live := uint64(0)
	for id := range n {
		if c.dead[id] == 0 {
			live++
		}
	}
	if live != z.live {
		return corrupt("%d live slots, the sizes say %d", live, z.live)
	}
	entries := uint64(0)
	for _, e := range c.byKey.tab {
		if e == 0 {
			continue
		}
		if uint64(e-1) >= n || c.dead[e-1] != 0 {
			return corrupt("the key table names slot %d, which is not a live slot", e-1)
		}
		entries++
	}
	if entries != live {
		return corrupt("the key table holds %d slots, %d are live", entries, live)
	}
	for id := range uint32(n) {
		if c.dead[id] != 0 {
			continue
		}
		key := c.peekKey(id)
		if got, ok := c.byKey.get(c, key); !ok || got != id {
			return corrupt("key %v of slot %d is not found at its slot in the key table (a duplicate or a damaged table)", key, id)
		}
	}
	return nil
}

// peekKey is key without the copy: a string key points into the key section,
// so the result must not outlive the call that asked (verification only).
func (c *core[K]) peekKey(id uint32) K {
	if int(id) >= c.kbase || c.kk != reflect.String {
		return c.key(id)
	}
	var k K
	b := c.mappedKey(id)
	*(*string)(unsafe.Pointer(&k)) = unsafe.String(unsafe.SliceData(b), len(b))
	return k
}

// checkUpper checks every slot's level and flag and, with offsets, that its
// upper offset is where its layers lie in slot order.
func checkUpper[K cmp.Ordered](c *core[K], n, upperWords uint64, offsets bool) error {
	m := uint64(c.m)
	used := uint64(0)
	for id := range n {
		level := uint64(c.levels[id])
		if level > maxLevel || c.dead[id] > 1 {
			return corrupt("slot %d has flag %d and level %d", id, c.dead[id], level)
		}
		if offsets && uint64(c.upOff[id]) != used {
			return corrupt("the upper offset of slot %d is %d, its layers lie at %d", id, c.upOff[id], used)
		}
		used += level * (m + 1)
		if used > upperWords {
			return corrupt("the upper layers hold %d words, the levels need more", upperWords)
		}
	}
	if used != upperWords {
		return corrupt("the upper layers hold %d words, the levels need %d", upperWords, used)
	}
	return nil
}

// checkLinks checks every link against the slots and their layers.
func checkLinks[K cmp.Ordered](c *core[K], n uint64) error {
	m0, m := uint64(c.m0), uint64(c.m)
	for id := range n {
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
	return nil
}

// useFlat2 is the rest of useFlat for version 2: the upper offsets, the keys
// and the key index are computed with a pass over the slots.
func useFlat2[K cmp.Ordered](c *core[K], kk reflect.Kind, n uint64, z flatSizes, body []byte, lay flatLayout, verify bool) error {
	// The upper layers are small: copied, so that the body is not kept alive by
	// them once the graph grows out of it.
	c.up = append([]uint32(nil), words[uint32](body[lay.upper:lay.upper+4*z.upperWords])...)
	c.upOff = make([]uint32, n)
	m := uint64(c.m)
	used := uint64(0)
	for id := range n {
		c.upOff[id] = uint32(used)
		used += uint64(c.levels[id]) * (m + 1)
	}
	if err := checkUpper(c, n, z.upperWords, false); err != nil {
		return err
	}
	if verify {
		if err := checkLinks(c, n); err != nil {
			return err
		}
	}

	// Keys: strings are cut from one copy of the key section (not the body,
	// which would then live as long as any key).
	c.keys = make([]K, n)
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
		if c.byKey.put(c, key, uint32(id)) {
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
	// Trusted skips the checks that read the whole body: its checksum, the
	// bounds of every link and, for version 3, every slot's level, flag,
	// upper offset and key and the key table. Set it only for bytes the caller
	// verified before (a file it knows has not changed since it was imported
	// with the checks): damage in unchecked bytes then shows up as wrong
	// distances, a key not found or a panic in a search, not as an error
	// here. The header, the sizes (their own checksum in version 3) and that
	// the sections fit the bytes exactly are checked either way, and for
	// version 2 also the levels and the keys.
	Trusted bool
	// Keep is held by the graph for as long as it may use b (it owns b's
	// memory: a mapping whose release is tied to Keep becoming unreachable).
	Keep any
}

// ImportBytes is Import from a file held whole in b. A file of the flat format
// (versions 2 and 3) is used in place: the vectors, norms, levels, tombstones
// and layer-0 links stay in b (copied only when the graph grows past them or
// is rebuilt), and so do, for version 3, the upper layers, the key table and
// the keys (a key is copied out of b when a search or Lookup returns it), and
// b's bytes are written to where those change (a link added, a node deleted,
// a key put or removed), so b must be writable memory private to this graph (a
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
	if h.version == 1 {
		return g.read(bytes.NewReader(b))
	}
	c, n := h.c, h.n
	rest := b[headerSize:]
	sl := sizesLen(h.version)
	if len(rest) < sl {
		return nil, 0, fmt.Errorf("%w: truncated after the header; rebuild the index from its source (%w)", ErrCorrupt, io.ErrUnexpectedEOF)
	}
	sizes := rest[:sl]
	z, err := parseSizes(h.version, sizes, n, c.m)
	if err != nil {
		return nil, 0, err
	}
	lay, ok := layout(h.version, n, uint64(c.dim), uint64(c.m0), z, h.kk == reflect.String)
	if !ok {
		return nil, 0, corrupt("impossible section sizes (%d upper-layer words, %d key bytes for %d slots)", z.upperWords, z.keyBytes, n)
	}
	rest = rest[sl:]
	if uint64(len(rest)) < lay.end+4 {
		return nil, 0, fmt.Errorf("%w: truncated: %d bytes after the header, the sizes need %d; rebuild the index from its source (%w)", ErrCorrupt, len(rest), lay.end+4, io.ErrUnexpectedEOF)
	}
	if uint64(len(rest)) > lay.end+4 {
		return nil, 0, corrupt("%d bytes after the body checksum", uint64(len(rest))-lay.end-4)
	}
	body := rest[:lay.end:lay.end]
	if err := useFlat(c, h.kk, h.version, n, sizes, z, body, rest[lay.end:], lay, !o.Trusted); err != nil {
		return nil, 0, err
	}
	c.backing = o.Keep
	return c, h.efs, checkEntry(c, h.entry, n)
}
