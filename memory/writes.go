package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/exocortex/exocortex/memory/fulltext"
	"github.com/exocortex/exocortex/staging"
)

// commit appends entries to the journal, applies them to the state and the
// projections, and returns the journal records. Once the journal has them the
// change is durable: a projection failure after that is reported and repaired on
// the next Open, never undone.
func (s *Store) commit(ctx context.Context, entries []staging.Entry) ([]staging.Record, error) {
	// s.wmu is held by the caller.
	if s.shared != nil {
		return s.commitShared(ctx, entries)
	}
	recs, err := s.journal.AppendBatch(ctx, entries)
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	return recs, s.applyCommitted(ctx, recs)
}

// applyCommitted applies records just written to the store's journal to the
// state and the projections. s.wmu is held.
func (s *Store) applyCommitted(ctx context.Context, recs []staging.Record) error {
	ftSet, vecSet := map[string]bool{}, map[string]bool{}
	var ftIDs, vecIDs []string
	s.mu.Lock()
	for _, r := range recs {
		counted := s.censusTrack(r)
		chs, err := s.state.apply(r)
		if counted != nil {
			counted(chs)
		}
		if err != nil {
			s.notice(fmt.Sprintf("journal record %d (%s) could not be applied: %v", r.Seq, r.Kind, err))
		}
		for _, c := range chs {
			if rec := s.state.get(c.id); rec != nil && rec.Provenance.Seq == r.Seq {
				s.ord.created(rec)
			} else if rec == nil && c.deleted {
				s.ord.deleted(c.id)
			}
			if c.content && !ftSet[c.id] {
				ftSet[c.id] = true
				ftIDs = append(ftIDs, c.id)
			}
			if (c.vector || c.deleted) && !vecSet[c.id] {
				vecSet[c.id] = true
				vecIDs = append(vecIDs, c.id)
			}
		}
	}
	s.mu.Unlock()
	if damaged, _ := s.repairLocked(ctx); damaged {
		// The batch was applied to a damaged state; the rebuilt one has it.
		// Every record its events name is projected again.
		for _, r := range recs {
			for _, id := range eventRefs(r.Payload) {
				if !ftSet[id] {
					ftSet[id] = true
					ftIDs = append(ftIDs, id)
				}
				if !vecSet[id] {
					vecSet[id] = true
					vecIDs = append(vecIDs, id)
				}
			}
		}
	}
	last := recs[len(recs)-1].Seq
	if last-s.snapSeq.Load() >= snapshotEvery {
		defer s.saveSnapshot()
	}
	// The two indexes are independent: embedding and the HNSW insert run while
	// Bleve indexes the batch.
	done := make(chan struct{})
	go func() {
		defer close(done)
		if s.vec != nil && len(vecIDs) > 0 && !s.vectorsLagging() {
			if err := s.projectVectors(ctx, vecIDs, last); err != nil {
				s.vectorFailure(err)
			}
		}
	}()
	var ftErr error
	if len(ftIDs) > 0 {
		ftErr = s.deferFulltext(ftIDs, last)
	}
	<-done
	if ftErr != nil {
		return fmt.Errorf("memory: saved to the journal (seq %d), but the full-text index failed (it catches up on the next open): %w", last, ftErr)
	}
	return nil
}

// NewID makes a new record id, as the store does for a record saved without
// one: a client that must retry a save names its new records first, so the
// retry updates them instead of adding them twice.
func NewID() string { return newID() }

