// Package memstore holds the memory plugin's handles on the files only one process
// may open: the memory store ($EXOCORTEX_HOME/memory, an exclusive lock on its
// journal), staging.jsonl and the ontology's relationships.jsonl (staging logs,
// one writer each). Every extension and tool of the memory plugin shares one
// Handle, so the plugin opens each file once.
//
// Files are opened on first use, not at start: a plugin that is only asked for its
// manifest (the lint, `exocortex plugins list`) touches nothing. After IdleClose
// without use they are closed again, releasing their locks so that `exocortex
// memory` can work between turns and the indexes are left cleanly closed; the next
// use reopens them.
//
//	h := memstore.New(memstore.Options{Home: home})
//	err := h.WithStore(ctx, func(s *memory.Store) error {
//		_, err := s.Search(ctx, "query", memory.SearchOptions{Limit: 5})
//		return err
//	})
//
// A file that cannot be opened (another process holds it, a corrupt index) is an
// error of that one call, naming the file; the next call tries again.
package memstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/staging"
)

// DefaultIdleClose is how long the files stay open after their last use.
const DefaultIdleClose = time.Minute

// Paths of the shared files, relative to the home directory. Plugins declare them
// in their manifests (FileSpec) with the same ids, so the lint sees one path per id.
const (
	StoreDir          = "memory"
	StagingFile       = "staging.jsonl"
	RelationshipsFile = "ontology/relationships.jsonl"
)

// File ids for FileSpec declarations.
const (
	StagingID       = "staging"
	MemoryID        = "memory_store"
	RelationshipsID = "ontology_relationships"
)

// Options configure a Handle.
type Options struct {
	// Home is the Exocortex home directory; the files live in it.
	Home string
	// IdleClose closes the files after this long without use; 0 means
	// DefaultIdleClose, a negative value keeps them open until Close.
	IdleClose time.Duration
	// Embedder computes memory vectors; nil runs the store on BM25 alone.
	Embedder memory.Embedder
	// Logger receives the store's notices (default: discarded).
	Logger *slog.Logger
}

// Handle is the plugin's shared handle on its files. Safe for concurrent use.
type Handle struct {
	opts    Options
	store   *lazy[*memory.Store]
	staging *lazy[*staging.Log]
	rels    *lazy[*staging.Log]
}

// New returns a handle; nothing is opened until first use.
func New(o Options) *Handle {
	if o.IdleClose == 0 {
		o.IdleClose = DefaultIdleClose
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := &Handle{opts: o}
	h.store = newLazy(o.IdleClose, func(ctx context.Context) (*memory.Store, error) {
		return memory.Open(ctx, h.StoreDir(), memory.Options{Embedder: o.Embedder, Logger: o.Logger})
	})
	h.staging = newLazy(o.IdleClose, func(ctx context.Context) (*staging.Log, error) {
		return openLog(ctx, h.StagingPath(), o.Logger)
	})
	h.rels = newLazy(o.IdleClose, func(ctx context.Context) (*staging.Log, error) {
		return openLog(ctx, h.RelationshipsPath(), o.Logger)
	})
	return h
}

func openLog(ctx context.Context, path string, log *slog.Logger) (*staging.Log, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the directory of %s: %w", path, err)
	}
	return staging.Open(ctx, path, staging.Options{Logger: log})
}

// Home is the home directory the handle works in.
func (h *Handle) Home() string { return h.opts.Home }

// StoreDir is the memory store's directory.
func (h *Handle) StoreDir() string { return filepath.Join(h.opts.Home, StoreDir) }

// StagingPath is staging.jsonl.
func (h *Handle) StagingPath() string { return filepath.Join(h.opts.Home, StagingFile) }

// RelationshipsPath is the ontology's relationships.jsonl.
func (h *Handle) RelationshipsPath() string { return filepath.Join(h.opts.Home, RelationshipsFile) }

// WithStore runs fn with the memory store, opening it if needed. The store stays
// open at least while fn runs.
func (h *Handle) WithStore(ctx context.Context, fn func(*memory.Store) error) error {
	return h.store.with(ctx, fn)
}

// WithStaging runs fn with staging.jsonl open for appending.
func (h *Handle) WithStaging(ctx context.Context, fn func(*staging.Log) error) error {
	return h.staging.with(ctx, fn)
}

// WithRelationships runs fn with the ontology's relationships.jsonl open for
// appending.
func (h *Handle) WithRelationships(ctx context.Context, fn func(*staging.Log) error) error {
	return h.rels.with(ctx, fn)
}

// Close closes whatever is open. The handle may be used again afterwards.
func (h *Handle) Close() error {
	return errors.Join(h.store.close(), h.staging.close(), h.rels.close())
}

// lazy is one file opened on first use and closed after idle time without use.
type lazy[T io.Closer] struct {
	idle time.Duration
	open func(context.Context) (T, error)

	mu    sync.Mutex
	v     T
	ok    bool
	users int
	timer *time.Timer
	// gen counts closes, so a timer armed before a close does not close a later open.
	gen int
}

func newLazy[T io.Closer](idle time.Duration, open func(context.Context) (T, error)) *lazy[T] {
	return &lazy[T]{idle: idle, open: open}
}

func (l *lazy[T]) with(ctx context.Context, fn func(T) error) error {
	l.mu.Lock()
	if !l.ok {
		v, err := l.open(ctx)
		if err != nil {
			l.mu.Unlock()
			return err
		}
		l.v, l.ok = v, true
	}
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.users++
	v := l.v
	l.mu.Unlock()

	defer func() {
		l.mu.Lock()
		l.users--
		if l.users == 0 && l.ok && l.idle > 0 {
			gen := l.gen
			l.timer = time.AfterFunc(l.idle, func() { l.closeIdle(gen) })
		}
		l.mu.Unlock()
	}()
	return fn(v)
}

func (l *lazy[T]) closeIdle(gen int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if gen != l.gen || l.users > 0 || !l.ok {
		return
	}
	l.closeLocked()
}

func (l *lazy[T]) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ok {
		return nil
	}
	return l.closeLocked()
}

func (l *lazy[T]) closeLocked() error {
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	err := l.v.Close()
	var zero T
	l.v, l.ok = zero, false
	l.gen++
	return err
}
