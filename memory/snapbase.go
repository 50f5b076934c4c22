package memory

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Snapshot format version 2 is laid out so that Open need not decode it: the
// records, each encoded as in version 1, sorted by id; then the counters
// (unknown event kinds, skipped events); then an index the header locates
// (snapshotIndex):
//
//	offsets  (n+1) × uint64  byte of the body where record i starts; the last is where the counters start
//	seqs     n × uint64      record i's creation sequence (Provenance.Seq)
//	order    n × uint32      the records in creation order (by sequence, then id): record numbers
//	pos      n × uint32      record i's place in that order (the inverse of order)
//	keyed    k × uint32      the records that have a key, ascending
//
// all little-endian, with the index's own CRC-32C in the header. Open maps the
// file, checks the header, the length, the index (its checksum, rising
// offsets, order and pos each other's inverse, keyed in range), the counters,
// and the body's CRC-32C when the file is not taken on trust (CheckedFile), and
// builds only the key map (from the keyed records). A record is decoded when
// something first asks for it (snapBase.record), into memory of its own, and
// kept (State.slots); a record that does not decode, or whose id is out of
// order with its neighbours', marks the state damaged (State.damage), and the
// store rebuilds the state from the journal (Store.repairState).

// snapshotIndex is where a version 2 body's index and counters are.
type snapshotIndex struct {
	Tail   int    `json:"tail"` // byte of the body where the counters start (the records end)
	At     int    `json:"at"`   // byte where the index starts (the counters end)
	Keyed  int    `json:"keyed"`
	CRC32C uint32 `json:"crc32c"` // of the body from At to its end
}

// snapBase is the records of a version 2 snapshot, decoded on demand.
type snapBase struct {
	path string
	m    *fileMapping // kept for as long as the base is referred to
	body []byte       // the mapped body (after the header line)
	n    int
	// the index's columns, slices of body
	offsets, seqs, ord, pos, keyed []byte
	tail                           int
	// verified: the body's CRC-32C was checked (at open, or before the
	// body's bytes were copied into a new snapshot).
	verified atomic.Bool
	vmu      sync.Mutex
}

func (b *snapBase) off(i int) int {
	return int(binary.LittleEndian.Uint64(b.offsets[8*i:]))
}

func (b *snapBase) seq(i int) uint64 { return binary.LittleEndian.Uint64(b.seqs[8*i:]) }

// orderAt is the record number at place p of the creation order.
func (b *snapBase) orderAt(p int) int { return int(binary.LittleEndian.Uint32(b.ord[4*p:])) }

// place is record i's place in the creation order.
func (b *snapBase) place(i int) int { return int(binary.LittleEndian.Uint32(b.pos[4*i:])) }

// idView is record i's id as a view of the mapping: it must not outlive the
// call that asked for it (compare it, or clone it). ok is false when the
// record's first bytes are not a string that fits it.
func (b *snapBase) idView(i int) (string, bool) {
	start, end := b.off(i), b.off(i+1)
	n, k := binary.Uvarint(b.body[start:end])
	if k <= 0 || n > uint64(end-start-k) {
		return "", false
	}
	return unsafe.String(unsafe.SliceData(b.body[start+k:]), int(n)), true
}

// find returns the record number of id (a binary search of the id-sorted
// records).
func (b *snapBase) find(id string) (int, bool) {
	lo := sort.Search(b.n, func(h int) bool {
		x, _ := b.idView(h)
		return x >= id
	})
	ok := false
	if lo < b.n {
		x, _ := b.idView(lo)
		ok = x == id
	}
	runtime.KeepAlive(b.m)
	return lo, ok
}

