package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/exocortex/exocortex/staging"
)

// ApplyShared applies records of the shared journal the subscription or a
// reader delivered: those the store already holds are skipped, so a record
// delivered twice is applied once. A record that does not follow the store's
// journal is refused (the caller reads the missing ones first).
func (s *Store) ApplyShared(ctx context.Context, recs []staging.Record) error {
	if s.shared == nil {
		return errors.New("memory: the store has no shared journal (memory.journal)")
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return errors.New("memory: the store is closed")
	}
	if err := s.applyReplicated(ctx, recs); err != nil {
		if errors.Is(err, errGap) {
			return fmt.Errorf("memory: record %d does not follow journal seq %d: %w", recs[0].Seq, s.journal.LastSeq(), err)
		}
		return err
	}
	return nil
}

// ReplayJournal rebuilds a store from sequence 1 of any journal (a shared
// stream) into scratch, as Replay does from a journal file: the records are
// copied to scratch/source.jsonl with their sequence numbers and timestamps,
// then replayed. A journal with a gap in its sequence numbers is an error.
func ReplayJournal(ctx context.Context, j Journal, scratch string, opts Options) (ReplayReport, error) {
	if entries, err := os.ReadDir(scratch); err == nil && len(entries) > 0 {
		return ReplayReport{}, fmt.Errorf("memory: the replay directory %s is not empty", scratch)
	}
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return ReplayReport{}, fmt.Errorf("memory: %w", err)
	}
	path := filepath.Join(scratch, "source.jsonl")
	if err := CopyJournal(ctx, j, path, nil); err != nil {
		return ReplayReport{}, err
	}
	defer os.Remove(path)
	return Replay(ctx, path, filepath.Join(scratch, "store"), opts)
}

// CopyJournal copies every record of j to a new journal file at path,
// keeping sequence numbers and timestamps; progress, if set, is called with
// the last sequence copied after each batch.
func CopyJournal(ctx context.Context, j Journal, path string, progress func(seq uint64)) error {
	l, err := staging.Open(ctx, path, staging.Options{Sync: staging.SyncOS})
	if err != nil {
		return fmt.Errorf("memory: creating %s: %w", path, err)
	}
	defer l.Close()
	if l.LastSeq() != 0 {
		return fmt.Errorf("memory: %s is not empty", path)
	}
	var batch []staging.Entry
	var want uint64
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		recs, err := l.AppendBatch(ctx, batch)
		if err != nil {
			return err
		}
		if recs[len(recs)-1].Seq != want {
			return fmt.Errorf("memory: the journal %s has a gap before record %d", j.Location(), want)
		}
		batch = batch[:0]
		if progress != nil {
			progress(want)
		}
		return nil
	}
	err = j.Read(ctx, 0, func(r staging.Record) error {
		want++
		if r.Seq != want {
			return fmt.Errorf("memory: the journal %s has a gap: record %d follows %d", j.Location(), r.Seq, want-1)
		}
		batch = append(batch, staging.Entry{Kind: r.Kind, Session: r.Session, TS: r.TS, Payload: json.RawMessage(r.Payload)})
		if len(batch) >= 1000 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return fmt.Errorf("memory: copying %s to %s: %w", j.Location(), path, err)
	}
	return l.Sync()
}

// CatchUp applies everything the shared journal holds now (a promoter that
// must decide on the latest state). A local store has nothing to catch up.
func (s *Store) CatchUp(ctx context.Context) error {
	if s.shared == nil {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return errors.New("memory: the store is closed")
	}
	return s.pullToEnd(ctx)
}

// CheckEntries validates a batch of journal entries against the current state
// as Append does, without writing it: nil, or an *InputError naming the
// entry that cannot apply.
func (s *Store) CheckEntries(entries []staging.Entry) error {
	return s.checkEntries(entries)
}
