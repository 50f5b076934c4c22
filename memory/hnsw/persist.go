package hnsw

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"reflect"
)

// File format, version 1 (still read; version 2 is in flat.go), little-endian:
//
//	header (64 bytes): magic "EXOHNSW\x00", version u32, key kind u8, distance u8,
//	  2 reserved bytes, dim u32, M u32, EfConstruction u32, EfSearch u32, Ml f64,
//	  slots u64, entry u64 (1<<63 | level<<32 | slot, or 0), 4 reserved bytes,
//	  CRC-32C of the 60 bytes before it u32
//	body: per slot: key (integers and floats as 8 bytes, strings as uvarint length
//	  and bytes), deleted u8, level u8, norm f32, dim × f32, then for layers
//	  0..level: link count u16 and that many u32 slot numbers
//	trailer: CRC-32C of the body u32
//
// Deleted slots are written too, so an imported graph answers exactly as the
// exported one did.
const (
	fileMagic   = "EXOHNSW\x00"
	fileVersion = flatVersion // written; version 1 is still read
	headerSize  = 64
)

// ErrCorrupt is wrapped by every Import error caused by the file's content
// (truncation, checksum mismatch, impossible values). The caller should rebuild the
// index from its own data.
var ErrCorrupt = errors.New("index file is corrupt")

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Export writes the graph to w. Writers wait while it runs; searches do not.
func (g *Graph[K]) Export(w io.Writer) error { return g.ExportVersion(w, fileVersion) }

// ExportVersion writes the graph in file format version 1 (node by node, what
// older builds wrote) or 2 (flat, what Export writes), for tests and tools that
// need a file an older build reads.
func (g *Graph[K]) ExportVersion(w io.Writer, version uint32) error {
	if version != 1 && version != flatVersion2 && version != flatVersion {
		return fmt.Errorf("hnsw: export: no file format version %d (1, %d or %d)", version, flatVersion2, flatVersion)
	}
	g.wmu.Lock()
	defer g.wmu.Unlock()
	g.mu.RLock()
	defer g.mu.RUnlock()
	c := g.c
	if c == nil {
		c = &core[K]{kind: kindOf(g.Distance), m: max(g.M, 2), ml: g.Ml, efc: g.EfConstruction}
		c.m0 = 2 * c.m
	}
	kk := keyKind[K]()
	if kk == reflect.Invalid {
		return fmt.Errorf("hnsw: export: keys of type %T cannot be written", *new(K))
	}
	var hdr [headerSize]byte
	copy(hdr[0:8], fileMagic)
	binary.LittleEndian.PutUint32(hdr[8:], version)
	hdr[12] = byte(kk)
	hdr[13] = byte(c.kind)
	binary.LittleEndian.PutUint32(hdr[16:], uint32(c.dim))
	binary.LittleEndian.PutUint32(hdr[20:], uint32(c.m))
	binary.LittleEndian.PutUint32(hdr[24:], uint32(c.efc))
	binary.LittleEndian.PutUint32(hdr[28:], uint32(max(g.EfSearch, 0)))
	binary.LittleEndian.PutUint64(hdr[32:], math.Float64bits(c.ml))
	binary.LittleEndian.PutUint64(hdr[40:], uint64(c.n))
	binary.LittleEndian.PutUint64(hdr[48:], c.entry.Load())
	binary.LittleEndian.PutUint32(hdr[60:], crc32.Checksum(hdr[:60], crcTable))
	if _, err := w.Write(hdr[:]); err != nil {
		return fmt.Errorf("hnsw: export: writing header: %w", err)
	}
	if version != 1 {
		return g.exportFlat(w, c, version)
	}

	crc := crc32.New(crcTable)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	var buf []byte
	for id := range uint32(c.n) {
		buf = c.appendKeyBytes(buf[:0], id)
		dead := byte(0)
		if c.isDead(id) {
			dead = 1
		}
		level := int(c.levels[id])
		buf = append(buf, dead, byte(level))
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(c.norms[id]))
		for _, x := range c.vec(id) {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
		}
		for l := 0; l <= level; l++ {
			ls := c.links(id, l)
			cnt := min(int(ls[0]), len(ls)-1)
			buf = binary.LittleEndian.AppendUint16(buf, uint16(cnt))
			for _, nb := range ls[1 : cnt+1] {
				buf = binary.LittleEndian.AppendUint32(buf, nb)
			}
		}
		if _, err := bw.Write(buf); err != nil {
			return fmt.Errorf("hnsw: export: %w", err)
		}
	}
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

