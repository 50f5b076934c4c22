package inspect

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/replay"
)

// Errors of the loaders; the handlers answer them 400 or 404.
var (
	// ErrNotFound: no such session, no recording of it, or no such turn.
	ErrNotFound = errors.New("not found")
	// ErrBadInput: a session name or turn number that cannot be one.
	ErrBadInput = errors.New("bad input")
)

// InputError is a bad session name or turn number, naming the field.
type InputError struct {
	Field, Message string
	Err            error
}

func (e *InputError) Error() string { return e.Field + ": " + e.Message }
func (e *InputError) Unwrap() error { return e.Err }

// TurnRef names one recorded turn, for choosing among them.
type TurnRef struct {
	N    int    `json:"n"`
	User string `json:"user"`
	// Iterations counts the turn's model requests.
	Iterations int `json:"iterations"`
	// Ended is false for a turn still running (or cut off).
	Ended  bool   `json:"ended"`
	Stop   string `json:"stop_reason,omitempty"`
	TookUS int64  `json:"took_us,omitempty"`
}

// cache keeps the recordings read last, by events file, while the file's
// size and modification time are unchanged (a followed wiring view asks
// every few seconds; a recording grows only by appends).
type cache struct {
	mu      sync.Mutex
	entries map[string]cached
}

type cached struct {
	size int64
	mod  time.Time
	rec  *replay.Recording
}

// cacheSize bounds the recordings kept.
const cacheSize = 8

func (c *cache) load(dir, events string) (*replay.Recording, error) {
	fi, err := os.Stat(events)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	e, ok := c.entries[events]
	c.mu.Unlock()
	if ok && e.size == fi.Size() && e.mod.Equal(fi.ModTime()) {
		return e.rec, nil
	}
	rec, err := replay.Load(dir)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= cacheSize {
		c.entries = map[string]cached{}
	}
	c.entries[events] = cached{size: fi.Size(), mod: fi.ModTime(), rec: rec}
	return rec, nil
}

// loadTurn reads the recording of session name and returns it and its
// turn n (the last ended turn when turn is "", the last turn if none
// ended). The recording is read as it is: a turn is never changed once
// loaded, so the answer may share it with the cache.
func (s *Inspect) loadTurn(ctx context.Context, name, turn string) (*replay.Recording, *replay.Turn, error) {
	if err := session.ValidateName(name); err != nil {
		return nil, nil, &InputError{Field: "session", Message: err.Error(), Err: ErrBadInput}
	}
	store := s.opts.Sessions
	if store == nil {
		store = session.NewDirStore(s.opts.Dir)
	}
	ok, err := store.Exists(ctx, name)
	if err != nil {
		return nil, nil, fmt.Errorf("session %q: %w", name, err)
	}
	if !ok {
		return nil, nil, fmt.Errorf("session %q: %w (there is no such session in %s; the terminal's /sessions lists them)", name, ErrNotFound, store.Location())
	}
	dir := replay.DirFor(filepath.Join(s.opts.Dir, name+".jsonl"))
	if s.opts.Recording != nil {
		shared, err := s.opts.Recording(ctx, name)
		switch {
		case err == nil:
			dir = shared
		case errors.Is(err, fs.ErrNotExist):
			// None shared: this host's own, if any (recorded before the
			// session was shared).
		default:
			return nil, nil, fmt.Errorf("session %q: %w", name, err)
		}
	}
	events := filepath.Join(dir, replay.EventsFile)
	if _, err := os.Stat(events); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("session %q has no recorded turn yet (%s is missing): send it a message first: %w", name, events, ErrNotFound)
	}
	rec, err := s.cache.load(dir, events)
	if err != nil {
		// A recording with no monologue yet is a session with no turn.
		return nil, nil, fmt.Errorf("session %q: %v: %w", name, err, ErrNotFound)
	}
	if turn == "" {
		for i := len(rec.Turns) - 1; i >= 0; i-- {
			if rec.Turns[i].Ended {
				return rec, rec.Turns[i], nil
			}
		}
		return rec, rec.Turns[len(rec.Turns)-1], nil
	}
	n, err := strconv.Atoi(turn)
	if err != nil || n < 1 {
		return nil, nil, &InputError{Field: "turn", Message: fmt.Sprintf("%q is not a turn number (1, 2, …; leave it out for the last turn)", turn), Err: ErrBadInput}
	}
	if n > len(rec.Turns) {
		return nil, nil, fmt.Errorf("session %q has %d recorded turns, not %d: %w", name, len(rec.Turns), n, ErrNotFound)
	}
	return rec, rec.Turns[n-1], nil
}

// turnRefs lists the recording's turns.
func turnRefs(rec *replay.Recording) []TurnRef {
	out := make([]TurnRef, 0, len(rec.Turns))
	for _, t := range rec.Turns {
		r := TurnRef{N: t.N, User: t.User, Iterations: len(t.Iterations), Ended: t.Ended, Stop: t.StopReason}
		if t.Ended {
			r.TookUS = t.TookUS
		}
		out = append(out, r)
	}
	return out
}