// record decodes record i into memory of its own (its strings share one
// copy of its bytes), checking that it fills its bytes exactly and that its
// id lies between its neighbours'.
func (b *snapBase) record(i int) (*Record, error) {
	start, end := b.off(i), b.off(i+1)
	buf := make([]byte, end-start)
	copy(buf, b.body[start:end])
	d := &stateDecoder{s: unsafe.String(unsafe.SliceData(buf), len(buf))}
	r := &Record{}
	d.record(r)
	if d.err == nil && d.off != len(buf) {
		d.err = fmt.Errorf("%d bytes left after it", len(buf)-d.off)
	}
	if d.err == nil && r.ID == "" {
		d.err = errors.New("its id is empty")
	}
	if d.err == nil && i > 0 {
		if p, ok := b.idView(i - 1); !ok || p >= r.ID {
			d.err = fmt.Errorf("its id %q is not after the previous record's", r.ID)
		}
	}
	if d.err == nil && i+1 < b.n {
		if x, ok := b.idView(i + 1); !ok || x <= r.ID {
			d.err = fmt.Errorf("its id %q is not before the next record's", r.ID)
		}
	}
	runtime.KeepAlive(b.m)
	if d.err != nil {
		return nil, fmt.Errorf("record %d (bytes %d-%d of the body): %w", i+1, start, end, d.err)
	}
	return r, nil
}

// checkAll decodes every record and checks the index's columns against them:
// the sequences, the creation order rising by them, the keyed records.
func (b *snapBase) checkAll() error {
	k := 0
	for i := range b.n {
		r, err := b.record(i)
		if err != nil {
			return fmt.Errorf("cannot be decoded: %w", err)
		}
		if r.Provenance.Seq != b.seq(i) {
			return fmt.Errorf("has record %d created at sequence %d, the index says %d", i+1, r.Provenance.Seq, b.seq(i))
		}
		if keyed := b.isKeyed(i); keyed != (r.Key != "") {
			return fmt.Errorf("has record %d with key %q, the index lists it as keyed: %v", i+1, r.Key, keyed)
		}
		if r.Key != "" {
			k++
		}
		if p := b.place(i); p > 0 {
			j := b.orderAt(p - 1)
			if b.seq(j) > b.seq(i) || b.seq(j) == b.seq(i) && j > i {
				return fmt.Errorf("has record %d at place %d of the creation order, after record %d created later", i+1, p+1, j+1)
			}
		}
	}
	if k != len(b.keyed)/4 {
		return fmt.Errorf("lists %d keyed records, %d have a key", len(b.keyed)/4, k)
	}
	return nil
}

// fields decodes record i into r without its metadata, r's strings being
// views of the mapping (valid only while the base is referred to: the caller
// copies what it keeps), reusing r's tag slice: a filter's test of a record
// nobody decoded yet, without allocating.
func (b *snapBase) fields(i int, r *Record) error {
	start, end := b.off(i), b.off(i+1)
	d := &stateDecoder{s: unsafe.String(unsafe.SliceData(b.body[start:]), end-start)}
	d.recordInto(r, true)
	if d.err == nil && d.off != end-start {
		d.err = fmt.Errorf("%d bytes left after it", end-start-d.off)
	}
	return d.err
}

// skipObject reads past a metadata object.
func (d *stateDecoder) skipObject(depth int) {
	n := d.count()
	for i := 0; i < n && d.err == nil; i++ {
		d.str()
		d.skipValue(depth)
	}
}

func (d *stateDecoder) skipValue(depth int) {
	if depth > 64 {
		d.err = errors.New("metadata nested too deep")
		return
	}
	switch tag := d.byte(); tag {
	case tagNull, tagFalse, tagTrue:
	case tagNumber:
		d.bytes(8)
	case tagString:
		d.str()
	case tagArray:
		n := d.count()
		for i := 0; i < n && d.err == nil; i++ {
			d.skipValue(depth + 1)
		}
	case tagObject:
		d.skipObject(depth + 1)
	default:
		if d.err == nil {
			d.err = fmt.Errorf("unknown value tag %d", tag)
		}
	}
}