// Input is a record to save. Area defaults to main. With an empty ID, a record
// with the same key in the same area is updated, otherwise a new id is made.
type Input struct {
	ID         string         `json:"id,omitempty"`
	Area       string         `json:"area,omitempty"`
	Text       string         `json:"text"`
	Key        string         `json:"key,omitempty"`
	Tags       []string       `json:"tags,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Importance *float64       `json:"importance,omitempty"`
	Created    *time.Time     `json:"created,omitempty"`
	Status     Status         `json:"status,omitempty"`
}

// Put saves one record and returns it as stored.
func (s *Store) Put(ctx context.Context, in Input, src Source) (*Record, error) {
	recs, err := s.PutBatch(ctx, []Input{in}, src)
	if err != nil {
		return nil, err
	}
	return recs[0], nil
}

// PutBatch saves records with one journal write. The batch is checked first: if
// any input is invalid nothing is written and the error names it by position.
func (s *Store) PutBatch(ctx context.Context, ins []Input, src Source) ([]*Record, error) {
	if len(ins) == 0 {
		return nil, nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return nil, errors.New("memory: the store is closed")
	}
	entries, ids, err := s.upsertEntries(ins, src)
	if damaged, rerr := s.repairLocked(ctx); rerr != nil {
		// The entries were planned on a state that reads records as missing.
		return nil, rerr
	} else if damaged {
		entries, ids, err = s.upsertEntries(ins, src)
	}
	if err != nil {
		return nil, err
	}
	recs, err := s.commit(ctx, entries)
	if err != nil {
		return nil, err
	}
	if s.shared != nil {
		// A promoter may have put an entry on another record (the one that
		// holds its key): the records stored say which.
		for i, r := range recs {
			var u struct {
				ID string `json:"id"`
			}
			if i < len(ids) && r.Kind == KindUpsert && json.Unmarshal(r.Payload, &u) == nil && u.ID != "" {
				ids[i] = u.ID
			}
		}
	}
	for i, in := range ins {
		if _, cut := fulltext.Bound(in.Text); cut {
			s.notice(fmt.Sprintf("record %s is %d bytes or has a word over %d bytes: its whole text is stored, but full-text search indexes a bounded part (the first %d bytes, long words cut to %d bytes)",
				ids[i], len(in.Text), fulltext.MaxTokenBytes, fulltext.MaxIndexedBytes, fulltext.MaxTokenBytes))
		}
	}
	out := make([]*Record, len(ids))
	s.mu.RLock()
	for i, id := range ids {
		if r := s.state.get(id); r != nil {
			out[i] = r.clone()
		}
	}
	s.mu.RUnlock()
	return out, nil
}

// InputError says which input of a batch is invalid; nothing of the batch was
// written.
type InputError struct {
	Index int // 0-based position in the batch
	Err   error
}

func (e *InputError) Error() string { return fmt.Sprintf("memory: record %d: %v", e.Index+1, e.Err) }
func (e *InputError) Unwrap() error { return e.Err }

// upsertEntries validates inputs and turns them into journal entries. s.wmu is held.
func (s *Store) upsertEntries(ins []Input, src Source) ([]staging.Entry, []string, error) {
	entries := make([]staging.Entry, len(ins))
	ids := make([]string, len(ins))
	batchKeys := map[[2]string]string{}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i, in := range ins {
		if in.Area == "" {
			in.Area = AreaMain
		}
		if err := ValidArea(in.Area); err != nil {
			return nil, nil, &InputError{Index: i, Err: err}
		}
		if strings.TrimSpace(in.Text) == "" {
			return nil, nil, &InputError{Index: i, Err: errors.New("the text is empty")}
		}
		if in.Status != "" && in.Status != StatusActive && in.Status != StatusArchived {
			return nil, nil, &InputError{Index: i, Err: fmt.Errorf("status %q is not active or archived", in.Status)}
		}
		in.Key = strings.TrimSpace(in.Key)
		if in.Key != "" {
			k := [2]string{in.Area, in.Key}
			holder := batchKeys[k]
			if holder == "" {
				if r := s.state.byKey(in.Area, in.Key); r != nil {
					holder = r.ID
				}
			}
			switch {
			case in.ID == "" && holder != "":
				in.ID = holder
			case in.ID != "" && holder != "" && holder != in.ID:
				return nil, nil, &InputError{Index: i, Err: fmt.Errorf("key %q in area %s belongs to record %s; use that id or another key", in.Key, in.Area, holder)}
			}
		}
		if in.ID == "" {
			in.ID = s.nextID()
		}
		if in.Key != "" {
			batchKeys[[2]string{in.Area, in.Key}] = in.ID
		}
		ids[i] = in.ID
		entries[i] = staging.Entry{Kind: KindUpsert, Session: src.Session, Payload: UpsertEvent{
			ID: in.ID, Area: in.Area, Text: in.Text, Key: in.Key, Tags: normTags(in.Tags), Metadata: in.Metadata,
			Importance: in.Importance, Created: in.Created, Status: in.Status, Source: src,
		}}
	}
	return entries, ids, nil
}

// ErrNotFound is wrapped by errors about a record id that does not exist.
var ErrNotFound = errors.New("no such record")

// event writes one event about an existing record.
func (s *Store) event(ctx context.Context, id, kind string, payload any, src Source, check func(*Record) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return errors.New("memory: the store is closed")
	}
	s.mu.RLock()
	r := s.state.get(id)
	if check != nil && r != nil {
		check(r) // reads what it checks, so damage found there is repaired below
	}
	damaged := s.state.damaged() != nil
	s.mu.RUnlock()
	if damaged {
		// A record read as missing from a damaged state may well exist.
		if _, err := s.repairLocked(ctx); err != nil {
			return err
		}
	}
	s.mu.RLock()
	r = s.state.get(id)
	var err error
	if r == nil {
		err = fmt.Errorf("memory: record %s: %w (see `exocortex memory why %s` for its history)", id, ErrNotFound, id)
	} else if check != nil {
		err = check(r)
	}
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	_, err = s.commit(ctx, []staging.Entry{{Kind: kind, Session: src.Session, Payload: payload}})
	return err
}

// Archive takes a record out of recall; supersededBy names the record that
// replaces it, if any.
func (s *Store) Archive(ctx context.Context, id, reason, supersededBy string, src Source) error {
	return s.event(ctx, id, KindArchive, ArchiveEvent{ID: id, Reason: reason, SupersededBy: supersededBy, Source: src}, src, nil)
}

// Restore makes an archived record active again.
func (s *Store) Restore(ctx context.Context, id, reason string, src Source) error {
	return s.event(ctx, id, KindRestore, RestoreEvent{ID: id, Reason: reason, Source: src}, src, func(r *Record) error {
		if r.Status == StatusActive {
			return fmt.Errorf("memory: record %s is already active", id)
		}
		return nil
	})
}

// Delete removes a record. Its history stays in the journal.
func (s *Store) Delete(ctx context.Context, id, reason string, src Source) error {
	return s.event(ctx, id, KindDelete, DeleteEvent{ID: id, Reason: reason, Source: src}, src, nil)
}

// Merge folds the From records into Into (see MergeEvent).
func (s *Store) Merge(ctx context.Context, e MergeEvent) error {
	return s.event(ctx, e.Into, KindMerge, e, e.Source, func(*Record) error {
		for _, id := range e.From {
			if s.state.get(id) == nil {
				return fmt.Errorf("memory: merging into %s: record %s: %w", e.Into, id, ErrNotFound)
			}
		}
		return nil
	})
}

// RecordAccess counts a recall of the records.
func (s *Store) RecordAccess(ctx context.Context, ids []string, src Source) error {
	if len(ids) == 0 {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return errors.New("memory: the store is closed")
	}
	_, err := s.commit(ctx, []staging.Entry{{Kind: KindAccess, Session: src.Session, Payload: AccessEvent{IDs: ids, Source: src}}})
	return err
}
