package memory

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/google/renameio/v2"

	"github.com/exocortex/exocortex/staging"
)

// The state snapshot (state.snap) holds the record state as it was at a journal
// position, so that Open reads it and replays only the journal's tail instead of
// the whole history. It is a cache of the journal, never the truth: a snapshot
// that is missing, damaged (checksum), from another format version, or that no
// longer matches the journal (the journal does not have its last record where it
// says) is set aside and the state is rebuilt from the journal, with a notice.
//
// Format: one JSON header line (snapshotHeader), then a binary body whose
// CRC-32C (Castagnoli) is in the header (and where the records can be cut, to
// decode them on two threads). The body is the records sorted by id,
// each as length-prefixed fields (uvarints, strings, times in time.Time's binary
// form, metadata as tagged JSON values), then the counts of unknown event kinds
// and of skipped events.

// snapshotVersion is the version of state.snap's format this build writes
// (see snapbase.go); it reads version 1 too (decoded whole, then rewritten).
const snapshotVersion = 2

// snapshotEvery is how many journal events a session writes between snapshots,
// besides the one written on Close, so that a process that dies replays at most
// this many events on the next open.
const snapshotEvery = 20_000

type snapshotHeader struct {
	Version int `json:"version"`
	// Journal is where the snapshot stops: the last journal record it holds and
	// the byte at which that record's line ends.
	Journal staging.Checkpoint `json:"journal"`
	Records int                `json:"records"`
	Bytes   int                `json:"bytes"`
	CRC32C  uint32             `json:"crc32c"`
	// Parts, when present, say where the body's records can be cut to be
	// decoded in parallel: each is the index of a record and the byte of the
	// body at which it starts (ascending). A build that does not know them
	// decodes the body in one pass, as it always did.
	Parts []snapshotPart `json:"parts,omitempty"`
	// Index locates a version 2 body's index and counters.
	Index *snapshotIndex `json:"index,omitempty"`
	// Tally is the state hash and the counts by area and status (see
	// stateSum), so an open from the snapshot need not read every record for
	// them; a snapshot without it (an older build's) has them counted once.
	Tally *snapshotTally `json:"tally,omitempty"`
}

