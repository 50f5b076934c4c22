package natsjournal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/staging"
)

// A promoter's replica is the journal's records in a journal file of its own
// (Dir/journal.jsonl, the file a store keeps there too) and nothing else: the
// promoter decides on a memory.Mirror, never searches, so it keeps no Bleve
// or HNSW index. A full store as the replica indexed every delta in the
// background on the promoter's cores and had the server deliver every delta
// back to it: the promoter drained its backlog at a quarter of the rate it
// reaches without (docs/PERFORMANCE.md).
//
// The file is written by one goroutine, off the promoter's hot path: the
// active promoter hands it the records its mirror applies (its own deltas,
// and the tails it reads from the stream); a standby copies the stream's
// tail into it every second, so that taking the lease reads the history from
// the local file and only the rest from the stream. Losing records on the
// way (a full queue, a crash before the OS wrote them) costs nothing but a
// longer read from the stream: the file is a cache of the stream, checked
// record by record for sequence.
type replica struct {
	log  *staging.Log
	j    *Journal
	lg   *slog.Logger
	ch   chan []staging.Record
	stop context.CancelFunc
	done chan struct{}
	// following is set while this promoter does not hold the lease: the
	// writer copies the stream's tail on each tick.
	following atomic.Bool
}

// replicaQueue bounds the batches waiting for the replica's writer; past it
// the active promoter drops them (the writer reads them from the stream).
const replicaQueue = 64

// replicaTick is how often a standby's replica copies the stream's tail.
const replicaTick = time.Second

// openReplica opens (creating) the replica's journal file in dir and starts
// its writer.
func openReplica(ctx context.Context, dir string, j *Journal, lg *slog.Logger) (*replica, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("natsjournal: the promoter's replica %s: %w", dir, err)
	}
	l, err := staging.Open(ctx, filepath.Join(dir, memory.JournalFile), staging.Options{Sync: staging.SyncOS, Logger: lg})
	if err != nil {
		return nil, fmt.Errorf("natsjournal: the promoter's replica %s: %w", dir, err)
	}
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	r := &replica{log: l, j: j, lg: lg, ch: make(chan []staging.Record, replicaQueue), stop: stop,
		done: make(chan struct{})}
	r.following.Store(true)
	go r.write(wctx)
	return r, nil
}

// close stops the writer and closes the file.
func (r *replica) close() error {
	r.stop()
	<-r.done
	return r.log.Close()
}

// setFollowing says whether the writer copies the stream's tail (standby)
// or waits for the active promoter's records.
func (r *replica) setFollowing(on bool) { r.following.Store(on) }

// offer hands the writer records the mirror applied, without waiting: a
// batch the queue has no room for is dropped (read from the stream later).
func (r *replica) offer(recs []staging.Record) {
	if len(recs) == 0 {
		return
	}
	select {
	case r.ch <- recs:
	default:
	}
}

// seq is the last sequence the file holds.
func (r *replica) seq() uint64 { return r.log.LastSeq() }

// read delivers the file's records above since.
func (r *replica) read(ctx context.Context, since uint64, fn func(staging.Record) error) error {
	return r.log.Read(ctx, since, fn)
}

func (r *replica) write(ctx context.Context) {
	defer close(r.done)
	tick := time.NewTicker(replicaTick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case recs := <-r.ch:
			if err := r.appendRecs(ctx, recs); err != nil && ctx.Err() == nil {
				r.lg.Debug("memory promoter: its replica file", "err", err)
			}
		case <-tick.C:
			if !r.following.Load() {
				continue
			}
			if err := r.copyTail(ctx); err != nil && ctx.Err() == nil {
				r.lg.Debug("memory promoter: copying the journal to its replica", "err", err)
			}
		}
	}
}

// appendRecs appends the records that follow the file's last one, in
// order; one already held is passed over (a duplicate's acknowledgement
// names an earlier sequence), a gap before one is filled from the stream.
func (r *replica) appendRecs(ctx context.Context, recs []staging.Record) error {
	var run []staging.Record
	next := r.log.LastSeq() + 1
	for _, rec := range recs {
		switch {
		case rec.Seq < next:
			continue
		case rec.Seq > next:
			if err := r.appendContiguous(ctx, run); err != nil {
				return err
			}
			run = run[:0]
			if err := r.copyUpTo(ctx, rec.Seq-1); err != nil {
				return err
			}
			if next = r.log.LastSeq() + 1; rec.Seq != next {
				return fmt.Errorf("natsjournal: the replica %s holds up to %d: the stream did not give record %d", r.log.Path(), next-1, rec.Seq-1)
			}
		}
		run = append(run, rec)
		next++
	}
	return r.appendContiguous(ctx, run)
}

// appendContiguous appends recs, which must follow the file's last record.
func (r *replica) appendContiguous(ctx context.Context, recs []staging.Record) error {
	if len(recs) == 0 {
		return nil
	}
	want := r.log.LastSeq() + 1
	entries := make([]staging.Entry, len(recs))
	for i, rec := range recs {
		if rec.Seq != want+uint64(i) {
			return fmt.Errorf("natsjournal: the replica %s holds up to %d: record %d does not follow", r.log.Path(), want+uint64(i)-1, rec.Seq)
		}
		entries[i] = staging.Entry{Kind: rec.Kind, Session: rec.Session, TS: rec.TS, Payload: json.RawMessage(rec.Payload)}
	}
	_, err := r.log.AppendBatch(ctx, entries)
	return err
}

// errCopied ends a copy that reached its goal.
var errCopied = errors.New("copied")

// copyTail copies the stream's records the file lacks.
func (r *replica) copyTail(ctx context.Context) error { return r.copyUpTo(ctx, 0) }

// copyUpTo copies the stream's records after the file's last one, up to seq
// (0: to the stream's end), 1,000 at a time.
func (r *replica) copyUpTo(ctx context.Context, seq uint64) error {
	var batch []staging.Record
	flush := func() error {
		err := r.appendContiguous(ctx, batch)
		batch = batch[:0]
		return err
	}
	err := r.j.Read(ctx, r.log.LastSeq(), func(rec staging.Record) error {
		if seq != 0 && rec.Seq > seq {
			return errCopied
		}
		batch = append(batch, rec)
		if len(batch) >= 1000 {
			if err := flush(); err != nil {
				return err
			}
		}
		if seq != 0 && rec.Seq == seq {
			return errCopied
		}
		return nil
	})
	if err != nil && !errors.Is(err, errCopied) {
		return err
	}
	return flush()
}
