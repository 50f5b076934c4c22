// Package natssession keeps a home's sessions in a JetStream key-value
// bucket when the memory journal is on JetStream, so that a session begun
// through one host's `serve` (or terminal) continues through another's, and
// `serve` can run as several replicas behind a load balancer.
//
// A session is its records, as in a session file, one key each:
//
//	r.NAME.SEQ   record SEQ (1, 2, 3, …) of session NAME, the journal's wire
//	             form ({"v":1,"ts":…,"kind":…,"session":…,"payload":…})
//	i.NAME       the listing's entry: records, bytes, last modified
//	t.NAME.STAMP.SEQ   a trashed session's records (DELETE, lifetime's end)
//
// (a '.' of a session name is '=' in a key, so names and keys map one to
// one). The bucket is the journal stream's name plus "_SESSIONS"
// (EXO_MEMORY_SESSIONS): hosts that share a stream share its sessions.
//
// Optimistic concurrency: record SEQ is written with Create, which the
// server refuses when the key exists (its expected revision is "none"). A
// writer appends after the last record it has read, so when two replicas
// append to one session at once the second is refused with an error wrapping
// session.ErrConflict — nothing is overwritten, no turn is lost — and reads
// the fresh records (session.Session.Refresh) before it goes on. `serve`
// refreshes a session before every turn, so a load balancer may send each
// request to any replica.
//
// What stays on each host: the last-session marker (`exocortex -c`), the
// terminal's shown lines, recordings and a session's attachments, in the
// home's sessions directory.
package natssession

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/memory/natsjournal"
)

// BucketSuffix names the sessions bucket after the journal stream.
const BucketSuffix = "_SESSIONS"

// requestTimeout bounds one request to the server.
const requestTimeout = 5 * time.Second

// Store is a session.Store on a JetStream key-value bucket.
type Store struct {
	cfg    natsjournal.Config
	bucket string
	// dir is the home's sessions directory: the last-session marker and the
	// host-local companions of a session (see the package documentation).
	dir string
	nc  *nats.Conn
	own bool
	js  jetstream.JetStream
	kv  jetstream.KeyValue
	log *slog.Logger
}

var _ session.Store = (*Store)(nil)

// Open connects to the servers of cfg and finds (or creates) the sessions
// bucket of its stream; dir is the home's sessions directory.
func Open(ctx context.Context, cfg natsjournal.Config, dir string) (*Store, error) {
	nc, err := natsjournal.Dial(cfg)
	if err != nil {
		return nil, err
	}
	s, err := OpenConn(ctx, nc, cfg, dir)
	if err != nil {
		nc.Close()
		return nil, err
	}
	s.own = true
	return s, nil
}

// OpenConn is Open on a connection the caller keeps (and closes).
func OpenConn(ctx context.Context, nc *nats.Conn, cfg natsjournal.Config, dir string) (*Store, error) {
	if cfg.Stream == "" {
		cfg.Stream = natsjournal.DefaultStream
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("natssession: %w", err)
	}
	s := &Store{cfg: cfg, bucket: cfg.Stream + BucketSuffix, dir: dir, nc: nc, js: js, log: log}
	if err := s.ensure(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// ensure finds or creates the bucket. Records are written once, so one
// revision per key is all it keeps.
func (s *Store) ensure(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	kv, err := s.js.KeyValue(ctx, s.bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = s.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:      s.bucket,
			Description: "Exocortex sessions: one key per session record (r.NAME.SEQ), written with Create",
			History:     1,
			Storage:     jetstream.FileStorage,
			Replicas:    s.cfg.Replicas,
		})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = s.js.KeyValue(ctx, s.bucket)
		}
	}
	if err != nil {
		return fmt.Errorf("natssession: the sessions bucket %s on %s: %w", s.bucket, natsjournal.Redact(s.cfg.Servers), err)
	}
	s.kv = kv
	return nil
}

// Bucket is the key-value bucket's name.
func (s *Store) Bucket() string { return s.bucket }

// Location is the servers and the bucket.
func (s *Store) Location() string {
	return natsjournal.Redact(s.cfg.Servers) + " bucket " + s.bucket
}

// Close closes the connection when Open made it.
func (s *Store) Close() error {
	if s.own {
		s.nc.Close()
	}
	return nil
}

// keyName is a session name as one key token ('.' is '=').
func keyName(name string) string { return strings.ReplaceAll(name, ".", "=") }

func recordKey(prefix, name string, seq uint64) string {
	return prefix + "." + keyName(name) + "." + strconv.FormatUint(seq, 10)
}

func infoKey(name string) string { return "i." + keyName(name) }

