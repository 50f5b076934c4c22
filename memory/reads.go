package memory

import (
	"context"
	"maps"
	"sort"
	"strings"
)

// Get returns a copy of the record with id, false when there is none. The
// error is a *RepairError: the state turned out damaged and could not be
// rebuilt (ctx was cancelled, see reading).
func (s *Store) Get(ctx context.Context, id string) (*Record, bool, error) {
	return s.getOne(ctx, func(st *State) *Record { return st.get(id) })
}

// GetByKey returns a copy of the record with key in area (see Get).
func (s *Store) GetByKey(ctx context.Context, area, key string) (*Record, bool, error) {
	return s.getOne(ctx, func(st *State) *Record { return st.byKey(area, key) })
}

// getOne returns a copy of the record find picks from the state.
func (s *Store) getOne(ctx context.Context, find func(*State) *Record) (*Record, bool, error) {
	var r *Record
	err := s.reading(ctx, func() error {
		s.mu.RLock()
		defer s.mu.RUnlock()
		r = find(s.state)
		if r != nil {
			r = r.clone()
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return r, r != nil, nil
}

// List returns copies of the records the filter admits, oldest first (then by id).
func (s *Store) List(ctx context.Context, f Filter) ([]*Record, error) {
	return s.Select(ctx, f, nil)
}

// Select returns copies of the records that both the filter and keep admit,
// oldest first (then by id); a nil keep admits all. keep sees the store's own
// record under its read lock: it must neither change nor keep it, nor call the
// store. Only the records kept are copied, so picking a few records out of a
// large store costs one pass over it, not a copy of it (List copies every
// record it admits: on 100k records, about 60 CPU-ms and 100k allocations).
func (s *Store) Select(ctx context.Context, f Filter, keep func(*Record) bool) ([]*Record, error) {
	return s.pick(ctx, keep, func(fn func(*Record) bool) { s.state.eachMatch(f, false, fn) })
}

// pick returns copies of the records walk yields (under the read lock) that
// keep admits, oldest first (then by id), reading again if the walk found the
// state damaged (see reading).
func (s *Store) pick(ctx context.Context, keep func(*Record) bool, walk func(fn func(*Record) bool)) ([]*Record, error) {
	var out []*Record
	err := s.reading(ctx, func() error {
		s.mu.RLock()
		defer s.mu.RUnlock()
		out = nil
		walk(func(r *Record) bool {
			if keep == nil || keep(r) {
				out = append(out, r.clone())
			}
			return true
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Census is the records a filter admits, counted per area with their tags.
type Census struct {
	Records int
	Tags    map[string]int
}

// Census counts the records f admits per area, and their tags, in one pass
// over the state without copying a record: what List followed by counting
// gives, at a fraction of its cost on a large store.
//
// The count of every active record (the zero Filter: what the memory catalog
// asks for once per session) is kept until the state changes, so a caller
// that counts ahead of time (memorytools' Warm, while the host starts up) makes
// the next call free; the result is the caller's own copy either way.
func (s *Store) Census(ctx context.Context, f Filter) (map[string]Census, error) {
	var out map[string]Census
	err := s.reading(ctx, func() error {
		out = s.census(f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// census is Census without the repair: the state may turn out damaged.
func (s *Store) census(f Filter) map[string]Census {
	s.mu.RLock()
	defer s.mu.RUnlock()
	whole := f.zero()
	if whole {
		s.kept.Lock()
		defer s.kept.Unlock()
		if !s.kept.read {
			s.readCensus()
		}
		if s.kept.byArea != nil && s.kept.seq == s.state.applied {
			return copyCensus(s.kept.byArea)
		}
	}
	out := s.countCensus(f)
	if s.state.damaged() != nil {
		return out
	}
	if whole {
		s.kept.seq, s.kept.byArea = s.state.applied, copyCensus(out)
	}
	return out
}

// zero reports whether f is the zero Filter (every active record outside the
// library).
func (f Filter) zero() bool {
	return len(f.Areas) == 0 && len(f.Tags) == 0 && f.Key == "" && len(f.Statuses) == 0 && f.From.IsZero() && f.To.IsZero() && f.Session == "" && f.Source == ""
}

func copyCensus(in map[string]Census) map[string]Census {
	out := make(map[string]Census, len(in))
	for a, c := range in {
		tags := make(map[string]int, len(c.Tags))
		for t, n := range c.Tags {
			tags[t] = n
		}
		out[a] = Census{Records: c.Records, Tags: tags}
	}
	return out
}

// countCensus is Census without the cache. s.mu is held.
func (s *Store) countCensus(f Filter) map[string]Census {
	out := map[string]Census{}
	// The records are read in place (scratch), their strings views of the
	// mapped snapshot: every string kept as a key is a copy, made the first
	// time it is seen (a map assignment stores the key it is given, so even
	// a key already present is never given as a view).
	own := map[string]string{}
	keep := func(x string) string {
		if y, ok := own[x]; ok {
			return y
		}
		y := strings.Clone(x)
		own[y] = y
		return y
	}
	s.state.eachMatch(f, true, func(r *Record) bool {
		area := keep(r.Area)
		c, ok := out[area]
		if !ok {
			c.Tags = map[string]int{}
		}
		c.Records++
		for _, t := range r.Tags {
			c.Tags[keep(t)]++
		}
		out[area] = c
		return true
	})
	return out
}

// Hash is the state hash (see State.Hash). The error is a *RepairError (see
// Get).
func (s *Store) Hash(ctx context.Context) (string, error) {
	var h string
	err := s.reading(ctx, func() error {
		s.mu.RLock()
		defer s.mu.RUnlock()
		h = s.state.Hash()
		return nil
	})
	if err != nil {
		return "", err
	}
	return h, nil
}

// Stats describes the store.
type Stats struct {
	Dir           string         `json:"dir"`
	Records       int            `json:"records"`
	ByArea        map[string]int `json:"by_area"`
	ByStatus      map[string]int `json:"by_status"`
	JournalSeq    uint64         `json:"journal_seq"`
	JournalBytes  int64          `json:"journal_bytes"`
	SnapshotSeq   uint64         `json:"snapshot_seq"` // journal sequence of the state snapshot (0: none yet)
	FulltextSeq   uint64         `json:"fulltext_seq"`
	FulltextDocs  uint64         `json:"fulltext_docs"`
	Vectors       string         `json:"vectors"` // "on", or why not
	VectorModel   string         `json:"vector_model,omitempty"`
	VectorSeq     uint64         `json:"vector_seq,omitempty"`
	VectorCount   int            `json:"vector_count,omitempty"`
	UnknownEvents map[string]int `json:"unknown_events,omitempty"`
	SkippedEvents int            `json:"skipped_events,omitempty"`
	StateHash     string         `json:"state_hash"`
	// AreaHashes are each area's share of StateHash, kept as cheaply: the
	// state hash of one namespace (GET /api/v1/state?ns=).
	AreaHashes     map[string]string `json:"area_hashes,omitempty"`
	Notices        []string          `json:"notices,omitempty"`
	VectorsLagging bool              `json:"vectors_lagging,omitempty"`
	// Embedder names the active embedder for people ("offline GloVe 100d",
	// "ollama nomic-embed-text", "none (BM25 only)"); the caller that chose it
	// fills it in (the store knows only VectorModel).
	Embedder string `json:"embedder,omitempty"`
}

// Stats counts records and reports each projection's position. The error is
// a *RepairError (see Get).
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := s.reading(ctx, func() error {
		st = Stats{Dir: s.dir, ByArea: map[string]int{}, ByStatus: map[string]int{}, UnknownEvents: map[string]int{}}
		s.mu.RLock()
		defer s.mu.RUnlock()
		st.Records = s.state.Len()
		t := s.state.kept()
		maps.Copy(st.ByArea, t.byArea)
		maps.Copy(st.ByStatus, t.byStatus)
		st.StateHash = t.sum.String()
		st.AreaHashes = t.areaHashes()
		maps.Copy(st.UnknownEvents, s.state.unknown)
		st.SkippedEvents = s.state.skipped
		return nil
	})
	if err != nil {
		return Stats{}, err
	}
	st.JournalSeq = s.journal.LastSeq()
	st.JournalBytes = s.journal.Size()
	st.SnapshotSeq = s.snapSeq.Load()
	s.syncFulltext()
	st.FulltextSeq = s.ft.AppliedSeq()
	st.FulltextDocs, _ = s.ft.Count()
	st.Vectors = s.vectorMode()
	if s.vec != nil {
		st.VectorModel = s.vec.model
		s.vec.mu.RLock()
		st.VectorSeq = s.vec.applied
		s.vec.mu.RUnlock()
		st.VectorCount = s.vec.count()
		st.VectorsLagging = s.vectorsLagging()
	}
	st.Notices = s.Notices()
	return st, nil
}

// vectorMode says whether vectors take part in recall, and if not, why.
func (s *Store) vectorMode() string {
	if s.vec == nil {
		return "off: no embedder configured, recall uses BM25 alone"
	}
	if s.vectorsLagging() {
		return "lagging: the embedder failed, recent records are found by BM25 only until the next open"
	}
	return "on"
}
