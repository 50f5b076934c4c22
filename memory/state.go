package memory

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/exocortex/exocortex/staging"
)

// change is what one event did to one record, for the projections.
type change struct {
	id string
	// content is true when indexed fields changed (text, area, key, tags, status,
	// creation time) or the record was deleted; an access changes none of them.
	content bool
	vector  bool // new, or text or area changed: the vector must be recomputed
	deleted bool
}

// State is the record state: the primary projection of the journal.
type State struct {
	// base, when the state was opened from a version 2 snapshot, holds its
	// records undecoded: slots[i] is record i once decoded (nil before),
	// dead[i] that it was deleted since (both indexed by the base's record
	// number). recs holds the records that are not in the base: every record
	// when there is no base. An id is in exactly one of the two.
	base    *snapBase
	baseCRC uint32 // the base's body checksum (the snapshot header's)
	slots   []atomic.Pointer[Record]
	dead    []bool // written with the store's write lock held, like recs
	ndead   int
	// damage is the first base record that would not decode (the state is
	// then wrong and must be rebuilt from the journal).
	damage atomic.Pointer[stateDamage]
	dmu    sync.Mutex
	lost   []string // the ids of every base record that did not decode

	recs    map[string]*Record
	keys    map[[2]string]string // (area, key) -> id
	applied uint64
	unknown map[string]int // kinds this build does not apply, with counts
	skipped int            // events that could not apply (unknown id, key taken)
	// strs interns the short strings that repeat across records (areas, tags,
	// sessions, sources, statuses): one copy each instead of one per record.
	strs map[string]string

	// tally is the state hash and the counts kept current by apply (see
	// stateSum); tallyOK is false until it is known (a snapshot that did not
	// keep it). tallyMu serialises the one-time counting of concurrent readers.
	tally   tally
	tallyOK bool
	tallyMu sync.Mutex
	// counted is set when kept had to count the records (an older build's
	// snapshot kept no tally): the store's next Close then rewrites the
	// snapshot with it, so the count is paid once, not at every open.
	counted atomic.Bool
}

func (s *State) intern(x string) string {
	if x == "" {
		return ""
	}
	if y, ok := s.strs[x]; ok {
		return y
	}
	s.strs[x] = x
	return x
}

func newState() *State {
	return &State{recs: map[string]*Record{}, keys: map[[2]string]string{}, unknown: map[string]int{}, strs: map[string]string{}, tally: newTally(), tallyOK: true}
}

// Applied is the last journal sequence applied.
func (s *State) Applied() uint64 { return s.applied }

// stateDamage is a record of the snapshot's base that did not decode.
type stateDamage struct {
	path string
	id   string // its id, when the table could say (for the indexes to catch up)
	err  error
}

func (d *stateDamage) Error() string {
	return fmt.Sprintf("state snapshot %s: %v", d.path, d.err)
}

// damaged returns the first base record that did not decode, nil if none.
func (s *State) damaged() *stateDamage { return s.damage.Load() }

// lostIDs lists the ids of the base records that did not decode.
func (s *State) lostIDs() []string {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	return slices.Clone(s.lost)
}

// Len is the number of records (active and archived).
func (s *State) Len() int {
	n := len(s.recs)
	if s.base != nil {
		n += s.base.n - s.ndead
	}
	return n
}

func (s *State) get(id string) *Record {
	if r, ok := s.recs[id]; ok || s.base == nil {
		return r
	}
	if i, ok := s.base.find(id); ok {
		return s.at(i)
	}
	return nil
}

// at returns base record i, decoding it on first use; nil if it was deleted
// or does not decode (which marks the state damaged). Concurrent readers
// (the store's read lock) may decode the same record: one copy is kept.
func (s *State) at(i int) *Record {
	if s.dead[i] {
		return nil
	}
	if r := s.slots[i].Load(); r != nil {
		return r
	}
	r, err := s.base.record(i)
	if err != nil {
		d := &stateDamage{path: s.base.path, err: err}
		if id, ok := s.base.idView(i); ok {
			d.id = strings.Clone(id)
			s.dmu.Lock()
			s.lost = append(s.lost, d.id)
			s.dmu.Unlock()
		}
		s.damage.CompareAndSwap(nil, d)
		return nil
	}
	if !s.slots[i].CompareAndSwap(nil, r) {
		return s.slots[i].Load()
	}
	return r
}

