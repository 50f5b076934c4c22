package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
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
	recs    map[string]*Record
	keys    map[[2]string]string // (area, key) -> id
	applied uint64
	unknown map[string]int // kinds this build does not apply, with counts
	skipped int            // events that could not apply (unknown id, key taken)
	// strs interns the short strings that repeat across records (areas, tags,
	// sessions, sources, statuses): one copy each instead of one per record.
	strs map[string]string
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
	return &State{recs: map[string]*Record{}, keys: map[[2]string]string{}, unknown: map[string]int{}, strs: map[string]string{}}
}

// Applied is the last journal sequence applied.
func (s *State) Applied() uint64 { return s.applied }

// Len is the number of records (active and archived).
func (s *State) Len() int { return len(s.recs) }

func (s *State) get(id string) *Record { return s.recs[id] }

func (s *State) byKey(area, key string) *Record {
	if id, ok := s.keys[[2]string{area, key}]; ok {
		return s.recs[id]
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
			return nil, err
		}
		return s.upsert(e, src(e.Source), r.Seq, ts), nil
	case KindArchive, KindRestore:
		var e ArchiveEvent
		if err := r.Decode(&e); err != nil {
			return nil, err
		}
		rec := s.recs[e.ID]
		if rec == nil {
			s.skipped++
			return nil, nil
		}
		if r.Kind == KindArchive {
			rec.Status, rec.SupersededBy = StatusArchived, e.SupersededBy
		} else {
			rec.Status, rec.SupersededBy = StatusActive, ""
		}
		rec.Updated, rec.Provenance.UpdatedSeq = ts, r.Seq
		return []change{{id: e.ID, content: true}}, nil
	case KindDelete:
		var e DeleteEvent
		if err := r.Decode(&e); err != nil {
			return nil, err
		}
		rec := s.recs[e.ID]
		if rec == nil {
			s.skipped++
			return nil, nil
		}
		s.remove(rec)
		return []change{{id: e.ID, content: true, deleted: true}}, nil
	case KindAccess:
		var e AccessEvent
		if err := r.Decode(&e); err != nil {
			return nil, err
		}
		var out []change
		for _, id := range e.IDs {
			if rec := s.recs[id]; rec != nil {
				rec.AccessCount++
				rec.LastAccess = ts
				out = append(out, change{id: id})
			}
		}
		return out, nil
	case KindMerge:
		var e MergeEvent
		if err := r.Decode(&e); err != nil {
			return nil, err
		}
		into := s.recs[e.Into]
		if into == nil {
			s.skipped++
			return nil, nil
		}
		out := []change{{id: e.Into, content: true, vector: e.Text != "" && e.Text != into.Text}}
		tags := into.Tags
		for _, id := range e.From {
			from := s.recs[id]
			if from == nil || id == e.Into {
				continue
			}
			tags = append(tags, from.Tags...)
			if from.Importance > into.Importance {
				into.Importance = from.Importance
			}
			into.AccessCount += from.AccessCount
			from.AccessCount = 0
			from.Status, from.SupersededBy = StatusArchived, e.Into
			from.Updated, from.Provenance.UpdatedSeq = ts, r.Seq
			out = append(out, change{id: id, content: true})
		}
		into.Tags = normTags(tags)
		if e.Text != "" {
			into.Text = e.Text
		}
		into.Updated, into.Provenance.UpdatedSeq = ts, r.Seq
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
	rec := s.recs[e.ID]
	ch := change{id: e.ID, content: true, vector: true}
	if rec == nil {
		rec = &Record{ID: e.ID, Created: ts, Status: StatusActive,
			Provenance: Provenance{Session: s.intern(src.Session), Message: src.Message, Source: s.intern(src.Source), Seq: seq}}
		if e.Created != nil {
			rec.Created = e.Created.UTC()
		}
		s.recs[e.ID] = rec
	} else {
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
	return []change{ch}
}

func (s *State) remove(rec *Record) {
	if rec.Key != "" {
		delete(s.keys, [2]string{rec.Area, rec.Key})
	}
	delete(s.recs, rec.ID)
}

// sortedIDs returns every record id in order.
func (s *State) sortedIDs() []string {
	ids := make([]string, 0, len(s.recs))
	for id := range s.recs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Hash is a digest of the whole state: SHA-256 over the records sorted by id, each
// encoded as canonical JSON (fixed field order, sorted metadata keys, UTC times).
// It depends only on the journal, not on when or where it was replayed.
func (s *State) Hash() string {
	h := sha256.New()
	for _, id := range s.sortedIDs() {
		b, err := json.Marshal(s.recs[id])
		if err != nil {
			// metadata came from JSON, so it encodes; say so loudly if not
			panic(fmt.Sprintf("memory: encoding record %s for the state hash: %v", id, err))
		}
		h.Write(b)
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
