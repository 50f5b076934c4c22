package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/exocortex/exocortex/staging"
)

// ErrStillDamaged is what a RepairError wraps when the state was rebuilt from
// the journal and a read of it found it damaged again (which a state rebuilt
// from the journal, having no snapshot base, cannot be): the read gives up
// rather than repair again.
var ErrStillDamaged = errors.New("the state is still damaged after rebuilding it from the journal")

// RepairError is the error of a read that found the record state damaged (a
// record of the state snapshot it was opened from did not decode) and could
// not rebuild it from the journal: the read's context was cancelled or ran
// out (Err is context.Canceled or context.DeadlineExceeded, which errors.Is
// finds), or the journal could not be read. The read's answer would have been
// wrong (the damaged record read as missing), so there is none. Nothing is
// written by a repair that does not finish: the state stays marked damaged and
// the next read repairs it.
type RepairError struct {
	Dir    string // the store's directory
	Damage string // what was found damaged: the snapshot file and why
	Err    error  // why the state was not rebuilt
}

func (e *RepairError) Error() string {
	return fmt.Sprintf("memory %s: %s: rebuilding the state from the journal did not finish: %v (the store is unchanged; read again to repair it)", e.Dir, e.Damage, e.Err)
}

func (e *RepairError) Unwrap() error { return e.Err }

// readTries bounds the reads of one call: a read, and the read again after
// the state was rebuilt.
const readTries = 2

// reading runs read and, when the state it read turned out damaged (a record
// of the snapshot's base did not decode, so read saw it as missing), rebuilds
// the state from the journal and runs read once more; read must start afresh
// each time (reset what it collects). A repair that fails or is cancelled
// (ctx) is returned as a *RepairError, as is damage found again after a
// repair. read's own error ends the call.
func (s *Store) reading(ctx context.Context, read func() error) error {
	for try := 1; ; try++ {
		s.mu.RLock()
		st := s.state
		s.mu.RUnlock()
		if err := read(); err != nil {
			return err
		}
		d := st.damaged()
		if d == nil {
			return nil
		}
		if try == readTries {
			return &RepairError{Dir: s.dir, Damage: d.Error(), Err: ErrStillDamaged}
		}
		if err := s.repairState(ctx); err != nil {
			return err
		}
	}
}

// repairState rebuilds the record state from the journal if a record of the
// snapshot it was opened from turned out damaged (see repairLocked). A
// rebuild that fails or is cancelled (ctx) is a *RepairError; the state stays
// marked damaged and the next reader tries again. The caller holds no lock of
// the store.
func (s *Store) repairState(ctx context.Context) error {
	s.mu.RLock()
	d := s.state.damaged()
	s.mu.RUnlock()
	if d == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return &RepairError{Dir: s.dir, Damage: d.Error(), Err: err}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.repairLocked(ctx)
	return err
}

// repairEvery is how many journal events a repair replays between looks at
// its context.
const repairEvery = 256

// repairLocked is repairState for a caller that holds s.wmu (or a store not
// yet shared): a record of the snapshot's base that does not decode means the
// snapshot is damaged in a way its checks at open could not see (the file was
// taken on trust, see CheckedFile), so the state is replayed from sequence 1,
// the snapshot written again, and the records that could not be read are
// projected into the indexes again (they were read as missing). It reports
// whether the state was damaged, and why it could not be rebuilt (a
// *RepairError: ctx was cancelled, or the journal could not be read; the
// damaged state then stays as it was). The replay is one pass over the
// journal; once it is done, the state is replaced and the re-indexing of the
// few records that could not be read finishes whatever ctx says.
func (s *Store) repairLocked(ctx context.Context) (bool, error) {
	s.mu.RLock()
	old := s.state
	s.mu.RUnlock()
	d := old.damaged()
	if d == nil {
		return false, nil
	}
	st := newState()
	n := 0
	err := s.journal.Read(ctx, 0, func(r staging.Record) error {
		if n++; n%repairEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if _, err := st.apply(r); err != nil {
			s.notice(fmt.Sprintf("journal record %d (%s) could not be applied and was skipped: %v", r.Seq, r.Kind, err))
		}
		return nil
	})
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		// The damaged state stays marked: the next reader tries again.
		s.notice(fmt.Sprintf("%v; rebuilding the state from the journal failed: %v", d, err))
		return true, &RepairError{Dir: s.dir, Damage: d.Error(), Err: err}
	}
	s.mu.Lock()
	s.state = st
	s.ord.reset()
	s.mu.Unlock()
	s.notice(fmt.Sprintf("%v: rebuilt the state from the journal", d))
	s.snapSeq.Store(0)
	s.saveSnapshot()
	if lost := old.lostIDs(); len(lost) > 0 {
		slices.Sort(lost)
		lost = slices.Compact(lost)
		if s.ft != nil {
			if err := s.projectFulltext(lost, s.ft.AppliedSeq()); err != nil {
				s.notice(fmt.Sprintf("re-indexing the records the damaged snapshot hid: %v (the next open catches up)", err))
			}
		}
		if s.vec != nil && !s.vectorsLagging() {
			s.vec.mu.RLock()
			seq := s.vec.applied
			s.vec.mu.RUnlock()
			// The state is replaced: a cancelled ctx must not leave the
			// vectors lagging for the few records it re-indexes.
			if err := s.projectVectors(context.WithoutCancel(ctx), lost, seq); err != nil {
				s.vectorFailure(err)
			}
		}
	}
	return true, nil
}
