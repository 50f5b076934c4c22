package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/exocortex/exocortex/staging"
)

// MigrateReport is what MigrateJournal did.
type MigrateReport struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Records is the source's record count; Copied how many were written
	// (fewer when an earlier migration stopped part-way and this one resumed).
	Records uint64 `json:"records"`
	Copied  uint64 `json:"copied"`
	// StateHash is the hash both journals replay to.
	StateHash string        `json:"state_hash"`
	Verified  bool          `json:"verified"`
	Duration  time.Duration `json:"duration_ns"`
}

// MigrateJournal copies every record of from to to, keeping sequence numbers
// and timestamps, then replays both from sequence 1 and compares their state
// hashes. to must be empty, or hold a prefix of from (a migration that was
// stopped: it resumes after it). Each record is written under the message id
// migrate-SEQ, so a batch retried after a lost acknowledgement lands once.
// progress, if set, is called with the records copied so far and the total.
func MigrateJournal(ctx context.Context, from, to Journal, progress func(done, total uint64)) (MigrateReport, error) {
	start := time.Now()
	rep := MigrateReport{From: from.Location(), To: to.Location()}
	total, err := from.LastSeq(ctx)
	if err != nil {
		return rep, fmt.Errorf("memory: migrate: %s: %w", from.Location(), err)
	}
	rep.Records = total
	have, err := to.LastSeq(ctx)
	if err != nil {
		return rep, fmt.Errorf("memory: migrate: %s: %w", to.Location(), err)
	}
	if have > total {
		return rep, fmt.Errorf("memory: migrate: %s holds %d records, more than the %d of %s: give an empty target", to.Location(), have, total, from.Location())
	}
	if have > 0 {
		a, err := recordAt(ctx, from.Read, have)
		if err != nil {
			return rep, err
		}
		b, err := recordAt(ctx, to.Read, have)
		if err != nil {
			return rep, err
		}
		if a == nil || b == nil || !sameRecord(*a, *b) {
			return rep, fmt.Errorf("memory: migrate: %s is not empty and its %d records are not the first of %s: give an empty target (another stream name: ?stream=NAME, or a new directory)", to.Location(), have, from.Location())
		}
	}
	var batch []staging.Entry
	var ids []string
	var seqs []uint64
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		recs, err := to.Append(ctx, batch, ids)
		if err != nil {
			return err
		}
		for i, r := range recs {
			if r.Seq != seqs[i] {
				return fmt.Errorf("memory: migrate: %s stored record %d as %d: another writer is using it; migrate to a journal no one else writes", to.Location(), seqs[i], r.Seq)
			}
		}
		rep.Copied += uint64(len(recs))
		if progress != nil {
			progress(seqs[len(seqs)-1], total)
		}
		batch, ids, seqs = batch[:0], ids[:0], seqs[:0]
		return nil
	}
	err = from.Read(ctx, have, func(r staging.Record) error {
		if r.Seq > total {
			return nil
		}
		batch = append(batch, staging.Entry{Kind: r.Kind, Session: r.Session, TS: r.TS, Payload: json.RawMessage(r.Payload)})
		ids = append(ids, "migrate-"+strconv.FormatUint(r.Seq, 10))
		seqs = append(seqs, r.Seq)
		if len(batch) >= 256 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return rep, fmt.Errorf("memory: migrate %s to %s: %w", from.Location(), to.Location(), err)
	}
	hashes := make([]string, 2)
	for i, j := range []Journal{from, to} {
		scratch, err := os.MkdirTemp("", "exocortex-migrate-")
		if err != nil {
			return rep, fmt.Errorf("memory: migrate: %w", err)
		}
		r, err := ReplayJournal(ctx, j, scratch, Options{Logger: discardLogger()})
		os.RemoveAll(scratch)
		if err != nil {
			return rep, fmt.Errorf("memory: migrate: verifying %s: %w", j.Location(), err)
		}
		hashes[i] = r.StateHash
	}
	if hashes[0] != hashes[1] {
		return rep, fmt.Errorf("memory: migrate: %s replays to state hash %s but %s to %s: the copy is not faithful; do not switch to it", from.Location(), hashes[0], to.Location(), hashes[1])
	}
	rep.StateHash, rep.Verified = hashes[0], true
	rep.Duration = time.Since(start)
	return rep, nil
}
