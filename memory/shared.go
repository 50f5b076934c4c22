package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/exocortex/exocortex/staging"
)

// A store opened with Options.Journal is a replica of a shared journal (a
// JetStream stream many hosts write): its own journal file, snapshot and
// indexes are this host's projection of that journal. The file holds the
// shared records one for one, under the same sequence numbers, so
// everything the store does with it (Open's catch-up from the snapshot plus
// the tail, Replay, replay --verify, History) works unchanged, and the state
// hash of a host equals the hash of the stream replayed from sequence 1.
//
// A write goes to the shared journal first, each entry under a message id
// (a retry is de-duplicated there); it is acknowledged once the journal has
// stored it and this host has applied everything up to it, so a search on
// the writing host sees it at once. A subscription feeds the records other
// hosts write; its position is the file's last sequence, durable on disk, so a
// host that was offline catches up from there on reconnect. While the shared
// journal is unreachable, searches keep answering from the local projection
// and writes fail with ErrJournalUnavailable: nothing is queued, nothing is
// lost, the caller retries.

// sharing is a store's link to its shared journal.
type sharing struct {
	j      Journal
	cancel context.CancelFunc
	done   chan struct{}
	wake   chan struct{} // a record arrived, or the subscription should be renewed

	mu      sync.Mutex
	pending []staging.Record // delivered by the subscription, not yet applied
	offline error            // the last failure to reach the journal, nil when reachable
	lastErr time.Time
}

// followPoll is how often the follower asks the shared journal for its last
// sequence when no record arrives (a subscription that went quiet after a
// reconnect is caught up this way).
const followPoll = 2 * time.Second

// pendingLimit bounds the records the subscription buffers for the follower;
// beyond it they are dropped and read again from the journal (a gap).
const pendingLimit = 10_000

// openShared links the open store to j: it checks that the store's journal
// file is a prefix of j, catches up, and starts following. An unreachable
// journal is a notice, not an error: the store answers from what it holds
// and catches up once the journal answers.
func (s *Store) openShared(ctx context.Context, j Journal) error {
	sh := &sharing{j: j, done: make(chan struct{}), wake: make(chan struct{}, 1)}
	s.shared = sh
	if err := s.checkPrefix(ctx); err != nil {
		s.shared = nil
		return err
	}
	s.wmu.Lock()
	err := s.pullLocked(ctx, 0)
	s.wmu.Unlock()
	if err != nil {
		if !errors.Is(err, ErrJournalUnavailable) {
			s.shared = nil
			return err
		}
		s.notice(fmt.Sprintf("%v: searches answer from this host's copy (journal seq %d) and writes are refused until it is back", err, s.journal.LastSeq()))
	}
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	sh.cancel = cancel
	go s.follow(fctx)
	return nil
}

// checkPrefix refuses a store whose journal file holds a record the shared
// journal does not hold at the same sequence (a directory written on its
// own): following the stream would give it another history.
func (s *Store) checkPrefix(ctx context.Context) error {
	last := s.journal.LastSeq()
	if last == 0 {
		return nil
	}
	local, err := recordAt(ctx, s.journal.Read, last)
	if err != nil {
		return fmt.Errorf("memory: reading record %d of %s: %w", last, s.journal.Path(), err)
	}
	remote, err := recordAt(ctx, s.shared.j.Read, last)
	if errors.Is(err, ErrJournalUnavailable) {
		s.notice(fmt.Sprintf("%v: the journal %s could not be checked against it", err, s.journal.Path()))
		return nil
	}
	if err != nil {
		return fmt.Errorf("memory: reading record %d of the shared journal %s: %w", last, s.shared.j.Location(), err)
	}
	if remote == nil || !sameRecord(*local, *remote) {
		return fmt.Errorf("memory: the journal %s holds %d records that are not the first %d of the shared journal %s: "+
			"this directory was written on its own; copy it to the stream with `exocortex memory migrate --to %s` (an empty stream), or move it aside to have this host rebuilt from the stream",
			s.journal.Path(), last, last, s.shared.j.Location(), s.shared.j.Location())
	}
	return nil
}

// recordAt reads the record with sequence seq through read (nil: none).
func recordAt(ctx context.Context, read func(context.Context, uint64, func(staging.Record) error) error, seq uint64) (*staging.Record, error) {
	var out *staging.Record
	err := read(ctx, seq-1, func(r staging.Record) error {
		if r.Seq == seq {
			out = &r
		}
		return errStopRead
	})
	if err != nil && !errors.Is(err, errStopRead) {
		return nil, err
	}
	return out, nil
}

// sameRecord compares what the state hash depends on.
func sameRecord(a, b staging.Record) bool {
	return a.Seq == b.Seq && a.Kind == b.Kind && a.Session == b.Session && a.TS.Equal(b.TS) && string(a.Payload) == string(b.Payload)
}

