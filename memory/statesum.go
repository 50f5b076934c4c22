package memory

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math/bits"
	"strings"
)

// The state hash is a set hash, so that writes keep it current: each record's
// digest is SHA-256 of its canonical JSON (fixed field order, sorted metadata
// keys, UTC times), and the state's is the sum of its records' digests modulo
// 2^256. A write subtracts the digests of the records it changes and adds their
// new ones; no read hashes every record, so `memory stats` costs the same at
// 100k records as at 1k. Records are unique by id, so no two digests of one
// state are the same record's, and the sum depends only on the journal, not
// on when or where it was replayed. The snapshot keeps the sum (its header's
// state_sum), so an open from it does not hash the records either.

// stateSumPrefix marks the hash's scheme.
const stateSumPrefix = "sha256sum:"

// stateSum is a 256-bit number, least significant word first.
type stateSum [4]uint64

func recordDigest(r *Record) stateSum {
	b, err := json.Marshal(r)
	if err != nil {
		// metadata came from JSON, so it encodes; say so loudly if not
		panic(fmt.Sprintf("memory: encoding record %s for the state hash: %v", r.ID, err))
	}
	h := sha256.New()
	h.Write(b)
	h.Write([]byte{'\n'})
	var d [32]byte
	h.Sum(d[:0])
	var s stateSum
	for i := range 4 {
		s[i] = binary.BigEndian.Uint64(d[32-8*(i+1):])
	}
	return s
}

func (s *stateSum) add(d stateSum) {
	var c uint64
	for i := range 4 {
		s[i], c = bits.Add64(s[i], d[i], c)
	}
}

func (s *stateSum) sub(d stateSum) {
	var b uint64
	for i := range 4 {
		s[i], b = bits.Sub64(s[i], d[i], b)
	}
}

func (s stateSum) String() string {
	var b [32]byte
	for i := range 4 {
		binary.BigEndian.PutUint64(b[32-8*(i+1):], s[i])
	}
	return stateSumPrefix + hex.EncodeToString(b[:])
}

// parseStateSum reads what String wrote.
func parseStateSum(x string) (stateSum, bool) {
	var s stateSum
	h, ok := strings.CutPrefix(x, stateSumPrefix)
	if !ok {
		return s, false
	}
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != 32 {
		return s, false
	}
	for i := range 4 {
		s[i] = binary.BigEndian.Uint64(b[32-8*(i+1):])
	}
	return s, true
}

// tally is what writes keep of the whole state besides the records: the
// state hash and the counts of records by area and by status (memory stats).
type tally struct {
	sum      stateSum
	byArea   map[string]int
	byStatus map[string]int
	// areaSum is each area's share of sum (the same set hash over the area's
	// records): the state hash of one namespace, kept as cheaply.
	areaSum map[string]stateSum
}

func newTally() tally {
	return tally{byArea: map[string]int{}, byStatus: map[string]int{}, areaSum: map[string]stateSum{}}
}

func (t *tally) add(r *Record, sign int) {
	d := recordDigest(r)
	as := t.areaSum[r.Area]
	if sign > 0 {
		t.sum.add(d)
		as.add(d)
	} else {
		t.sum.sub(d)
		as.sub(d)
	}
	t.areaSum[r.Area] = as
	for _, c := range []struct {
		m map[string]int
		k string
	}{{t.byArea, r.Area}, {t.byStatus, string(r.Status)}} {
		if c.m[c.k] += sign; c.m[c.k] == 0 {
			delete(c.m, c.k)
		}
	}
	if t.byArea[r.Area] == 0 {
		delete(t.areaSum, r.Area)
	}
}

// areaHashes renders each area's sum.
func (t *tally) areaHashes() map[string]string {
	out := make(map[string]string, len(t.areaSum))
	for a, s := range t.areaSum {
		out[a] = s.String()
	}
	return out
}

// snapshotTally is a tally in the snapshot's header.
type snapshotTally struct {
	StateSum string         `json:"state_sum"`
	ByArea   map[string]int `json:"by_area"`
	ByStatus map[string]int `json:"by_status"`
	// AreaSums are the areas' shares of StateSum (absent from an older
	// build's snapshot: the first reader then counts the records once).
	AreaSums map[string]string `json:"area_sums,omitempty"`
}

// unsum takes r out of the kept tally, before r changes; resum puts it back
// after. Both run under the store's write lock (or on a state not yet
// shared), like every change of a record.
func (s *State) unsum(r *Record) {
	if s.tallyOK {
		s.tally.add(r, -1)
	}
}

func (s *State) resum(r *Record) {
	if s.tallyOK {
		s.tally.add(r, +1)
	}
}

// setTally takes the tally a snapshot kept (nil or unreadable: none, so the
// first reader counts the records once).
func (s *State) setTally(t *snapshotTally) {
	s.tallyOK = false
	if t == nil {
		return
	}
	sum, ok := parseStateSum(t.StateSum)
	if !ok {
		return
	}
	areaSum := make(map[string]stateSum, len(t.AreaSums))
	for a, x := range t.AreaSums {
		as, ok := parseStateSum(x)
		if !ok {
			return
		}
		areaSum[a] = as
	}
	for a := range t.ByArea {
		if _, ok := areaSum[a]; !ok {
			return
		}
	}
	s.tally = tally{sum: sum, byArea: maps.Clone(t.ByArea), byStatus: maps.Clone(t.ByStatus), areaSum: areaSum}
	if s.tally.byArea == nil {
		s.tally.byArea = map[string]int{}
	}
	if s.tally.byStatus == nil {
		s.tally.byStatus = map[string]int{}
	}
	s.tallyOK = true
}

// kept returns the tally, counting the records first if it is not known
// (once). Readers holding the store's read lock may call it concurrently; the
// maps are the state's: read them under that lock, copy what is kept.
func (s *State) kept() *tally {
	s.tallyMu.Lock()
	defer s.tallyMu.Unlock()
	if !s.tallyOK {
		t := newTally()
		s.each(func(r *Record) bool {
			t.add(r, +1)
			return true
		})
		s.tally, s.tallyOK = t, true
	}
	return &s.tally
}

// snapshotTally is the kept tally for the snapshot's header.
func (s *State) snapshotTally() *snapshotTally {
	t := s.kept()
	return &snapshotTally{StateSum: t.sum.String(), ByArea: t.byArea, ByStatus: t.byStatus, AreaSums: t.areaHashes()}
}

// Hash is the state hash: the sum of the records' digests (see stateSum). It
// is kept by the writes; only a state opened from a snapshot that did not keep
// it (an older build's) sums its records, once.
func (s *State) Hash() string { return s.kept().sum.String() }
