package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/exocortex/exocortex/staging"
)

// Backend keeps one session's records, in order: a staging log (a session
// file) or a shared store's. *staging.Log is one.
type Backend interface {
	// Read calls fn for every record above since, in order.
	Read(ctx context.Context, since uint64, fn func(staging.Record) error) error
	// Append writes one record after the last one this backend read or
	// wrote. A shared backend refuses it with an error wrapping ErrConflict
	// when another writer appended first: nothing is written, and the
	// writer reads the fresh records (Session.Refresh) before it goes on.
	Append(ctx context.Context, kind, session string, payload any) (staging.Record, error)
	// Path names where the records are, for people.
	Path() string
	// Recovery says what was repaired on open.
	Recovery() staging.Recovery
	Close() error
}

// ErrConflict is wrapped by the error of a write to a shared session that
// another writer (a `serve` replica on another host) appended to since this
// copy last read it: the write is refused rather than losing either turn.
var ErrConflict = errors.New("the session was changed by another writer")

// ErrRemoved is wrapped by a shared session's Refresh when another writer
// renamed or removed (trashed) the session since this copy read it: the copy
// is closed, not written to.
var ErrRemoved = errors.New("the session was renamed or removed by another writer")

// Store is where a home's sessions live: a directory of files (DirStore, the
// default) or a shared bucket on NATS JetStream (package
// memory/natsjournal/natssession, when the memory journal is on JetStream), so
// that a session begun through one host continues through another's.
type Store interface {
	// Location names where the sessions are, for people: a directory, or a
	// server and bucket.
	Location() string
	// Open opens the session called name, creating it when it does not
	// exist, and records it as the last one opened.
	Open(ctx context.Context, name string) (*Session, error)
	// Exists reports whether a session called name exists.
	Exists(ctx context.Context, name string) (bool, error)
	// List returns the sessions, most recently modified first.
	List(ctx context.Context) ([]Info, error)
	// Last is the name of the session opened last ("" when none).
	Last(ctx context.Context) (string, error)
	// Rename gives the session from (closed) the name to, which must be free.
	Rename(ctx context.Context, from, to string) error
	// Trash moves the session name (closed) out of the list, keeping its
	// records under a name with stamp, for an operator to recover.
	Trash(ctx context.Context, name, stamp string) error
}

// DirStore is the sessions directory ($EXOCORTEX_HOME/sessions): one staging
// log per session, NAME.jsonl.
type DirStore struct{ dir string }

var _ Store = DirStore{}

// NewDirStore returns the store of the sessions under dir.
func NewDirStore(dir string) DirStore { return DirStore{dir: dir} }

// Dir is the sessions directory.
func (d DirStore) Dir() string { return d.dir }

// Location is the directory.
func (d DirStore) Location() string { return d.dir }

// Open opens (creating) the session file NAME.jsonl.
func (d DirStore) Open(ctx context.Context, name string) (*Session, error) {
	return openFile(ctx, d.dir, name)
}

// Exists reports whether NAME.jsonl exists.
func (d DirStore) Exists(_ context.Context, name string) (bool, error) {
	_, err := os.Stat(filepath.Join(d.dir, name+".jsonl"))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("looking for session %q in %s: %w", name, d.dir, err)
	}
	return true, nil
}

// List lists the session files.
func (d DirStore) List(context.Context) ([]Info, error) { return List(d.dir) }

// Last reads the directory's last-session file.
func (d DirStore) Last(context.Context) (string, error) { return Last(d.dir) }

// Rename renames the session file (and its lock file's stale copy goes).
func (d DirStore) Rename(_ context.Context, from, to string) error {
	src, dst := filepath.Join(d.dir, from+".jsonl"), filepath.Join(d.dir, to+".jsonl")
	if err := os.Rename(src, dst); err != nil {
		return fmt.Errorf("renaming %s to %s: %w", src, dst, err)
	}
	_ = os.Remove(src + ".lock")
	return nil
}

// Trash moves NAME.jsonl to .trash/NAME-STAMP.jsonl.
func (d DirStore) Trash(_ context.Context, name, stamp string) error {
	trash := filepath.Join(d.dir, ".trash")
	if err := os.MkdirAll(trash, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", trash, err)
	}
	from := filepath.Join(d.dir, name+".jsonl")
	if err := os.Rename(from, filepath.Join(trash, name+"-"+stamp+".jsonl")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("moving %s to %s: %w", from, trash, err)
	}
	return nil
}

// TrashStamp is the stamp Trash is given for now.
func TrashStamp(now time.Time) string { return now.UTC().Format("20060102-150405.000000") }