type snapshotPart struct {
	Record int `json:"record"`
	Offset int `json:"offset"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// snapshot is a decoded state.snap.
type snapshot struct {
	at      staging.Checkpoint
	state   *State
	version int
}

// errNoSnapshot: the file does not exist (no notice needed).
var errNoSnapshot = errors.New("no snapshot")

// readSnapshot reads and checks the snapshot at path in full: its checksum,
// and every record decoded (a version 2 file's also against its index). The
// error says what is wrong with it; errNoSnapshot means there is none.
func readSnapshot(path string) (*snapshot, error) {
	f, err := openSnapshot(path, nil)
	if err != nil {
		return nil, err
	}
	snap, err := f.decode()
	if err != nil {
		return nil, err
	}
	if b := snap.state.base; b != nil {
		if err := b.checkAll(); err != nil {
			return nil, err
		}
	}
	return snap, nil
}

// snapshotFile is a snapshot read whole, whose header was checked; decode
// checks and decodes its body.
type snapshotFile struct {
	h    snapshotHeader
	m    *fileMapping // version 2: the mapping body is part of
	path string
	body []byte
	fi   fs.FileInfo
	// trusted: CheckedFile holds the file's stamp, so decode skips the
	// checksum (it still checks every record as it decodes it).
	trusted bool
}

// openSnapshot maps the snapshot at path and checks its header and length;
// checked is CheckedFile's stamps.
func openSnapshot(path string, checked map[string]fileStamp) (*snapshotFile, error) {
	m, fi, err := mapSnapshot(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoSnapshot
	}
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %w", err)
	}
	b := m.b
	nl := bytes.IndexByte(b, '\n')
	var h snapshotHeader
	if nl < 0 || json.Unmarshal(b[:nl], &h) != nil {
		return nil, errors.New("has an unreadable header")
	}
	if h.Version != snapshotVersion && h.Version != 1 {
		return nil, fmt.Errorf("has format version %d, this build reads 1 and %d", h.Version, snapshotVersion)
	}
	body := b[nl+1:]
	if len(body) != h.Bytes {
		return nil, fmt.Errorf("is truncated or padded: %d bytes of body, the header says %d", len(body), h.Bytes)
	}
	if h.Version == 1 {
		// Decoded whole, its strings slices of the body: a copy the
		// collector keeps alive, not the mapping.
		body = bytes.Clone(body)
		m = nil
	}
	return &snapshotFile{h: h, m: m, path: path, body: body, fi: fi, trusted: trusted(checked, SnapshotFile, fi)}, nil
}

// mapSnapshot maps the file at path whole and describes the file it mapped.
func mapSnapshot(path string) (*fileMapping, fs.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	m, err := mapFile(f, fi.Size())
	if err != nil {
		return nil, nil, err
	}
	return m, fi, nil
}

// stamp is the file's stamp to keep in CheckedFile after a decode that
// succeeded: the one it had if it was trusted, else a new one (nil if its
// change time is too recent).
func (f *snapshotFile) stamp(now time.Time) *fileStamp {
	if f.fi == nil {
		return nil
	}
	if f.trusted {
		st, _ := stampOf(f.fi)
		return &st
	}
	return stampFor(f.fi, now)
}

// decode checks the body's checksum (unless the file is trusted) and decodes
// the state.
func (f *snapshotFile) decode() (*snapshot, error) {
	if !f.trusted && crc32.Checksum(f.body, castagnoli) != f.h.CRC32C {
		return nil, errors.New("fails its checksum")
	}
	if f.h.Version == 2 {
		st, err := openBase(f.path, f.m, f.body, f.h, !f.trusted)
		if err != nil {
			return nil, err
		}
		st.baseCRC = f.h.CRC32C
		st.applied = f.h.Journal.Seq
		st.setTally(f.h.Tally)
		return &snapshot{at: f.h.Journal, state: st, version: 2}, nil
	}
	// The state's strings are slices of the body, which nothing writes to
	// again: decoding copies no text.
	st, err := decodeStateParts(unsafe.String(unsafe.SliceData(f.body), len(f.body)), f.h.Records, f.h.Parts)
	if err != nil {
		return nil, fmt.Errorf("cannot be decoded: %w", err)
	}
	st.applied = f.h.Journal.Seq
	st.setTally(f.h.Tally)
	return &snapshot{at: f.h.Journal, state: st, version: 1}, nil
}

// writeSnapshot writes st, taken at the journal position at, to path
// atomically (a temporary file, fsync, rename).
func writeSnapshot(path string, st *State, at staging.Checkpoint) error {
	body, ix, err := encodeStateV2(st, st.baseCRC)
	if err != nil {
		return fmt.Errorf("memory: encoding the state snapshot %s: %w", path, err)
	}
	h := snapshotHeader{Version: snapshotVersion, Journal: at, Records: st.Len(), Bytes: len(body), CRC32C: crc32.Checksum(body, castagnoli), Index: &ix,
		Tally: st.snapshotTally()}
	head, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("memory: encoding the state snapshot %s: %w", path, err)
	}
	out := make([]byte, 0, len(head)+1+len(body))
	out = append(append(append(out, head...), '\n'), body...)
	if err := renameio.WriteFile(path, out, 0o600); err != nil {
		return fmt.Errorf("memory: writing the state snapshot %s: %w", path, err)
	}
	return nil
}

// Value tags of the metadata encoding.
const (
	tagNull byte = iota
	tagFalse
	tagTrue
	tagNumber
	tagString
	tagArray
	tagObject
)

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendTime(b []byte, t time.Time) ([]byte, error) {
	if t.IsZero() {
		return append(b, 0), nil
	}
	b = append(b, 1)
	return t.AppendBinary(b)
}

func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, tagNull), nil
	case bool:
		if x {
			return append(b, tagTrue), nil
		}
		return append(b, tagFalse), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, tagNumber), math.Float64bits(x)), nil
	case string:
		return appendString(append(b, tagString), x), nil
	case []any:
		b = binary.AppendUvarint(append(b, tagArray), uint64(len(x)))
		var err error
		for _, e := range x {
			if b, err = appendValue(b, e); err != nil {
				return nil, err
			}
		}
		return b, nil
	case map[string]any:
		return appendObject(append(b, tagObject), x)
	}
	return nil, fmt.Errorf("a metadata value of type %T is not a JSON value", v)
}

func appendObject(b []byte, m map[string]any) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(len(m)))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var err error
	for _, k := range keys {
		b = appendString(b, k)
		if b, err = appendValue(b, m[k]); err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
	}
	return b, nil
}

// stateDecoder reads an encoded state. Strings are slices of the body, which is
// one string: decoding copies no text.
type stateDecoder struct {
	s   string
	off int
	err error
}

var errShort = errors.New("the body ends in the middle of a value")

func (d *stateDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	var x uint64
	var shift uint
	for i := 0; i < binary.MaxVarintLen64; i++ {
		if d.off >= len(d.s) {
			d.err = errShort
			return 0
		}
		c := d.s[d.off]
		d.off++
		if c < 0x80 {
			return x | uint64(c)<<shift
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	d.err = errors.New("a number is too long")
	return 0
}

func (d *stateDecoder) varint() int64 {
	u := d.uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

func (d *stateDecoder) bytes(n int) string {
	if d.err != nil {
		return ""
	}
	if n < 0 || n > len(d.s)-d.off {
		d.err = errShort
		return ""
	}
	s := d.s[d.off : d.off+n]
	d.off += n
	return s
}

func (d *stateDecoder) str() string { return d.bytes(int(min(d.uvarint(), uint64(len(d.s))+1))) }

func (d *stateDecoder) byte() byte {
	if s := d.bytes(1); s != "" {
		return s[0]
	}
	return 0
}

func (d *stateDecoder) float() float64 {
	s := d.bytes(8)
	if d.err != nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64([]byte(s)))
}

// count reads a length, refusing one larger than the bytes left (each element
// takes at least one byte), so damage cannot ask for a huge allocation.
func (d *stateDecoder) count() int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.s)-d.off) {
		d.err = fmt.Errorf("a count of %d is larger than the rest of the body", n)
		return 0
	}
	return int(n)
}

func (d *stateDecoder) time() time.Time {
	switch d.byte() {
	case 0:
		return time.Time{}
	case 1:
	default:
		if d.err == nil {
			d.err = errors.New("a time has a bad marker")
		}
		return time.Time{}
	}
	if d.err != nil || d.off >= len(d.s) {
		d.err = errShort
		return time.Time{}
	}
	// time.Time's binary form: version byte, 8 bytes of seconds, 4 of
	// nanoseconds, 2 of zone offset (and 1 more of seconds offset in version 2).
	n := 15
	if d.s[d.off] == 2 {
		n = 16
	}
	raw := d.bytes(n)
	if d.err != nil {
		return time.Time{}
	}
	// The usual case, a UTC time in version 1, decoded directly: seconds
	// since year 1, nanoseconds, and a zone offset of -1 (UTC).
	if n == 15 && raw[13] == 0xff && raw[14] == 0xff {
		sec := int64(binary.BigEndian.Uint64([]byte(raw[1:9])))
		nsec := int64(binary.BigEndian.Uint32([]byte(raw[9:13])))
		if nsec >= 0 && nsec < 1e9 {
			return time.Unix(sec-unixToInternal, nsec).UTC()
		}
	}
	var t time.Time
	if err := t.UnmarshalBinary([]byte(raw)); err != nil {
		d.err = err
	}
	return t
}

// unixToInternal is the seconds from year 1 to 1970, the origin of
// time.Time's binary form.
const unixToInternal int64 = (1969*365 + 1969/4 - 1969/100 + 1969/400) * 86400

func (d *stateDecoder) value(depth int) any {
	if depth > 64 {
		d.err = errors.New("metadata nested too deep")
		return nil
	}
	switch tag := d.byte(); tag {
	case tagNull:
		return nil
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagNumber:
		return d.float()
	case tagString:
		return d.str()
	case tagArray:
		n := d.count()
		out := make([]any, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			out = append(out, d.value(depth+1))
		}
		return out
	case tagObject:
		return d.object(depth + 1)
	default:
		if d.err == nil {
			d.err = fmt.Errorf("unknown value tag %d", tag)
		}
		return nil
	}
}

func (d *stateDecoder) object(depth int) map[string]any {
	n := d.count()
	m := make(map[string]any, n)
	for i := 0; i < n && d.err == nil; i++ {
		k := d.str()
		m[k] = d.value(depth)
	}
	return m
}

// decodeStateParts decodes a version 1 body (written by an older build) cutting the records where parts say (the
// header's Parts), each part decoded on its own goroutine with its own intern
// table. Parts that do not fit the body are a damaged snapshot.
func decodeStateParts(body string, records int, parts []snapshotPart) (*State, error) {
	d := &stateDecoder{s: body}
	st := newState()
	n := d.count()
	if d.err == nil && n != records {
		return nil, fmt.Errorf("the body holds %d records, the header says %d", n, records)
	}
	if d.err != nil {
		return nil, fmt.Errorf("at byte %d: %w", d.off, d.err)
	}
	recs := make([]Record, n) // one allocation for every record
	// Part i decodes records [from[i], from[i+1]) starting at byte at[i].
	from, at := []int{0}, []int{d.off}
	for _, p := range parts {
		if p.Record <= from[len(from)-1] || p.Record >= n || p.Offset <= at[len(at)-1] || p.Offset >= len(body) {
			return nil, fmt.Errorf("the header's parts (%v) do not fit a body of %d records and %d bytes", parts, n, len(body))
		}
		from, at = append(from, p.Record), append(at, p.Offset)
	}
	from = append(from, n)
	type result struct {
		end  int
		strs map[string]string
		err  error
	}
	res := make([]result, len(at))
	var wg sync.WaitGroup
	for i := range at {
		decode := func() {
			pd := &stateDecoder{s: body, off: at[i]}
			strs := st.strs
			if i > 0 {
				strs = map[string]string{}
			}
			err := pd.records(recs[from[i]:from[i+1]], from[i], strs)
			res[i] = result{end: pd.off, strs: strs, err: err}
		}
		if i == len(at)-1 {
			decode() // the last part on this goroutine
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); decode() }()
	}
	wg.Wait()
	for i, r := range res {
		if r.err != nil {
			return nil, r.err
		}
		if i+1 < len(at) && r.end != at[i+1] {
			return nil, fmt.Errorf("record %d ends at byte %d, the header's part starts at %d", from[i+1], r.end, at[i+1])
		}
		if i > 0 && recs[from[i]].ID <= recs[from[i]-1].ID {
			return nil, fmt.Errorf("record %d has a repeated or unordered id %q (after %q)", from[i]+1, recs[from[i]].ID, recs[from[i]-1].ID)
		}
		for k, v := range r.strs {
			if _, ok := st.strs[k]; !ok {
				st.strs[k] = v
			}
		}
	}
	st.recs = make(map[string]*Record, n)
	for i := range recs {
		r := &recs[i]
		st.recs[r.ID] = r
		if r.Key != "" {
			st.keys[[2]string{r.Area, r.Key}] = r.ID
		}
	}
	d.off = res[len(res)-1].end
	nu := d.count()
	for i := 0; i < nu && d.err == nil; i++ {
		k := d.str()
		st.unknown[k] = int(d.uvarint())
	}
	st.skipped = int(d.uvarint())
	if d.err != nil {
		return nil, fmt.Errorf("at byte %d: %w", d.off, d.err)
	}
	if d.off != len(body) {
		return nil, fmt.Errorf("%d bytes left after the state", len(body)-d.off)
	}
	return st, nil
}

// records decodes len(recs) records into recs, the first being record number
// first of the body; strs interns the strings that repeat.
func (d *stateDecoder) records(recs []Record, first int, strs map[string]string) error {
	it := &State{strs: strs}
	// The repeated strings mostly repeat the previous record's: one comparison
	// each instead of a lookup in the intern table.
	var area, status, session, source lastString
	// Tag lists are cut from shared slabs instead of allocated one by one.
	var slab []string
	prev := ""
	for i := range recs {
		r := &recs[i]
		r.ID, r.Area, r.Text, r.Key = d.str(), area.intern(it, d.str()), d.str(), d.str()
		if nt := d.count(); nt > 0 {
			if len(slab)+nt > cap(slab) {
				slab = make([]string, 0, max(nt, 1024))
			}
			r.Tags = slab[len(slab) : len(slab)+nt : len(slab)+nt]
			slab = slab[:len(slab)+nt]
			for j := range r.Tags {
				r.Tags[j] = it.intern(d.str())
			}
		}
		switch d.byte() {
		case 0:
		case 1:
			r.Metadata = d.object(1)
		default:
			if d.err == nil {
				d.err = errors.New("bad metadata marker")
			}
		}
		r.Created, r.Updated, r.LastAccess = d.time(), d.time(), d.time()
		r.Importance = d.float()
		r.AccessCount = d.varint()
		r.Status = Status(status.intern(it, d.str()))
		r.SupersededBy = d.str()
		r.Provenance = Provenance{Session: session.intern(it, d.str()), Message: d.str(), Source: source.intern(it, d.str())}
		r.Provenance.Seq, r.Provenance.UpdatedSeq = d.uvarint(), d.uvarint()
		if d.err != nil {
			return fmt.Errorf("record %d, at byte %d: %w", first+i+1, d.off, d.err)
		}
		// The records are sorted by id, so rising ids are distinct ones.
		if r.ID <= prev {
			return fmt.Errorf("record %d has an empty, repeated or unordered id %q (after %q)", first+i+1, r.ID, prev)
		}
		prev = r.ID
	}
	return nil
}

// lastString interns a string through the state's table, remembering the last
// one: a run of equal strings costs one comparison each.
type lastString struct{ s string }

func (l *lastString) intern(st *State, x string) string {
	if x != l.s {
		l.s = st.intern(x)
	}
	return l.s
}

// SnapshotCount reads only the header of the snapshot in dir: how many
// records the store held at its last snapshot, and the journal sequence it
// was taken at. It takes no lock and checks no checksum, so a process that
// holds the store can be asked about its size cheaply (the terminal's
// welcome card does, while the memory plugin opens the store); the figure
// leaves out what the journal holds past that sequence. ok is false when
// there is no readable snapshot.
func SnapshotCount(dir string) (records int, seq uint64, ok bool) {
	f, err := os.Open(filepath.Join(dir, SnapshotFile))
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	// The header grows with the areas (their counts and hashes): read the
	// whole line, whatever its length.
	line, err := bufio.NewReaderSize(f, 4096).ReadBytes('\n')
	if err != nil {
		return 0, 0, false
	}
	var h snapshotHeader
	if json.Unmarshal(line, &h) != nil || h.Version != snapshotVersion && h.Version != 1 {
		return 0, 0, false
	}
	return h.Records, h.Journal.Seq, true
}