// add puts a new record in the state (the store's write lock is held).
func (s *State) add(r *Record) {
	if s.base != nil {
		if i, ok := s.base.find(r.ID); ok {
			s.slots[i].Store(r)
			if s.dead[i] {
				s.dead[i] = false
				s.ndead--
			}
			return
		}
	}
	s.recs[r.ID] = r
}

// each calls fn with every record (decoding those not decoded yet), the
// base's in id order first, until fn returns false.
func (s *State) each(fn func(*Record) bool) {
	if s.base != nil {
		for i := range s.base.n {
			if r := s.at(i); r != nil && !fn(r) {
				return
			}
		}
	}
	for _, r := range s.recs {
		if !fn(r) {
			return
		}
	}
}

// eachMatch calls fn with every record f admits, until fn returns false. A
// base record not decoded yet is tested on a decode of its fields into a
// scratch record (no metadata, which a Filter does not read, and no
// allocation) and decoded for fn only when admitted; with scratch set, fn
// gets that scratch record instead: its strings are views of the mapped
// snapshot, valid during the call only (copy what you keep), and its
// Metadata is nil.
func (s *State) eachMatch(f Filter, scratch bool, fn func(*Record) bool) {
	if s.base != nil {
		var tmp Record
		for i := range s.base.n {
			if s.dead[i] {
				continue
			}
			r := s.slots[i].Load()
			if r == nil {
				if err := s.base.fields(i, &tmp); err != nil {
					s.at(i) // marks the state damaged, naming the record
					continue
				}
				if !f.match(&tmp) {
					continue
				}
				if r = &tmp; !scratch {
					if r = s.at(i); r == nil {
						continue
					}
				}
			} else if !f.match(r) {
				continue
			}
			if !fn(r) {
				return
			}
		}
		runtime.KeepAlive(s.base)
	}
	for _, r := range s.recs {
		if f.match(r) && !fn(r) {
			return
		}
	}
}

func (s *State) byKey(area, key string) *Record {
	if id, ok := s.keys[[2]string{area, key}]; ok {
		return s.get(id)
	}
	return nil
}

// apply applies one journal record. Records at or below the applied sequence and
// records of other kinds of log are ignored. An event that cannot apply (an
// unknown id) is counted and changes nothing: replay must never fail halfway.
func (s *State) apply(r staging.Record) ([]change, error) {
	if r.Seq <= s.applied {
		return nil, nil
	}
	s.applied = r.Seq
	if !isMemoryKind(r.Kind) {
		return nil, nil
	}
	ts := r.TS.UTC()
	src := func(x Source) Source {
		if x.Session == "" {
			x.Session = r.Session
		}
		return x
	}
	switch r.Kind {
	case KindUpsert:
		var e UpsertEvent
		if err := r.Decode(&e); err != nil {
			return nil, badEvent(r, err.Error())
		}
		if why := s.refusal(e); why != "" {
			s.skipped++
			return nil, badEvent(r, why)
		}
		return s.upsert(e, src(e.Source), r.Seq, ts), nil
	case KindArchive, KindRestore:
		var e ArchiveEvent
		if err := r.Decode(&e); err != nil {
			return nil, badEvent(r, err.Error())
		}
		rec := s.get(e.ID)
		if rec == nil {
			s.skipped++
			return nil, nil
		}
		s.unsum(rec)
		if r.Kind == KindArchive {
			rec.Status, rec.SupersededBy = StatusArchived, e.SupersededBy
		} else {
			rec.Status, rec.SupersededBy = StatusActive, ""
		}
		rec.Updated, rec.Provenance.UpdatedSeq = ts, r.Seq
		s.resum(rec)
		return []change{{id: e.ID, content: true}}, nil
	case KindDelete:
		var e DeleteEvent
		if err := r.Decode(&e); err != nil {
			return nil, badEvent(r, err.Error())
		}
		rec := s.get(e.ID)
		if rec == nil {
			s.skipped++
			return nil, nil
		}
		s.unsum(rec)
		s.remove(rec)
		return []change{{id: e.ID, content: true, deleted: true}}, nil
	case KindAccess:
		var e AccessEvent
		if err := r.Decode(&e); err != nil {
			return nil, badEvent(r, err.Error())
		}
		var out []change
		for _, id := range e.IDs {
			if rec := s.get(id); rec != nil {
				s.unsum(rec)
				rec.AccessCount++
				rec.LastAccess = ts
				s.resum(rec)
				out = append(out, change{id: id})
			}
		}
		return out, nil
	case KindMerge:
		var e MergeEvent
		if err := r.Decode(&e); err != nil {
			return nil, badEvent(r, err.Error())
		}
		into := s.get(e.Into)
		if into == nil {
			s.skipped++
			return nil, nil
		}
		out := []change{{id: e.Into, content: true, vector: e.Text != "" && e.Text != into.Text}}
		s.unsum(into)
		tags := into.Tags
		for _, id := range e.From {
			from := s.get(id)
			if from == nil || id == e.Into {
				continue
			}
			s.unsum(from)
			tags = append(tags, from.Tags...)
			if from.Importance > into.Importance {
				into.Importance = from.Importance
			}
			into.AccessCount += from.AccessCount
			from.AccessCount = 0
			from.Status, from.SupersededBy = StatusArchived, e.Into
			from.Updated, from.Provenance.UpdatedSeq = ts, r.Seq
			s.resum(from)
			out = append(out, change{id: id, content: true})
		}
		into.Tags = normTags(tags)
		if e.Text != "" {
			into.Text = e.Text
		}
		into.Updated, into.Provenance.UpdatedSeq = ts, r.Seq
		s.resum(into)
		return out, nil
	}
	s.unknown[r.Kind]++
	return nil, nil
}