// commitShared writes entries to the shared journal and applies everything up
// to them. s.wmu is held.
func (s *Store) commitShared(ctx context.Context, entries []staging.Entry) ([]staging.Record, error) {
	now := time.Now
	if s.opts.Now != nil {
		now = s.opts.Now
	}
	stamped := make([]staging.Entry, len(entries))
	ids := make([]string, len(entries))
	ts := now().UTC()
	for i, e := range entries {
		if e.TS.IsZero() {
			e.TS = ts
		}
		p, err := staging.EncodePayload(e.Payload)
		if err != nil {
			return nil, fmt.Errorf("memory: encoding a %s event: %w", e.Kind, err)
		}
		e.Payload = json.RawMessage(p)
		stamped[i] = e
		ids[i] = "w-" + s.nextID()
	}
	recs, err := s.shared.j.Append(ctx, stamped, ids)
	if err != nil {
		s.shared.setOffline(err)
		return nil, fmt.Errorf("memory: the write was not taken (nothing of it is stored; retry once the journal is back; searches answer from this host's copy meanwhile): %w", err)
	}
	s.shared.setOffline(nil)
	var upto uint64
	for _, r := range recs {
		upto = max(upto, r.Seq)
	}
	if err := s.pullLocked(ctx, upto); err != nil {
		return recs, fmt.Errorf("memory: stored in the shared journal (seq %d) but not yet applied on this host (it catches up): %w", upto, err)
	}
	return recs, nil
}

