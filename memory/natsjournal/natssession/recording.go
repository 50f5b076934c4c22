package natssession

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/exocortex/exocortex/core/session"
)

// A shared session's recording (what `exocortex replay` and the dashboard's
// inspector read: each request as it went to the model, each tool's result)
// is in the bucket too, so that a turn run through one replica is inspected
// through another:
//
//	e.NAME.N   line N of the session's recording (an event, its request's
//	           message contents left out), every replica's turns in order
//	b.HASH     a message content, by its SHA-256 (shared by all sessions)
//
// A backend is the session's replay.Mirror; the Store is a replay.Shared.

// maxEventTries bounds the appends of one line that another replica's lines
// got ahead of.
const maxEventTries = 16

// lastEvent is the number of the session's last recorded line in the
// bucket (0 when none), from the bucket stream's last message on the
// session's event keys.
func (s *Store) lastEvent(ctx context.Context, name string) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	st, err := s.js.Stream(ctx, "KV_"+s.bucket)
	if err != nil {
		return 0, fmt.Errorf("the stream of bucket %s: %w", s.bucket, err)
	}
	m, err := st.GetLastMsgForSubject(ctx, "$KV."+s.bucket+".e."+keyName(name)+".*")
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("the last recorded line of session %q in %s: %w", name, s.Location(), err)
	}
	tail := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
	n, err := strconv.ParseUint(tail, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("the last recorded line of session %q is under %s, not e.NAME.N", name, m.Subject)
	}
	return n, nil
}

// PutEvents appends recorded lines after the session's last in the bucket.
// A line another replica wrote first under the next number moves this one
// after it.
func (b *backend) PutEvents(ctx context.Context, lines [][]byte) error {
	b.evMu.Lock()
	defer b.evMu.Unlock()
	limit := b.s.nc.MaxPayload() - 512
	var tooBig error
	for _, line := range lines {
		if int64(len(line)) > limit {
			// Left out; the lines after it still go.
			tooBig = cmp.Or(tooBig, fmt.Errorf("session %q: a recorded line of %d bytes is more than the server takes (max_payload %d bytes, %s), so the shared recording lacks it; raise max_payload on the NATS servers", b.name, len(line), limit+512, b.s.Location()))
			continue
		}
		if err := b.putEvent(ctx, line); err != nil {
			return err
		}
	}
	return tooBig
}

func (b *backend) putEvent(ctx context.Context, line []byte) error {
	for try := 0; try < maxEventTries; try++ {
		if !b.evKnown {
			n, err := b.s.lastEvent(ctx, b.name)
			if err != nil {
				return err
			}
			b.events, b.evKnown = n, true
		}
		key := recordKey("e", b.name, b.events+1)
		cctx, cancel := context.WithTimeout(ctx, requestTimeout)
		_, err := b.s.kv.Create(cctx, key, line)
		cancel()
		if err == nil {
			b.events++
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("session %q: recording to %s in %s: %w", b.name, key, b.s.Location(), err)
		}
		if own, gerr := b.s.kv.Get(ctx, key); gerr == nil && bytes.Equal(own.Value(), line) {
			b.events++ // this line's own earlier attempt landed
			return nil
		}
		b.evKnown = false // another replica recorded meanwhile
	}
	return fmt.Errorf("session %q: recording in %s: other replicas kept recording ahead of this one", b.name, b.s.Location())
}

// PutBlob stores a message content under b.HASH, once.
func (b *backend) PutBlob(ctx context.Context, hash string, content []byte) error {
	if limit := b.s.nc.MaxPayload() - 512; int64(len(content)) > limit {
		return fmt.Errorf("session %q: a message of %d bytes is more than the server takes (max_payload %d bytes, %s); raise max_payload on the NATS servers", b.name, len(content), limit+512, b.s.Location())
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if _, err := b.s.kv.Create(ctx, "b."+hash, content); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("session %q: storing message %s in %s: %w", b.name, hash[:min(12, len(hash))], b.s.Location(), err)
	}
	return nil
}

// RecordedEvents calls fn with the session's recorded lines above since,
// in order: one get each, and one that finds none.
func (s *Store) RecordedEvents(ctx context.Context, name string, since uint64, fn func(n uint64, line []byte) error) error {
	for n := since + 1; ; n++ {
		key := recordKey("e", name, n)
		gctx, cancel := context.WithTimeout(ctx, requestTimeout)
		e, err := s.kv.Get(gctx, key)
		cancel()
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s from %s: %w", key, s.Location(), err)
		}
		if err := fn(n, e.Value()); err != nil {
			return err
		}
	}
}

// RecordedBlob is the content stored under hash.
func (s *Store) RecordedBlob(ctx context.Context, hash string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	e, err := s.kv.Get(ctx, "b."+hash)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, fmt.Errorf("message %s is not in %s: %w", hash[:min(12, len(hash))], s.Location(), fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("reading message %s from %s: %w", hash[:min(12, len(hash))], s.Location(), err)
	}
	return e.Value(), nil
}

// Recording is where a session's recording goes in the bucket (a
// replay.Mirror).
type Recording interface {
	PutEvents(ctx context.Context, lines [][]byte) error
	PutBlob(ctx context.Context, hash string, content []byte) error
}

// RecordingOf is session name's recording in the bucket, and the number of
// lines it holds.
func (s *Store) RecordingOf(ctx context.Context, name string) (Recording, uint64, error) {
	if err := session.ValidateName(name); err != nil {
		return nil, 0, err
	}
	b := &backend{s: s, name: name}
	n, err := s.lastEvent(ctx, name)
	if err != nil {
		return nil, 0, err
	}
	b.events, b.evKnown = n, true
	return b, n, nil
}