// keyOf reads record i's area and key (copies), for the key map.
func (b *snapBase) keyOf(i int) (id, area, key string, err error) {
	start, end := b.off(i), b.off(i+1)
	d := &stateDecoder{s: unsafe.String(unsafe.SliceData(b.body[start:]), end-start)}
	id, area = d.str(), d.str()
	d.str()
	key = d.str()
	id, area, key = strings.Clone(id), strings.Clone(area), strings.Clone(key)
	runtime.KeepAlive(b.m)
	if d.err != nil || key == "" {
		return "", "", "", fmt.Errorf("record %d, listed as keyed, has no readable key (%v)", i+1, d.err)
	}
	return id, area, key, nil
}

// raw is record i's encoded bytes (a view of the mapping).
func (b *snapBase) raw(i int) []byte { return b.body[b.off(i):b.off(i+1)] }

// verify checks the body's CRC-32C once (a base taken on trust, before its
// bytes are copied into a new snapshot).
func (b *snapBase) verify(want uint32) error {
	b.vmu.Lock()
	defer b.vmu.Unlock()
	if b.verified.Load() {
		return nil
	}
	if crc32.Checksum(b.body, castagnoli) != want {
		return errors.New("fails its checksum")
	}
	b.verified.Store(true)
	return nil
}

// openBase checks a version 2 body against its header and makes the state
// over it: the records stay undecoded, the key map is built from the keyed
// records.
func openBase(path string, m *fileMapping, body []byte, h snapshotHeader, verified bool) (*State, error) {
	ix := h.Index
	if ix == nil {
		return nil, errors.New("has no index")
	}
	n := h.Records
	if n < 0 || ix.Keyed < 0 || ix.Tail < 0 || ix.Tail > ix.At || ix.At > len(body) {
		return nil, fmt.Errorf("has an index (%+v) that does not fit a body of %d bytes", *ix, len(body))
	}
	want := 8*(n+1) + 8*n + 4*n + 4*n + 4*ix.Keyed
	if uint64(len(body)-ix.At) != uint64(want) || n > math.MaxUint32 {
		return nil, fmt.Errorf("has an index of %d bytes, %d records and %d keys need %d", len(body)-ix.At, n, ix.Keyed, want)
	}
	idx := body[ix.At:]
	if crc32.Checksum(idx, castagnoli) != ix.CRC32C {
		return nil, errors.New("has an index that fails its checksum")
	}
	b := &snapBase{path: path, m: m, body: body, n: n, tail: ix.Tail}
	b.offsets, idx = idx[:8*(n+1)], idx[8*(n+1):]
	b.seqs, idx = idx[:8*n], idx[8*n:]
	b.ord, idx = idx[:4*n], idx[4*n:]
	b.pos, b.keyed = idx[:4*n], idx[4*n:]
	b.verified.Store(verified)
	if b.off(0) != 0 || b.off(n) != ix.Tail {
		return nil, fmt.Errorf("has record offsets from %d to %d, not from 0 to the counters at %d", b.off(0), b.off(n), ix.Tail)
	}
	for i := range n {
		if b.off(i+1) <= b.off(i) {
			return nil, fmt.Errorf("has record %d ending at byte %d, before it starts (%d)", i+1, b.off(i+1), b.off(i))
		}
		if p := b.place(i); p >= n || b.orderAt(p) != i {
			return nil, fmt.Errorf("has a creation order that does not hold record %d where it says (place %d)", i+1, p)
		}
	}
	st := newState()
	st.base = b
	st.slots = make([]atomic.Pointer[Record], n)
	st.dead = make([]bool, n)
	prev := -1
	for j := range ix.Keyed {
		i := int(binary.LittleEndian.Uint32(b.keyed[4*j:]))
		if i <= prev || i >= n {
			return nil, fmt.Errorf("lists keyed record %d out of order or range", i+1)
		}
		prev = i
		id, area, key, err := b.keyOf(i)
		if err != nil {
			return nil, err
		}
		st.keys[[2]string{area, key}] = id
	}
	d := &stateDecoder{s: string(body[ix.Tail:ix.At])} // a copy: the counters are kept
	nu := d.count()
	for i := 0; i < nu && d.err == nil; i++ {
		k := d.str()
		st.unknown[k] = int(d.uvarint())
	}
	st.skipped = int(d.uvarint())
	if d.err == nil && d.off != len(d.s) {
		d.err = fmt.Errorf("%d bytes left", len(d.s)-d.off)
	}
	if d.err != nil {
		return nil, fmt.Errorf("has unreadable counters: %w", d.err)
	}
	return st, nil
}