// Import replaces the graph's contents with a graph read from r, written by Export,
// and sets M, Ml, EfConstruction, EfSearch and Distance from the file. On any error
// the graph is left as it was; errors caused by the file's content wrap ErrCorrupt.
// A file written with a custom distance can only be imported into a graph whose
// Distance is already set to that (custom) function.
func (g *Graph[K]) Import(r io.Reader) error {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	c, efs, err := g.read(r)
	if err != nil {
		return fmt.Errorf("hnsw: import: %w", err)
	}
	g.install(c, efs)
	return nil
}

// install makes c the graph's contents (Import's last step). g.wmu is held.
func (g *Graph[K]) install(c *core[K], efs int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if c.live == 0 {
		g.c = nil
	} else {
		g.c = c
	}
	g.M = c.m
	g.Ml = c.ml
	g.EfConstruction = c.efc
	if efs > 0 {
		g.EfSearch = efs
	}
	switch c.kind {
	case distCosine:
		g.Distance = CosineDistance
	case distEuclidean:
		g.Distance = EuclideanDistance
	}
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s; rebuild the index from its source", ErrCorrupt, fmt.Sprintf(format, args...))
}

// bodyReader reads the body while summing it, and turns a short read into a
// corruption error that says where the file ended.
type bodyReader struct {
	r   *bufio.Reader
	crc hash.Hash32
	off int64
}

func (b *bodyReader) full(p []byte) error {
	n, err := io.ReadFull(b.r, p)
	b.crc.Write(p[:n])
	b.off += int64(n)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: truncated at byte %d; rebuild the index from its source (%w)", ErrCorrupt, b.off, io.ErrUnexpectedEOF)
		}
		return err
	}
	return nil
}

// fileHeader is a parsed file header: an empty core with the file's
// parameters, and what the body must hold.
type fileHeader[K cmp.Ordered] struct {
	c       *core[K]
	kk      reflect.Kind
	version uint32
	n       uint64
	entry   uint64
	efs     int
}

// parseHeader checks and parses the 64-byte header hdr.
func (g *Graph[K]) parseHeader(hdr []byte) (fileHeader[K], error) {
	var h fileHeader[K]
	if string(hdr[0:8]) != fileMagic {
		return h, corrupt("not an HNSW index file (bad magic %q)", hdr[0:8])
	}
	version := binary.LittleEndian.Uint32(hdr[8:])
	if version != 1 && version != flatVersion2 && version != flatVersion {
		// Checked before the checksum so a newer file gets the clearer message.
		return h, corrupt("format version %d, this build reads versions 1 to %d", version, flatVersion)
	}
	if got, want := crc32.Checksum(hdr[:60], crcTable), binary.LittleEndian.Uint32(hdr[60:]); got != want {
		return h, corrupt("header checksum mismatch")
	}
	kk := keyKind[K]()
	if fk := reflect.Kind(hdr[12]); fk != kk {
		return h, fmt.Errorf("the file has keys of kind %v, this graph has %v", fk, kk)
	}
	kind := distKind(hdr[13])
	var custom DistanceFunc
	switch kind {
	case distCosine, distEuclidean:
	case distCustom:
		if kindOf(g.Distance) != distCustom {
			return h, errors.New("the file was written with a custom distance function: set Graph.Distance to it before Import")
		}
		custom = g.Distance
	default:
		return h, corrupt("unknown distance code %d", kind)
	}
	dim := int(binary.LittleEndian.Uint32(hdr[16:]))
	m := int(binary.LittleEndian.Uint32(hdr[20:]))
	efc := int(binary.LittleEndian.Uint32(hdr[24:]))
	efs := int(binary.LittleEndian.Uint32(hdr[28:]))
	ml := math.Float64frombits(binary.LittleEndian.Uint64(hdr[32:]))
	n := binary.LittleEndian.Uint64(hdr[40:])
	entry := binary.LittleEndian.Uint64(hdr[48:])
	if m < 2 || m > maxM || dim > maxDim || n >= uint64(noSlot) || !(ml > 0 && ml < 1) || efs > 1<<24 || efc > 1<<24 {
		return h, corrupt("impossible header values (dim %d, M %d, Ml %v, %d slots)", dim, m, ml, n)
	}
	if n > 0 && dim == 0 {
		return h, corrupt("%d slots of 0 dimensions", n)
	}
	c := &core[K]{dim: dim, kind: kind, custom: custom, m: m, m0: 2 * m, ml: ml, efc: efc}
	c.init()
	return fileHeader[K]{c: c, kk: kk, version: version, n: n, entry: entry, efs: efs}, nil
}

