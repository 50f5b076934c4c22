// Package session keeps an operator's named sessions: the conversation history and
// the session-scoped shared state, saved as they change so that a killed terminal
// loses nothing already shown.
//
// A session is a staging log (sessions/NAME.jsonl): one "message" record per
// history message and one "state" record per saved state snapshot, so a torn last
// line after a crash is repaired on open and a malformed line is quarantined rather
// than taking the session with it. A small index file remembers which session was
// used last, for `exocortex -c`.
//
// Where sessions live is a Store: DirStore is that directory; when the memory
// journal is on NATS JetStream, package memory/natsjournal/natssession keeps
// the same records in a key-value bucket every host shares, and a Session
// reads and writes them through a Backend. Session.Refresh reads what
// another writer appended; an append after a stale copy fails with
// ErrConflict rather than overwriting it.
package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/renameio/v2"
	"github.com/google/uuid"
	"google.golang.org/protobuf/encoding/protojson"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/staging"
)

// Record kinds in a session file.
const (
	KindMeta    = "session.meta"
	KindMessage = "session.message"
	KindState   = "session.state"
	// KindContext records the agent's context-window state (the summary of
	// compressed turns and where the verbatim history starts), so a resumed
	// session neither re-sends nor re-compresses what was compressed.
	KindContext = "session.context"
)

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidateName reports whether name can name a session file.
func ValidateName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("session name %q: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// Meta describes a session.
type Meta struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
}

// Session is one open session. It is safe for concurrent use.
type Session struct {
	meta Meta
	log  Backend

	mu       sync.Mutex
	last     uint64 // the sequence of the last record read or written
	history  []*exocortexv1.Message
	state    json.RawMessage
	context  json.RawMessage
	recovery staging.Recovery
}

// Open opens the session called name under dir (creating it when it does not
// exist) and reads its history back.
func Open(ctx context.Context, dir, name string) (*Session, error) {
	return NewDirStore(dir).Open(ctx, name)
}

// openFile opens the session file of name under dir.
func openFile(ctx context.Context, dir, name string) (*Session, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the sessions directory: %w", err)
	}
	path := filepath.Join(dir, name+".jsonl")
	// SyncInterval: a killed process loses nothing; a power cut at most a second.
	log, err := staging.Open(ctx, path, staging.Options{Sync: staging.SyncInterval})
	if err != nil {
		return nil, fmt.Errorf("opening session %q: %w", name, err)
	}
	s, err := OpenOn(ctx, name, log)
	if err != nil {
		return nil, err
	}
	if err := MarkLast(dir, name); err != nil {
		log.Close()
		return nil, err
	}
	return s, nil
}

// OpenOn opens the session called name kept by b (a Store's): it reads the
// records back and, for a session without any, writes its meta record. On an
// error b is closed.
func OpenOn(ctx context.Context, name string, b Backend) (*Session, error) {
	s := &Session{log: b, recovery: b.Recovery()}
	if _, err := s.readFrom(ctx, 0); err != nil {
		b.Close()
		return nil, err
	}
	if s.meta.ID == "" {
		s.meta = Meta{ID: uuid.NewString(), Name: name, Created: time.Now().UTC()}
		r, err := b.Append(ctx, KindMeta, s.meta.ID, s.meta)
		if err != nil {
			b.Close()
			return nil, fmt.Errorf("creating session %q: %w", name, err)
		}
		s.last = r.Seq
	}
	s.meta.Name = name
	return s, nil
}

// readFrom applies the records above since; s.mu is held or s is not shared
// yet. It returns how many it read.
func (s *Session) readFrom(ctx context.Context, since uint64) (int, error) {
	n := 0
	err := s.log.Read(ctx, since, func(r staging.Record) error {
		n++
		s.last = max(s.last, r.Seq)
		switch r.Kind {
		case KindMeta:
			return r.Decode(&s.meta)
		case KindMessage:
			m := &exocortexv1.Message{}
			if err := protojson.Unmarshal(r.Payload, m); err != nil {
				return fmt.Errorf("session %q, record %d: %w", s.meta.Name, r.Seq, err)
			}
			s.history = append(s.history, m)
		case KindState:
			s.state = append(json.RawMessage(nil), r.Payload...)
		case KindContext:
			s.context = append(json.RawMessage(nil), r.Payload...)
		}
		return nil
	})
	return n, err
}