// info is a session's listing entry (i.NAME).
type info struct {
	Name     string    `json:"name"`
	Records  uint64    `json:"records"`
	Size     int64     `json:"size"`
	Modified time.Time `json:"modified"`
}

// Open opens the session name, creating it when it has no records.
func (s *Store) Open(ctx context.Context, name string) (*session.Session, error) {
	if err := session.ValidateName(name); err != nil {
		return nil, err
	}
	b := &backend{s: s, name: name}
	sess, err := session.OpenOn(ctx, name, b)
	if err != nil {
		return nil, err
	}
	if err := session.MarkLast(s.dir, name); err != nil {
		sess.Close()
		return nil, err
	}
	return sess, nil
}

// Exists reports whether the session has its first record.
func (s *Store) Exists(ctx context.Context, name string) (bool, error) {
	if session.ValidateName(name) != nil {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	_, err := s.kv.Get(ctx, recordKey("r", name, 1))
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("natssession: looking for session %q in %s: %w", name, s.Location(), err)
	}
	return true, nil
}

// List reads every session's listing entry.
func (s *Store) List(ctx context.Context) ([]session.Info, error) {
	var out []session.Info
	err := s.watch(ctx, "i.>", func(e jetstream.KeyValueEntry) error {
		var in info
		if err := json.Unmarshal(e.Value(), &in); err != nil {
			s.log.Warn("sessions: a listing entry is not readable; skipped", "bucket", s.bucket, "key", e.Key(), "err", err)
			return nil
		}
		out = append(out, session.Info{Name: in.Name, Path: s.Location() + " " + infoKey(in.Name), Modified: in.Modified, Size: in.Size})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("natssession: listing the sessions in %s: %w", s.Location(), err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Modified.After(out[j].Modified) })
	return out, nil
}

// watch calls fn with the current value of every key matching filter (not
// those deleted), then returns.
func (s *Store) watch(ctx context.Context, filter string, fn func(jetstream.KeyValueEntry) error) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	w, err := s.kv.Watch(ctx, filter, jetstream.IgnoreDeletes())
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("the watch of %s ended early", filter)
			}
			if e == nil {
				return nil // the current values are all delivered
			}
			if err := fn(e); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Last is the home's last-session marker.
func (s *Store) Last(context.Context) (string, error) { return session.Last(s.dir) }

// Rename copies the records of from to the name to (refused when to has
// any), then removes from's.
func (s *Store) Rename(ctx context.Context, from, to string) error {
	if err := session.ValidateName(to); err != nil {
		return err
	}
	if err := s.move(ctx, from, "r."+keyName(to), to); err != nil {
		return fmt.Errorf("natssession: renaming session %q to %q: %w", from, to, err)
	}
	return nil
}

// Trash moves the records of name to t.NAME.STAMP.SEQ.
func (s *Store) Trash(ctx context.Context, name, stamp string) error {
	if err := s.move(ctx, name, "t."+keyName(name)+"."+keyName(stamp), ""); err != nil {
		return fmt.Errorf("natssession: trashing session %q: %w", name, err)
	}
	return nil
}

// move writes the records of session name under prefix.SEQ, each with
// Create (so a taken name is refused), and the listing entry of to when it
// is a session, then purges name's keys.
func (s *Store) move(ctx context.Context, name, prefix, to string) error {
	b := &backend{s: s, name: name}
	var seqs []uint64
	var vals [][]byte
	var size int64
	err := b.scan(ctx, 0, func(seq uint64, val []byte) error {
		seqs, vals = append(seqs, seq), append(vals, val)
		size += int64(len(val))
		return nil
	})
	if err != nil {
		return err
	}
	for i, seq := range seqs {
		key := prefix + "." + strconv.FormatUint(seq, 10)
		cctx, cancel := context.WithTimeout(ctx, requestTimeout)
		_, err := s.kv.Create(cctx, key, vals[i])
		cancel()
		if errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("%s exists already: %w", key, session.ErrConflict)
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", key, err)
		}
	}
	if to != "" && len(seqs) > 0 {
		if err := s.putInfo(ctx, info{Name: to, Records: seqs[len(seqs)-1], Size: size, Modified: time.Now().UTC()}); err != nil {
			return err
		}
	}
	for _, seq := range seqs {
		if err := s.purge(ctx, recordKey("r", name, seq)); err != nil {
			return err
		}
	}
	return s.purge(ctx, infoKey(name))
}

func (s *Store) purge(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if err := s.kv.Purge(ctx, key); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("removing %s: %w", key, err)
	}
	return nil
}

func (s *Store) putInfo(ctx context.Context, in info) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if _, err := s.kv.Put(ctx, infoKey(in.Name), b); err != nil {
		return fmt.Errorf("writing the listing entry of session %q: %w", in.Name, err)
	}
	return nil
}