func (g *Graph[K]) read(r io.Reader) (*core[K], int, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var hdr [headerSize]byte
	if n, err := io.ReadFull(br, hdr[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, 0, fmt.Errorf("%w: file too short for a header (%d of %d bytes); rebuild the index from its source", ErrCorrupt, n, headerSize)
		}
		return nil, 0, err
	}
	h, err := g.parseHeader(hdr[:])
	if err != nil {
		return nil, 0, err
	}
	c, kk, n, entry, efs := h.c, h.kk, h.n, h.entry, h.efs
	dim, m := c.dim, c.m
	if h.version != 1 {
		if err := readFlat(c, kk, h.version, n, br, r); err != nil {
			return nil, 0, err
		}
		return c, efs, checkEntry(c, entry, n)
	}

	// Allocate for at most 16 MB of vectors up front and double as slots arrive, up
	// to n: a header that claims more slots than the body holds runs out of data
	// before it runs out of memory, and a true one ends with exactly n slots.
	perSlot := 4*dim + 4*(2*m+1) + 32
	first := min(n, uint64(max(16, (16<<20)/perSlot)))
	// A reader that knows how many bytes it holds (a bytes.Reader, an
	// io.LimitedReader) vouches for n when they cover n slots of at least
	// 4·dim+8 bytes each: then everything is allocated once.
	if left := readerLen(r); left >= 0 && n > first && n*uint64(4*dim+8) <= uint64(left) {
		first = n
		c.byKey = newKeyIndex[K](int(n))
	}
	c.resize(int(first))
	body := &bodyReader{r: br, crc: crc32.New(crcTable), off: headerSize}
	vec := make([]byte, 4*dim)
	var small [8]byte
	var linkBuf []byte
	for id := range uint32(n) {
		key, err := readKey[K](body, kk)
		if err != nil {
			return nil, 0, err
		}
		if err := body.full(small[:6]); err != nil {
			return nil, 0, err
		}
		dead, level := small[0], int(small[1])
		norm := math.Float32frombits(binary.LittleEndian.Uint32(small[2:]))
		if dead > 1 || level > maxLevel {
			return nil, 0, corrupt("slot %d has flag %d and level %d", id, dead, level)
		}
		if err := body.full(vec); err != nil {
			return nil, 0, err
		}
		if int(id) >= len(c.norms) {
			c.resize(int(min(n, uint64(2*len(c.norms)))))
		}
		slot := c.placeNormalised(key, nil, norm, level)
		dst := c.vec(slot)
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(vec[4*i:]))
		}
		for l := 0; l <= level; l++ {
			if err := body.full(small[:2]); err != nil {
				return nil, 0, err
			}
			cnt := int(binary.LittleEndian.Uint16(small[:2]))
			ls := c.links(slot, l)
			if cnt > len(ls)-1 {
				return nil, 0, corrupt("slot %d has %d links on layer %d, at most %d allowed", id, cnt, l, len(ls)-1)
			}
			ls[0] = uint32(cnt)
			// One read per layer: the links are cnt little-endian uint32s.
			if cap(linkBuf) < 4*cnt {
				linkBuf = make([]byte, 4*cnt)
			}
			raw := linkBuf[:4*cnt]
			if err := body.full(raw); err != nil {
				return nil, 0, err
			}
			for i := 1; i <= cnt; i++ {
				nb := binary.LittleEndian.Uint32(raw[4*(i-1):])
				if uint64(nb) >= n || nb == slot {
					return nil, 0, corrupt("slot %d links to slot %d of %d", id, nb, n)
				}
				ls[i] = nb
			}
		}
		if dead == 1 {
			c.dead[slot] = 1
			c.tombs++
		} else {
			if c.byKey.put(c, key, slot) {
				return nil, 0, corrupt("key %v appears twice", key)
			}
			c.live++
		}
	}
	sum := body.crc.Sum32()
	var tr [4]byte
	if _, err := io.ReadFull(br, tr[:]); err != nil {
		return nil, 0, fmt.Errorf("%w: truncated before the body checksum; rebuild the index from its source (%w)", ErrCorrupt, io.ErrUnexpectedEOF)
	}
	if binary.LittleEndian.Uint32(tr[:]) != sum {
		return nil, 0, corrupt("body checksum mismatch")
	}
	// A link on layer l must point at a node that has layer l, or a search would
	// index past the end of that node's lists.
	for id := range uint32(c.n) {
		for l := 1; l <= int(c.levels[id]); l++ {
			ls := c.links(id, l)
			for _, nb := range ls[1 : ls[0]+1] {
				if int(c.levels[nb]) < l {
					return nil, 0, corrupt("slot %d links on layer %d to slot %d, which has no such layer", id, l, nb)
				}
			}
		}
	}
	return c, efs, checkEntry(c, entry, n)
}