// snapEntry is one record a version 2 snapshot is written with: a record of
// the base left as it was (its bytes are copied) or a record to encode.
type snapEntry struct {
	id   string // a view of the base's mapping for a base record
	base int    // record number in the base, or -1
	rec  *Record
}

// encodeStateV2 encodes st in format version 2 (see above); baseCRC is the
// base's body checksum, checked before its bytes are copied if it was not yet.
func encodeStateV2(st *State, baseCRC uint32) ([]byte, snapshotIndex, error) {
	var es []snapEntry
	b := st.base
	if b != nil {
		es = make([]snapEntry, 0, b.n+len(st.recs))
		for i := range b.n {
			if st.dead[i] {
				continue
			}
			if r := st.slots[i].Load(); r != nil {
				es = append(es, snapEntry{id: r.ID, base: -1, rec: r})
				continue
			}
			id, _ := b.idView(i)
			es = append(es, snapEntry{id: id, base: i})
		}
		if hasRaw(es) {
			if err := b.verify(baseCRC); err != nil {
				return nil, snapshotIndex{}, fmt.Errorf("the snapshot it was opened from %w", err)
			}
		}
	}
	extra := make([]snapEntry, 0, len(st.recs))
	for id, r := range st.recs {
		extra = append(extra, snapEntry{id: id, base: -1, rec: r})
	}
	slices.SortFunc(extra, func(x, y snapEntry) int { return strings.Compare(x.id, y.id) })
	if len(extra) > 0 {
		merged := make([]snapEntry, 0, len(es)+len(extra))
		i, j := 0, 0
		for i < len(es) || j < len(extra) {
			if j == len(extra) || i < len(es) && es[i].id < extra[j].id {
				merged = append(merged, es[i])
				i++
			} else {
				merged = append(merged, extra[j])
				j++
			}
		}
		es = merged
	}
	n := len(es)
	out := make([]byte, 0, 1<<20)
	offs := make([]uint64, n+1)
	seqs := make([]uint64, n)
	var keyed []uint32
	var err error
	for i, e := range es {
		offs[i] = uint64(len(out))
		if e.base >= 0 {
			out = append(out, b.raw(e.base)...)
			seqs[i] = b.seq(e.base)
			if b.isKeyed(e.base) {
				keyed = append(keyed, uint32(i))
			}
			continue
		}
		if out, err = appendRecord(out, e.rec); err != nil {
			return nil, snapshotIndex{}, err
		}
		seqs[i] = e.rec.Provenance.Seq
		if e.rec.Key != "" {
			keyed = append(keyed, uint32(i))
		}
	}
	runtime.KeepAlive(b)
	offs[n] = uint64(len(out))
	ix := snapshotIndex{Tail: len(out), Keyed: len(keyed)}
	out = binary.AppendUvarint(out, uint64(len(st.unknown)))
	for _, k := range sortedKeys(st.unknown) {
		out = appendString(out, k)
		out = binary.AppendUvarint(out, uint64(st.unknown[k]))
	}
	out = binary.AppendUvarint(out, uint64(st.skipped))
	ix.At = len(out)
	ord := make([]uint32, n)
	for i := range ord {
		ord[i] = uint32(i)
	}
	// Records are sorted by id, so equal sequences (one event's records) keep
	// id order by a stable sort on the sequence alone.
	slices.SortStableFunc(ord, func(x, y uint32) int { return cmp.Compare(seqs[x], seqs[y]) })
	pos := make([]uint32, n)
	for p, i := range ord {
		pos[i] = uint32(p)
	}
	for _, o := range offs {
		out = binary.LittleEndian.AppendUint64(out, o)
	}
	for _, s := range seqs {
		out = binary.LittleEndian.AppendUint64(out, s)
	}
	for _, col := range [][]uint32{ord, pos, keyed} {
		for _, x := range col {
			out = binary.LittleEndian.AppendUint32(out, x)
		}
	}
	ix.CRC32C = crc32.Checksum(out[ix.At:], castagnoli)
	return out, ix, nil
}

