package memory

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/exocortex/exocortex/staging"
)

// Journal is the ordered log of events a store is the projection of. Two
// implementations exist: LocalJournal, the JSONL file in the store's directory
// (the default, for one user on one machine), and the JetStream stream of
// package memory/natsjournal, shared by many hosts. Both carry the same
// records (staging.Record: kind, session, timestamp, payload) under the same
// sequence numbers, 1, 2, 3, … with no gaps, so a store replayed from either
// has the same state hash.
type Journal interface {
	// Location names the journal for people: a file path or a nats:// URL
	// with its stream.
	Location() string
	// Append writes the entries in order and returns their records. msgIDs[i]
	// (may be empty) is entry i's message id: an entry whose id the journal
	// already holds (within its de-duplication window) is not written again
	// and the record it names is returned instead, so a writer that retries
	// after a lost acknowledgement writes each entry once. Entries without a
	// TS are stamped by the journal.
	Append(ctx context.Context, entries []staging.Entry, msgIDs []string) ([]staging.Record, error)
	// Read calls fn for every record with a sequence number above since, in
	// order, up to the end of the journal as it was when the read started.
	Read(ctx context.Context, since uint64, fn func(staging.Record) error) error
	// LastSeq is the sequence number of the last record (0: empty).
	LastSeq(ctx context.Context) (uint64, error)
	// Subscribe calls fn, from a goroutine of its own and in order, for
	// every record above since, then for every record appended later (by any
	// writer), until stop is called. A subscriber that misses records (a
	// connection lost) may see a gap: it reads the missing records with Read.
	Subscribe(ctx context.Context, since uint64, fn func(staging.Record)) (stop func(), err error)
	// Close releases the journal.
	Close() error
}

// ErrJournalUnavailable is wrapped by the errors of a write the shared journal
// could not take (its server is unreachable): nothing was written, searches go
// on answering from the host's own indexes.
var ErrJournalUnavailable = errors.New("the shared journal is unavailable")

// LocalJournal is a Journal over a JSONL journal file (staging.Log). Its
// message ids are remembered for the last dedupWindow entries of this process
// (the file has a single writer: the process that holds its lock).
type LocalJournal struct {
	log *staging.Log
	own bool // Close closes log

	mu     sync.Mutex
	ids    map[string]uint64
	order  []string
	subs   map[int]func(staging.Record)
	nextID int
}

// dedupWindow is how many message ids a LocalJournal remembers.
const dedupWindow = 100_000

// OpenLocalJournal opens (creating if needed) the journal file at path,
// taking its lock: it fails while a store on it is open.
func OpenLocalJournal(ctx context.Context, path string, opts staging.Options) (*LocalJournal, error) {
	l, err := staging.Open(ctx, path, opts)
	if err != nil {
		return nil, fmt.Errorf("memory: opening the journal %s: %w", path, err)
	}
	j := NewLocalJournal(l)
	j.own = true
	return j, nil
}

// NewLocalJournal wraps an open log; closing the journal leaves it open.
func NewLocalJournal(l *staging.Log) *LocalJournal {
	return &LocalJournal{log: l, ids: map[string]uint64{}, subs: map[int]func(staging.Record){}}
}

// Location is the file's path.
func (j *LocalJournal) Location() string { return j.log.Path() }

// Append writes the entries with one write (see Journal.Append).
func (j *LocalJournal) Append(ctx context.Context, entries []staging.Entry, msgIDs []string) ([]staging.Record, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]staging.Record, len(entries))
	var fresh []staging.Entry
	var at []int
	for i, e := range entries {
		if i < len(msgIDs) && msgIDs[i] != "" {
			if seq, ok := j.ids[msgIDs[i]]; ok {
				r, err := j.recordAt(ctx, seq)
				if err != nil {
					return nil, err
				}
				out[i] = r
				continue
			}
		}
		fresh = append(fresh, e)
		at = append(at, i)
	}
	recs, err := j.log.AppendBatch(ctx, fresh)
	if err != nil {
		return nil, err
	}
	for k, r := range recs {
		i := at[k]
		out[i] = r
		if i < len(msgIDs) && msgIDs[i] != "" {
			j.remember(msgIDs[i], r.Seq)
		}
	}
	for _, fn := range j.subs {
		for _, r := range recs {
			fn(r)
		}
	}
	return out, nil
}

func (j *LocalJournal) remember(id string, seq uint64) {
	j.ids[id] = seq
	j.order = append(j.order, id)
	if len(j.order) > dedupWindow {
		delete(j.ids, j.order[0])
		j.order = j.order[1:]
	}
}

func (j *LocalJournal) recordAt(ctx context.Context, seq uint64) (staging.Record, error) {
	var out staging.Record
	err := j.log.Read(ctx, seq-1, func(r staging.Record) error {
		out = r
		return errStopRead
	})
	if err != nil && !errors.Is(err, errStopRead) {
		return out, err
	}
	return out, nil
}

// errStopRead ends a Read early.
var errStopRead = errors.New("stop reading")

// Read reads the file (see Journal.Read).
func (j *LocalJournal) Read(ctx context.Context, since uint64, fn func(staging.Record) error) error {
	return j.log.Read(ctx, since, fn)
}

// LastSeq is the last record's sequence number.
func (j *LocalJournal) LastSeq(context.Context) (uint64, error) { return j.log.LastSeq(), nil }

// Subscribe delivers the records above since, then those this process appends
// through the journal.
func (j *LocalJournal) Subscribe(ctx context.Context, since uint64, fn func(staging.Record)) (func(), error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.log.Read(ctx, since, func(r staging.Record) error { fn(r); return nil }); err != nil {
		return nil, err
	}
	id := j.nextID
	j.nextID++
	j.subs[id] = fn
	return func() {
		j.mu.Lock()
		delete(j.subs, id)
		j.mu.Unlock()
	}, nil
}

// Close closes the file when the journal opened it.
func (j *LocalJournal) Close() error {
	if j.own {
		return j.log.Close()
	}
	return nil
}
