package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/exocortex/exocortex/staging"
)

// Batch processes (the sleep consolidation, package sleep) read the whole store,
// decide, and write many events at once. This file gives them what the
// record-at-a-time API does not: a batch of arbitrary events in one journal
// write, the journal itself, every record in a fixed order, and the stored
// vectors.

// Append writes entries to the journal with one write and applies them to the
// state and the projections, exactly as the store's own writes do. Entries of
// memory kinds (KindUpsert, KindArchive, ...) are checked first against the
// state and against the earlier entries of the batch: an upsert needs an id, a
// valid area and a text, and may not take a key another record holds; an archive,
// restore, delete or merge must name records that exist. If one fails nothing is
// written and the *InputError names it by position. Entries of other kinds (a
// batch process's own checkpoints, say "sleep.plan.v1") are journaled as they are
// and ignored by the state; History does not list them.
func (s *Store) Append(ctx context.Context, entries []staging.Entry) ([]staging.Record, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return nil, errors.New("memory: the store is closed")
	}
	err := s.checkEntries(entries)
	if damaged, rerr := s.repairLocked(ctx); rerr != nil {
		// The entries were checked on a state that reads records as missing.
		return nil, rerr
	} else if damaged {
		err = s.checkEntries(entries)
	}
	if err != nil {
		return nil, err
	}
	return s.commit(ctx, entries)
}

// checkEntries validates a batch for Append. s.wmu is held.
func (s *Store) checkEntries(entries []staging.Entry) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return checkEntries(s.state, entries)
}

// checkEntries validates a batch against st.
func checkEntries(st *State, entries []staging.Entry) error {
	created := map[string]bool{}
	deleted := map[string]bool{}
	keys := map[[2]string]string{}
	exists := func(id string) bool {
		if deleted[id] {
			return false
		}
		return created[id] || st.get(id) != nil
	}
	for i, e := range entries {
		if e.Kind == "" {
			return &InputError{Index: i, Err: errors.New("the entry has no kind")}
		}
		if !isMemoryKind(e.Kind) {
			continue
		}
		b, err := encodeEntryPayload(e.Payload)
		if err != nil {
			return &InputError{Index: i, Err: fmt.Errorf("%s: encoding the payload: %w", e.Kind, err)}
		}
		rec := staging.Record{Seq: uint64(i + 1), Kind: e.Kind, Payload: b}
		fail := func(format string, args ...any) error {
			return &InputError{Index: i, Err: fmt.Errorf(e.Kind+": "+format, args...)}
		}
		switch e.Kind {
		case KindUpsert:
			var u UpsertEvent
			if err := rec.Decode(&u); err != nil {
				return fail("%v", err)
			}
			switch {
			case u.ID == "":
				return fail("the record id is empty")
			case ValidArea(u.Area) != nil:
				return fail("%v", ValidArea(u.Area))
			case strings.TrimSpace(u.Text) == "":
				return fail("record %s: the text is empty", u.ID)
			case u.Status != "" && u.Status != StatusActive && u.Status != StatusArchived:
				return fail("record %s: status %q is not active or archived", u.ID, u.Status)
			}
			if u.Key != "" {
				k := [2]string{u.Area, u.Key}
				holder, ok := keys[k]
				if !ok {
					if r := st.byKey(u.Area, u.Key); r != nil && !deleted[r.ID] {
						holder = r.ID
					}
				}
				if holder != "" && holder != u.ID {
					return fail("record %s: key %q in area %s belongs to record %s", u.ID, u.Key, u.Area, holder)
				}
				keys[k] = u.ID
			}
			created[u.ID] = true
			delete(deleted, u.ID)
		case KindArchive, KindRestore, KindDelete:
			var a ArchiveEvent
			if err := rec.Decode(&a); err != nil {
				return fail("%v", err)
			}
			if !exists(a.ID) {
				return fail("record %s: %v", a.ID, ErrNotFound)
			}
			if e.Kind == KindDelete {
				deleted[a.ID] = true
				delete(created, a.ID)
			}
		case KindMerge:
			var m MergeEvent
			if err := rec.Decode(&m); err != nil {
				return fail("%v", err)
			}
			for _, id := range append([]string{m.Into}, m.From...) {
				if !exists(id) {
					return fail("merging into %s: record %s: %v", m.Into, id, ErrNotFound)
				}
			}
		case KindAccess:
			var a AccessEvent
			if err := rec.Decode(&a); err != nil {
				return fail("%v", err)
			}
		default:
			return fail("this build does not write memory events of this kind")
		}
	}
	return nil
}

// encodeEntryPayload encodes a payload the way the journal will.
func encodeEntryPayload(p any) ([]byte, error) {
	if p == nil {
		return []byte("{}"), nil
	}
	if raw, ok := p.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(p)
}

// ReadJournal calls fn for every journal record with a sequence number above
// since, in order, up to the end of the journal as it was when the read started.
// Records of every kind are passed, memory events or not.
func (s *Store) ReadJournal(ctx context.Context, since uint64, fn func(staging.Record) error) error {
	if err := s.journal.Read(ctx, since, fn); err != nil {
		return fmt.Errorf("memory: reading the journal of %s: %w", s.dir, err)
	}
	return nil
}

// JournalSeq is the sequence number of the last journal record.
func (s *Store) JournalSeq() uint64 { return s.journal.LastSeq() }

// Records returns copies of every record, of every area and status, sorted
// by id. The error is a *RepairError (see Get).
func (s *Store) Records(ctx context.Context) ([]*Record, error) {
	var out []*Record
	err := s.reading(ctx, func() error {
		s.mu.RLock()
		defer s.mu.RUnlock()
		out = make([]*Record, 0, s.state.Len())
		s.state.each(func(r *Record) bool {
			out = append(out, r.clone())
			return true
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Vector returns the vector the index holds for the record id (a copy), and false
// when the store has no embedder, the record does not exist or its vector is not
// (yet) in the index.
//
// The error is a *RepairError (see Get).
func (s *Store) Vector(ctx context.Context, id string) ([]float32, bool, error) {
	if s.vec == nil {
		return nil, false, nil
	}
	var area string
	var found bool
	err := s.reading(ctx, func() error {
		s.mu.RLock()
		defer s.mu.RUnlock()
		r := s.state.get(id)
		if found = r != nil; found {
			area = r.Area
		}
		return nil
	})
	if err != nil || !found {
		return nil, false, err
	}
	v, ok := s.vec.lookup(id, area)
	return v, ok, nil
}

// Embedder returns the store's embedder, nil when it runs on BM25 alone.
func (s *Store) Embedder() Embedder { return s.opts.Embedder }