func (s *State) upsert(e UpsertEvent, src Source, seq uint64, ts time.Time) []change {
	if e.ID == "" || ValidArea(e.Area) != nil {
		s.skipped++
		return nil
	}
	if e.Key != "" {
		if holder, ok := s.keys[[2]string{e.Area, e.Key}]; ok && holder != e.ID {
			s.skipped++ // the store never writes this; a hand-made journal might
			return nil
		}
	}
	rec := s.get(e.ID)
	ch := change{id: e.ID, content: true, vector: true}
	if rec == nil {
		rec = &Record{ID: e.ID, Created: ts, Status: StatusActive,
			Provenance: Provenance{Session: s.intern(src.Session), Message: src.Message, Source: s.intern(src.Source), Seq: seq}}
		if e.Created != nil {
			rec.Created = e.Created.UTC()
		}
		s.add(rec)
	} else {
		s.unsum(rec)
		ch.vector = rec.Text != e.Text || rec.Area != e.Area
		if rec.Key != "" {
			delete(s.keys, [2]string{rec.Area, rec.Key})
		}
	}
	rec.Area, rec.Text, rec.Key = s.intern(e.Area), e.Text, e.Key
	rec.Tags = normTags(e.Tags)
	for i, t := range rec.Tags {
		rec.Tags[i] = s.intern(t)
	}
	rec.Metadata = e.Metadata
	if len(rec.Metadata) == 0 {
		rec.Metadata = nil
	}
	rec.Importance = DefaultImportance
	if e.Importance != nil {
		rec.Importance = *e.Importance
	}
	if e.Status != "" {
		rec.Status = Status(s.intern(string(e.Status)))
		if e.Status == StatusActive {
			rec.SupersededBy = ""
		}
	}
	rec.Updated, rec.Provenance.UpdatedSeq = ts, seq
	if rec.Key != "" {
		s.keys[[2]string{rec.Area, rec.Key}] = rec.ID
	}
	s.resum(rec)
	return []change{ch}
}

func (s *State) remove(rec *Record) {
	if rec.Key != "" {
		delete(s.keys, [2]string{rec.Area, rec.Key})
	}
	if s.base != nil {
		if i, ok := s.base.find(rec.ID); ok {
			if !s.dead[i] {
				s.dead[i] = true
				s.ndead++
			}
			s.slots[i].Store(nil)
			return
		}
	}
	delete(s.recs, rec.ID)
}

// sortedIDs returns every record id in order.
func (s *State) sortedIDs() []string {
	ids := make([]string, 0, s.Len())
	s.each(func(r *Record) bool {
		ids = append(ids, r.ID)
		return true
	})
	sort.Strings(ids)
	return ids
}
