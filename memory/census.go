package memory

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/google/renameio/v2"

	"github.com/exocortex/exocortex/staging"
)

// CensusFile keeps the census of every active record (Census with the zero
// Filter: what the memory catalog shows once per session) between opens. On a
// store of 100k records counting it means decoding every record of the
// snapshot (about 0.3 CPU-s in a new process); kept, the first session's
// catalog costs nothing. It is a cache: Close writes it when the census it
// holds is current, the first Census after an open reads it when it was
// written at the journal's current end (sequence and size), and anything else
// (missing, damaged, older) is counted again. `memory replay --verify`
// ignores it.
const CensusFile = "census.json"

// censusFile is CensusFile's content.
type censusFile struct {
	Version int               `json:"version"`
	Seq     uint64            `json:"seq"`           // the journal's last sequence it counts
	Size    int64             `json:"journal_bytes"` // the journal's size then
	Areas   map[string]Census `json:"areas"`
	// CRC32C is the CRC-32C of the file's JSON encoding without it.
	CRC32C *uint32 `json:"crc32c,omitempty"`
}

func (c censusFile) sum() uint32 {
	c.CRC32C = nil
	b, _ := json.Marshal(c)
	return crc32.Checksum(b, castagnoli)
}

// keptCensus is the census of every active record at a state sequence; a
// write that keeps it current adjusts it (track) instead of dropping it.
type keptCensus struct {
	seq    uint64
	byArea map[string]Census // nil: none kept
	// read is set once CensusFile was tried (at most once per open).
	read bool
	// saved is the sequence CensusFile holds (0: unknown).
	saved uint64
}

// count adds r's contribution to the census times sign (+1 or -1).
func (k *keptCensus) count(r *Record, sign int) {
	if r == nil || !(Filter{}).match(r) {
		return
	}
	c, ok := k.byArea[r.Area]
	if !ok {
		c.Tags = map[string]int{}
	}
	c.Records += sign
	for _, t := range r.Tags {
		c.Tags[t] += sign
		if c.Tags[t] == 0 {
			delete(c.Tags, t)
		}
	}
	if c.Records == 0 && len(c.Tags) == 0 {
		delete(k.byArea, r.Area)
		return
	}
	k.byArea[r.Area] = c
}

// censusIDs is the records a journal event can change the census of: those
// its payload names (eventRefs). An access changes nothing the census counts.
// censusTrack drops the census if the apply changes another record.
func censusIDs(r staging.Record) []string {
	if !isMemoryKind(r.Kind) || r.Kind == KindAccess {
		return nil
	}
	return eventRefs(r.Payload)
}

// censusTrack returns, for a journal record about to be applied, a function
// to call with the changes its apply made, which keeps the kept census
// current; nil when no census is kept (or it is not current: it is dropped).
// A change to a record the event does not name drops the census too. s.mu is
// held for writing.
func (s *Store) censusTrack(r staging.Record) func([]change) {
	s.kept.Lock()
	defer s.kept.Unlock()
	if s.kept.byArea == nil {
		return nil
	}
	ids := censusIDs(r)
	if s.kept.seq != s.state.applied {
		s.kept.byArea = nil
		return nil
	}
	before := make([]*Record, len(ids))
	for i, id := range ids {
		if rec := s.state.get(id); rec != nil {
			before[i] = &Record{Area: rec.Area, Status: rec.Status, Tags: append([]string(nil), rec.Tags...)}
		}
	}
	return func(chs []change) {
		s.kept.Lock()
		defer s.kept.Unlock()
		if s.kept.byArea == nil {
			return
		}
		for _, c := range chs {
			if c.content && !slices.Contains(ids, c.id) {
				s.kept.byArea = nil
				return
			}
		}
		for i, id := range ids {
			s.kept.count(before[i], -1)
			s.kept.count(s.state.get(id), +1)
		}
		s.kept.seq = s.state.applied
	}
}

// readCensus loads CensusFile into the kept census if it was written at the
// journal's current end. s.mu is held; s.kept is locked.
func (s *Store) readCensus() {
	s.kept.read = true
	b, err := os.ReadFile(filepath.Join(s.dir, CensusFile))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Debug("memory: the census file cannot be read: counting again", "err", err)
		}
		return
	}
	var c censusFile
	if err := json.Unmarshal(b, &c); err != nil || c.Version != 1 || c.CRC32C == nil || *c.CRC32C != c.sum() || c.Areas == nil {
		s.log.Debug("memory: the census file is damaged: counting again", "file", CensusFile)
		return
	}
	if c.Seq != s.state.applied || c.Seq != s.journal.LastSeq() || c.Size != s.journal.Size() {
		return // written at another point of the journal
	}
	for a, n := range c.Areas {
		if n.Tags == nil {
			n.Tags = map[string]int{}
			c.Areas[a] = n
		}
	}
	s.kept.seq, s.kept.byArea, s.kept.saved = c.Seq, c.Areas, c.Seq
}

// saveCensus writes CensusFile when the kept census is current and not yet
// in it. Close calls it; a failure is logged (the file is a cache).
func (s *Store) saveCensus() {
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.kept.Lock()
	defer s.kept.Unlock()
	last := s.journal.LastSeq()
	if s.kept.byArea == nil || s.kept.seq != s.state.applied || s.kept.seq != last || s.kept.saved == last {
		return
	}
	c := censusFile{Version: 1, Seq: last, Size: s.journal.Size(), Areas: s.kept.byArea}
	sum := c.sum()
	c.CRC32C = &sum
	b, err := json.Marshal(c)
	if err == nil {
		err = renameio.WriteFile(filepath.Join(s.dir, CensusFile), b, 0o600)
	}
	if err != nil {
		s.log.Warn("memory: " + fmt.Sprintf("writing %s: %v (the next open counts the records again)", filepath.Join(s.dir, CensusFile), err))
		return
	}
	s.kept.saved = last
}
