package natssession

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/memory/natsjournal"
	"github.com/exocortex/exocortex/staging"
)

// backend is one session's records in the bucket (a session.Backend).
type backend struct {
	s    *Store
	name string

	mu   sync.Mutex
	last uint64 // the last record read or written
	size int64

	// evMu guards the recording's position (recording.go): the number of
	// the last line recorded, when known.
	evMu    sync.Mutex
	events  uint64
	evKnown bool
}

var _ session.Backend = (*backend)(nil)

// Path is where the session's host-local companions are kept: the name of
// the session file it would have in the home's sessions directory (there is
// no such file; the terminal's shown lines and recordings sit beside it).
func (b *backend) Path() string { return filepath.Join(b.s.dir, b.name+".jsonl") }

// Recovery: a key-value record is stored whole or not at all.
func (b *backend) Recovery() staging.Recovery { return staging.Recovery{} }

// Close has nothing to release: the store holds the connection.
func (b *backend) Close() error { return nil }

// Read calls fn with the records above since, in order.
func (b *backend) Read(ctx context.Context, since uint64, fn func(staging.Record) error) error {
	return b.scan(ctx, since, func(seq uint64, val []byte) error {
		r, err := natsjournal.Decode(seq, val)
		if err != nil {
			return fmt.Errorf("session %q in %s, key %s: %w", b.name, b.s.Location(), recordKey("r", b.name, seq), err)
		}
		return fn(r)
	})
}

// scan calls fn with the raw records above since, in order, and moves the
// backend's position to the last. From the start it reads them with one
// watch; after that (a refresh) one get per record, usually none.
func (b *backend) scan(ctx context.Context, since uint64, fn func(seq uint64, val []byte) error) error {
	if since == 0 {
		return b.scanAll(ctx, fn)
	}
	for seq := since + 1; ; seq++ {
		gctx, cancel := context.WithTimeout(ctx, requestTimeout)
		e, err := b.s.kv.Get(gctx, recordKey("r", b.name, seq))
		cancel()
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			if seq == since+1 {
				return b.stillThere(ctx, since)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s from %s: %w", recordKey("r", b.name, seq), b.s.Location(), err)
		}
		if err := fn(seq, e.Value()); err != nil {
			return err
		}
		b.advance(seq, len(e.Value()))
	}
}

// stillThere checks that record since, the last this copy read, is still
// in the bucket: a rename or trash on another host purges it.
func (b *backend) stillThere(ctx context.Context, since uint64) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	_, err := b.s.kv.Get(ctx, recordKey("r", b.name, since))
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return fmt.Errorf("session %q in %s: record %d is gone: %w", b.name, b.s.Location(), since, session.ErrRemoved)
	}
	if err != nil {
		return fmt.Errorf("reading %s from %s: %w", recordKey("r", b.name, since), b.s.Location(), err)
	}
	return nil
}

func (b *backend) scanAll(ctx context.Context, fn func(seq uint64, val []byte) error) error {
	prefix := "r." + keyName(b.name) + "."
	vals := map[uint64][]byte{}
	err := b.s.watch(ctx, prefix+"*", func(e jetstream.KeyValueEntry) error {
		n, err := strconv.ParseUint(strings.TrimPrefix(e.Key(), prefix), 10, 64)
		if err != nil || n == 0 {
			return fmt.Errorf("key %s is not a session record's (r.NAME.SEQ)", e.Key())
		}
		vals[n] = e.Value()
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading session %q from %s: %w", b.name, b.s.Location(), err)
	}
	seqs := make([]uint64, 0, len(vals))
	for n := range vals {
		seqs = append(seqs, n)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	for i, n := range seqs {
		if n != uint64(i+1) {
			// Records are created one after the other; a hole is damage.
			return fmt.Errorf("session %q in %s: record %d is missing (key %s) before record %d", b.name, b.s.Location(), i+1, recordKey("r", b.name, uint64(i+1)), n)
		}
		if err := fn(n, vals[n]); err != nil {
			return err
		}
		b.advance(n, len(vals[n]))
	}
	return nil
}

func (b *backend) advance(seq uint64, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if seq > b.last {
		b.last = seq
		b.size += int64(n)
	}
}

// Append creates the record after the last one read or written. A record
// of that number written by another host first is a conflict; one written by
// this very append (a retry after a lost acknowledgement) is success.
func (b *backend) Append(ctx context.Context, kind, sessionID string, payload any) (staging.Record, error) {
	b.mu.Lock()
	seq := b.last + 1
	b.mu.Unlock()
	ts := time.Now().UTC()
	body, p, err := natsjournal.Encode(staging.Entry{Kind: kind, Session: sessionID, Payload: payload}, ts)
	if err != nil {
		return staging.Record{}, err
	}
	key := recordKey("r", b.name, seq)
	if limit := b.s.nc.MaxPayload(); int64(len(body)) > limit-512 {
		return staging.Record{}, fmt.Errorf("session %q: a %s record of %d bytes is more than the server takes (max_payload %d bytes, %s); raise max_payload on the NATS servers", b.name, kind, len(body), limit, b.s.Location())
	}
	if err := b.create(ctx, key, body); err != nil {
		return staging.Record{}, err
	}
	b.advance(seq, len(body))
	b.mu.Lock()
	in := info{Name: b.name, Records: seq, Size: b.size, Modified: ts}
	b.mu.Unlock()
	if err := b.s.putInfo(ctx, in); err != nil {
		// The record is stored; only the listing's size and time lag.
		b.s.log.Warn("sessions: the listing entry was not updated", "session", b.name, "err", err)
	}
	return staging.Record{V: staging.SchemaVersion, Seq: seq, TS: ts, Kind: kind, Session: sessionID, Payload: p}, nil
}

// create writes key once, retrying a request the server did not answer.
func (b *backend) create(ctx context.Context, key string, body []byte) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, requestTimeout)
		_, err = b.s.kv.Create(cctx, key, body)
		cancel()
		if err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, jetstream.ErrNoStreamResponse) {
			return fmt.Errorf("session %q: writing %s to %s: %w", b.name, key, b.s.Location(), err)
		}
		if errors.Is(err, jetstream.ErrKeyExists) {
			gctx, cancel := context.WithTimeout(ctx, requestTimeout)
			e, gerr := b.s.kv.Get(gctx, key)
			cancel()
			if gerr == nil && bytes.Equal(e.Value(), body) {
				return nil // this append's own earlier attempt landed
			}
			return fmt.Errorf("session %q: record %s was written by another host since this copy was read (%s): reopen the session to continue on the fresh copy: %w", b.name, key, b.s.Location(), session.ErrConflict)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return fmt.Errorf("session %q: writing %s to %s: %w", b.name, key, b.s.Location(), err)
}