// checkEntry checks the header's entry point against the slots and sets it.
func checkEntry[K cmp.Ordered](c *core[K], entry, n uint64) error {
	if entry != 0 {
		e, el := uint32(entry), int(entry>>32)&0xff
		if uint64(e) >= n || int(c.levels[e]) != el || entry>>40 != 1<<23 {
			return corrupt("entry point %#x does not match the slots", entry)
		}
		c.entry.Store(entry)
	} else if n > 0 {
		return corrupt("%d slots but no entry point", n)
	}
	return nil
}

// readerLen is how many bytes r says it has left, or -1.
func readerLen(r io.Reader) int64 {
	switch x := r.(type) {
	case interface{ Len() int }:
		return int64(x.Len())
	case *io.LimitedReader:
		return x.N
	}
	return -1
}

// keyKind returns the reflect.Kind of K if the file format can hold it.
func keyKind[K any]() reflect.Kind {
	k := reflect.TypeFor[K]().Kind()
	switch k {
	case reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return k
	}
	return reflect.Invalid
}

const maxKeyLen = 1 << 20

func readKey[K any](b *bodyReader, kind reflect.Kind) (K, error) {
	var key K
	v := reflect.ValueOf(&key).Elem()
	if kind == reflect.String {
		n, err := binary.ReadUvarint(byteReader{b})
		if err != nil {
			if errors.Is(err, ErrCorrupt) {
				return key, err
			}
			return key, corrupt("bad key length at byte %d", b.off)
		}
		if n > maxKeyLen {
			return key, corrupt("key of %d bytes at byte %d", n, b.off)
		}
		s := make([]byte, n)
		if err := b.full(s); err != nil {
			return key, err
		}
		v.SetString(string(s))
		return key, nil
	}
	var raw [8]byte
	if err := b.full(raw[:]); err != nil {
		return key, err
	}
	u := binary.LittleEndian.Uint64(raw[:])
	switch kind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.OverflowInt(int64(u)) {
			return key, corrupt("key %d does not fit %v", int64(u), kind)
		}
		v.SetInt(int64(u))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(math.Float64frombits(u))
	default:
		if v.OverflowUint(u) {
			return key, corrupt("key %d does not fit %v", u, kind)
		}
		v.SetUint(u)
	}
	return key, nil
}

type byteReader struct{ b *bodyReader }

func (r byteReader) ReadByte() (byte, error) {
	var p [1]byte
	if err := r.b.full(p[:]); err != nil {
		return 0, err
	}
	return p[0], nil
}