func hasRaw(es []snapEntry) bool {
	for _, e := range es {
		if e.base >= 0 {
			return true
		}
	}
	return false
}

// isKeyed reports whether record i is in the keyed list.
func (b *snapBase) isKeyed(i int) bool {
	k := len(b.keyed) / 4
	j := sort.Search(k, func(j int) bool { return int(binary.LittleEndian.Uint32(b.keyed[4*j:])) >= i })
	return j < k && int(binary.LittleEndian.Uint32(b.keyed[4*j:])) == i
}

// appendRecord encodes one record (the same fields, in the same order, as
// format version 1).
func appendRecord(b []byte, r *Record) ([]byte, error) {
	var err error
	for _, s := range []string{r.ID, r.Area, r.Text, r.Key} {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(r.Tags)))
	for _, t := range r.Tags {
		b = appendString(b, t)
	}
	if r.Metadata == nil {
		b = append(b, 0)
	} else if b, err = appendObject(append(b, 1), r.Metadata); err != nil {
		return nil, fmt.Errorf("record %s: metadata: %w", r.ID, err)
	}
	for _, t := range []time.Time{r.Created, r.Updated, r.LastAccess} {
		if b, err = appendTime(b, t); err != nil {
			return nil, fmt.Errorf("record %s: %w", r.ID, err)
		}
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.Importance))
	b = binary.AppendVarint(b, r.AccessCount)
	for _, s := range []string{string(r.Status), r.SupersededBy, r.Provenance.Session, r.Provenance.Message, r.Provenance.Source} {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, r.Provenance.Seq)
	return binary.AppendUvarint(b, r.Provenance.UpdatedSeq), nil
}

// record decodes one record (what appendRecord wrote) with its own tag slice.
func (d *stateDecoder) record(r *Record) { d.recordInto(r, false) }

// recordInto decodes one record into r; fields reuses r's tag slice and
// skips the metadata (r.Metadata is left nil).
func (d *stateDecoder) recordInto(r *Record, fields bool) {
	r.ID, r.Area, r.Text, r.Key = d.str(), d.str(), d.str(), d.str()
	nt := d.count()
	switch {
	case fields:
		r.Tags = r.Tags[:0]
		for range nt {
			r.Tags = append(r.Tags, d.str())
		}
	case nt > 0:
		r.Tags = make([]string, nt)
		for j := range r.Tags {
			r.Tags[j] = d.str()
		}
	}
	r.Metadata = nil
	switch d.byte() {
	case 0:
	case 1:
		if fields {
			d.skipObject(1)
		} else {
			r.Metadata = d.object(1)
		}
	default:
		if d.err == nil {
			d.err = errors.New("bad metadata marker")
		}
	}
	r.Created, r.Updated, r.LastAccess = d.time(), d.time(), d.time()
	r.Importance = d.float()
	r.AccessCount = d.varint()
	r.Status = Status(d.str())
	r.SupersededBy = d.str()
	r.Provenance = Provenance{Session: d.str(), Message: d.str(), Source: d.str()}
	r.Provenance.Seq, r.Provenance.UpdatedSeq = d.uvarint(), d.uvarint()
}