// pullLocked applies the shared journal's records above the store's own last
// sequence: up to upto, or to the journal's end when upto is 0, using what
// the subscription delivered and reading the rest. s.wmu is held.
func (s *Store) pullLocked(ctx context.Context, upto uint64) error {
	if s.closed {
		return errors.New("memory: the store is closed")
	}
	if upto != 0 {
		// The subscription usually delivers a write a moment after its
		// acknowledgement: waiting briefly for it saves reading it back.
		s.shared.awaitPending(upto, pendingWait)
	}
	if err := s.applyPending(ctx); err != nil && !errors.Is(err, errGap) {
		return err
	}
	if upto != 0 && s.journal.LastSeq() >= upto {
		return nil
	}
	var batch []staging.Record
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := s.applyReplicated(ctx, batch)
		batch = batch[:0]
		return err
	}
	err := s.shared.j.Read(ctx, s.journal.LastSeq(), func(r staging.Record) error {
		batch = append(batch, r)
		if len(batch) >= s.opts.BatchSize {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		if errors.Is(err, ErrJournalUnavailable) {
			s.shared.setOffline(err)
		}
		return fmt.Errorf("memory: catching up with the shared journal %s: %w", s.shared.j.Location(), err)
	}
	s.shared.setOffline(nil)
	return nil
}

// errGap says the subscription skipped records: they are read from the journal.
var errGap = errors.New("the subscription skipped records")

// applyPending applies the records the subscription delivered that follow
// the store's journal. s.wmu is held.
func (s *Store) applyPending(ctx context.Context) error {
	s.shared.mu.Lock()
	recs := s.shared.pending
	s.shared.pending = nil
	s.shared.mu.Unlock()
	for len(recs) > 0 {
		n := min(len(recs), s.opts.BatchSize)
		if err := s.applyReplicated(ctx, recs[:n]); err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

// applyReplicated appends the shared records that follow the store's own
// journal to it, with their timestamps, and applies them. Records the store
// already holds are skipped (a re-delivery); a record that does not follow is
// errGap. s.wmu is held.
func (s *Store) applyReplicated(ctx context.Context, recs []staging.Record) error {
	last := s.journal.LastSeq()
	var entries []staging.Entry
	var want []staging.Record
	for _, r := range recs {
		if r.Seq <= last {
			continue
		}
		if r.Seq != last+1 {
			if len(entries) == 0 {
				return errGap
			}
			break
		}
		last = r.Seq
		entries = append(entries, staging.Entry{Kind: r.Kind, Session: r.Session, TS: r.TS, Payload: json.RawMessage(r.Payload)})
		want = append(want, r)
	}
	if len(entries) == 0 {
		return nil
	}
	got, err := s.journal.AppendBatch(ctx, entries)
	if err != nil {
		return fmt.Errorf("memory: copying shared records %d-%d to %s: %w", want[0].Seq, want[len(want)-1].Seq, s.journal.Path(), err)
	}
	for i := range got {
		if got[i].Seq != want[i].Seq {
			return fmt.Errorf("memory: %s took shared record %d as %d: the copy no longer follows the stream; move the directory aside to rebuild it", s.journal.Path(), want[i].Seq, got[i].Seq)
		}
	}
	return s.applyCommitted(ctx, got)
}

// follow applies what other hosts write, until ctx ends.
func (s *Store) follow(ctx context.Context) {
	sh := s.shared
	defer close(sh.done)
	var stop func()
	subscribe := func() {
		if stop != nil {
			stop()
			stop = nil
		}
		st, err := sh.j.Subscribe(ctx, s.JournalSeq(), func(r staging.Record) {
			sh.mu.Lock()
			if len(sh.pending) < pendingLimit {
				sh.pending = append(sh.pending, r)
			}
			sh.mu.Unlock()
			select {
			case sh.wake <- struct{}{}:
			default:
			}
		})
		if err != nil {
			sh.setOffline(fmt.Errorf("%w: subscribing: %w", ErrJournalUnavailable, err))
			return
		}
		stop = st
	}
	subscribe()
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	tick := time.NewTicker(followPoll)
	defer tick.Stop()
	for {
		polled := false
		select {
		case <-ctx.Done():
			return
		case <-sh.wake:
		case <-tick.C:
			polled = true
		}
		if stop == nil {
			subscribe()
		}
		if !polled {
			time.Sleep(gather)
		}
		s.wmu.Lock()
		var err error
		if s.closed {
			s.wmu.Unlock()
			return
		}
		err = s.applyPending(ctx)
		if errors.Is(err, errGap) || polled {
			err = s.pullToEnd(ctx)
		}
		s.wmu.Unlock()
		if err != nil && ctx.Err() == nil {
			s.log.Debug("memory: following the shared journal", "journal", sh.j.Location(), "err", err)
		}
	}
}

// pullToEnd catches up when the journal is ahead of the store. s.wmu is held.
func (s *Store) pullToEnd(ctx context.Context) error {
	last, err := s.shared.j.LastSeq(ctx)
	if err != nil {
		s.shared.setOffline(err)
		return err
	}
	s.shared.setOffline(nil)
	if last <= s.journal.LastSeq() {
		return nil
	}
	return s.pullLocked(ctx, last)
}

// pendingWait bounds how long a write waits for the subscription to deliver
// its own records before reading them from the journal.
const pendingWait = 50 * time.Millisecond

// gather is how long the follower lets records accumulate after the first
// arrives, so that a burst is applied (journal append, index batch) at once.
const gather = 2 * time.Millisecond

// awaitPending waits up to d for the subscription to have delivered seq.
func (sh *sharing) awaitPending(seq uint64, d time.Duration) {
	deadline := time.Now().Add(d)
	for {
		sh.mu.Lock()
		n := len(sh.pending)
		have := n > 0 && sh.pending[n-1].Seq >= seq
		sh.mu.Unlock()
		if have || time.Now().After(deadline) {
			return
		}
		time.Sleep(500 * time.Microsecond)
	}
}

func (sh *sharing) setOffline(err error) {
	if err != nil && !errors.Is(err, ErrJournalUnavailable) {
		return
	}
	sh.mu.Lock()
	sh.offline = err
	if err != nil {
		sh.lastErr = time.Now()
	}
	sh.mu.Unlock()
}

// stopFollowing ends the follower (Close, before it takes s.wmu).
func (s *Store) stopFollowing() {
	if sh := s.shared; sh != nil && sh.cancel != nil {
		sh.cancel()
		<-sh.done
		sh.cancel = nil
	}
}

// closeShared closes the shared journal. s.wmu is held.
func (s *Store) closeShared() error {
	if s.shared == nil {
		return nil
	}
	return s.shared.j.Close()
}

// SharedStatus is a replica's view of its shared journal.
type SharedStatus struct {
	// Journal is the shared journal's location (nats://host:4222 stream NAME).
	Journal string `json:"journal"`
	// StreamSeq is the shared journal's last sequence (when reachable).
	StreamSeq uint64 `json:"stream_seq,omitempty"`
	// Applied is this host's last applied sequence.
	Applied uint64 `json:"applied"`
	// Lag is StreamSeq - Applied.
	Lag uint64 `json:"lag"`
	// Offline says why the journal is unreachable ("" when it answers).
	Offline string `json:"offline,omitempty"`
	// Promoter names the active promoter, for a journal that has one
	// (PromoterReporter); "" otherwise.
	Promoter string `json:"promoter,omitempty"`
}

// PromoterReporter is a shared journal whose writes pass through a promoter:
// it names the one active now ("" if none is).
type PromoterReporter interface {
	Promoter(ctx context.Context) (string, error)
}

// Shared reports the store's shared journal, false for a local store.
func (s *Store) Shared(ctx context.Context) (SharedStatus, bool) {
	sh := s.shared
	if sh == nil {
		return SharedStatus{}, false
	}
	st := SharedStatus{Journal: sh.j.Location(), Applied: s.journal.LastSeq()}
	last, err := sh.j.LastSeq(ctx)
	if err != nil {
		st.Offline = err.Error()
		return st, true
	}
	st.StreamSeq = last
	if pr, ok := sh.j.(PromoterReporter); ok {
		if who, err := pr.Promoter(ctx); err == nil {
			st.Promoter = who
		}
	}
	if last > st.Applied {
		st.Lag = last - st.Applied
	}
	return st, true
}

// WaitApplied waits until the store has applied the shared journal up to seq
// (a reader that must see another host's write), or ctx ends.
func (s *Store) WaitApplied(ctx context.Context, seq uint64) error {
	for s.journal.LastSeq() < seq {
		select {
		case <-ctx.Done():
			return fmt.Errorf("memory: waiting for journal seq %d (at %d): %w", seq, s.journal.LastSeq(), ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}