// Refresh reads the records another writer (a `serve` replica on another
// host, on a shared store) appended since this copy last read or wrote, and
// reports whether there were any: an agent built on the old history must be
// rebuilt on this one. A session file has one writer, so on a DirStore it
// finds none.
func (s *Session) Refresh(ctx context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.readFrom(ctx, s.last)
	if err != nil {
		return n > 0, fmt.Errorf("refreshing session %q from %s: %w", s.meta.Name, s.log.Path(), err)
	}
	return n > 0, nil
}

// ID is the session's id (ACP's session_id).
func (s *Session) ID() string { return s.meta.ID }

// Name is the session's name.
func (s *Session) Name() string { return s.meta.Name }

// Path is the session file (or where a shared store keeps it).
func (s *Session) Path() string { return s.log.Path() }

// Backend is what keeps the session's records: a staging log, or a shared
// store's (which may offer more, such as a place for the session's
// recording: replay.Mirror).
func (s *Session) Backend() Backend { return s.log }

// Recovery says what was repaired when the session was opened.
func (s *Session) Recovery() staging.Recovery { return s.recovery }

// History returns a copy of the messages so far.
func (s *Session) History() []*exocortexv1.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*exocortexv1.Message(nil), s.history...)
}

// Append adds a message to the history and writes it to disk before returning.
func (s *Session) Append(ctx context.Context, m *exocortexv1.Message) error {
	b, err := protojson.Marshal(m)
	if err != nil {
		return fmt.Errorf("encoding a message of session %q: %w", s.meta.Name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.log.Append(ctx, KindMessage, s.meta.ID, json.RawMessage(b))
	if err != nil {
		return fmt.Errorf("saving a message of session %q: %w", s.meta.Name, err)
	}
	s.last = r.Seq
	s.history = append(s.history, m)
	return nil
}

// State returns the last saved session-state snapshot (nil when none).
func (s *Session) State() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// SaveState appends a session-state snapshot.
func (s *Session) SaveState(ctx context.Context, snapshot json.RawMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.log.Append(ctx, KindState, s.meta.ID, snapshot)
	if err != nil {
		return fmt.Errorf("saving the state of session %q: %w", s.meta.Name, err)
	}
	s.last = r.Seq
	s.state = snapshot
	return nil
}

// Context returns the last saved context-window state (nil when none).
func (s *Session) Context() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.context
}

// SaveContext appends a context-window state record.
func (s *Session) SaveContext(ctx context.Context, state json.RawMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.log.Append(ctx, KindContext, s.meta.ID, state)
	if err != nil {
		return fmt.Errorf("saving the context state of session %q: %w", s.meta.Name, err)
	}
	s.last = r.Seq
	s.context = state
	return nil
}

// Close closes the session file.
func (s *Session) Close() error { return s.log.Close() }

// Info is a session in a listing.
type Info struct {
	Name     string    `json:"name"`
	Path     string    `json:"path"`
	Modified time.Time `json:"modified"`
	Size     int64     `json:"size"`
}

// List returns the sessions under dir, most recently modified first.
func List(dir string) ([]Info, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	var out []Info
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || e.IsDir() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, Info{Name: name, Path: filepath.Join(dir, e.Name()), Modified: fi.ModTime(), Size: fi.Size()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Modified.After(out[j].Modified) })
	return out, nil
}

const lastFile = "last"

// Last returns the name of the session opened last under dir ("" when none).
func Last(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, lastFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the last session: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// MarkLast records name as the session opened last under dir (a shared
// store keeps the last session per home, in its sessions directory).
func MarkLast(dir, name string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the sessions directory: %w", err)
	}
	path := filepath.Join(dir, lastFile)
	if err := renameio.WriteFile(path, []byte(name+"\n"), 0o644); err != nil {
		return fmt.Errorf("recording the last session in %s: %w", path, err)
	}
	return nil
}

// NewName returns a fresh session name from the time, e.g. "2026-11-21-1530-ab12".
func NewName(now time.Time) string {
	return now.Format("2006-01-02-1504") + "-" + uuid.NewString()[:4]
}
