// Package memorytools provides the memory and library tools over the memory
// store in $EXOCORTEX_HOME/memory (package memory):
//
//   - memory_save, memory_retrieve, memory_delete: ECHOMEN's keyed memories in the
//     main area, answering with ECHOMEN's exact strings ("Memory item 'KEY' saved
//     successfully.");
//   - memory_load, memory_forget: Agent Zero's similarity search and
//     similarity delete, with a threshold and an optional filter expression;
//   - library_add, library_search, library_list: documents in the isolated library
//     area (a memory search that does not name the library never sees them, and
//     library_search sees nothing else), with a catalog of the documents kept in
//     $EXOCORTEX_HOME/library/catalog.json for the library catalog extension.
//
// # Who holds the store
//
// Only one process can open a store (memory.Open locks its journal). The plugin
// serving these tools opens it when it starts (Warm, from sdk.Plugin.Start, so the
// embedder's load and the store's open overlap the host's start-up and the first
// model call instead of delaying the first prompt's recall), or else on first use,
// and keeps it while tools use it; after
// tools.memory.idle_close without a call (default one minute) it closes it,
// leaving the indexes cleanly closed and the lock free, and opens it again on the
// next call. While the plugin holds it, `exocortex memory ...` is refused with an
// error naming this process; while the CLI holds it, the tools answer with that
// same error, and work again once the CLI is done. Extensions that need the store
// belong in the same plugin process and should share its Stores.
package memorytools

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/extensions/internal/catalog"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/embed"
	"github.com/exocortex/exocortex/sdk"
)

// Where the tools keep their data, inside the home directory.
const (
	StoreDir    = "memory"
	CatalogFile = catalog.File
)

// Stores opens the memory store lazily and closes it when idle. Its methods are
// safe for concurrent use.
type Stores struct {
	load   func() (config.Tools, error)
	logger *slog.Logger

	mu    sync.Mutex
	store *memory.Store
	busy  int
	timer *time.Timer
	gen   int
	// The embedder outlives the store's idle closes: loading the word vectors
	// or probing the model is done once per spec.
	embSpec string
	emb     memory.Embedder
	// changed is the embedding model change the last open found, until a
	// call reports it to the host (ReportEmbeddingChange).
	changed *memory.EmbeddingChange
	// written is what the stores this process closed when idle had written
	// (Store.WrittenIDs), handed to the next open (memory.Options.Written).
	written []string
}

// New returns a Stores whose configuration (Home, Memory.IdleClose) comes from
// load, called on every use (the built-in plugins pass a once-loaded config).
// logger receives the store's notices (nil: the plugin's stderr in the form the
// host reads).
func New(load func() (config.Tools, error), logger *slog.Logger) *Stores {
	if logger == nil {
		logger = slog.New(sdk.NewHostLogHandler(os.Stderr, "memory-tools"))
	}
	return &Stores{load: load, logger: logger}
}

// Fixed is a load function returning cfg.
func Fixed(cfg config.Tools) func() (config.Tools, error) {
	return func() (config.Tools, error) { return cfg, nil }
}

// Home returns the configured home directory.
func (st *Stores) Home() (string, error) {
	cfg, err := st.load()
	if err != nil {
		return "", fmt.Errorf("loading the configuration: %w", err)
	}
	if cfg.Home == "" {
		return "", fmt.Errorf("the Exocortex home directory is unknown: set %s", config.HomeEnv)
	}
	return cfg.Home, nil
}

// Use runs fn with the open store, opening it first if needed. The store stays
// open while any fn runs; the idle timer starts when the last one returns.
func (st *Stores) Use(ctx context.Context, fn func(*memory.Store) error) error {
	cfg, err := st.load()
	if err != nil {
		return fmt.Errorf("loading the configuration: %w", err)
	}
	home, err := st.Home()
	if err != nil {
		return err
	}
	st.mu.Lock()
	if st.timer != nil {
		st.timer.Stop()
		st.timer = nil
	}
	if st.store == nil {
		opts := memory.Options{Logger: st.logger, Written: st.written}
		if spec := cfg.Memory.WithDefaults().Embedder; spec == st.embSpec && spec != "" {
			opts.Embedder = st.emb
		} else {
			// The embedder (140 MB of word vectors, or a probe of the
			// model) loads while Open reads the store. Open calls this in a
			// goroutine and returns only after it returned, while st.mu is
			// still held here: it sets st's fields without taking it.
			opts.LoadEmbedder = func() (memory.Embedder, error) { return st.loadEmbedder(ctx, spec, home), nil }
		}
		s, err := memory.Open(ctx, filepath.Join(home, StoreDir), opts)
		if err != nil {
			st.mu.Unlock()
			return err
		}
		st.store = s
		if c, ok := s.EmbeddingChange(); ok {
			st.changed = &c
		}
	}
	s := st.store
	st.busy++
	st.mu.Unlock()

	defer func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		st.busy--
		idle := time.Duration(cfg.Memory.WithDefaults().IdleClose)
		if st.busy == 0 && idle > 0 && st.store != nil {
			st.gen++
			gen := st.gen
			st.timer = time.AfterFunc(idle, func() { st.closeIdle(gen) })
		}
	}()
	return fn(s)
}

// Warm loads the configured embedder and opens the store, if it exists, ahead
// of the first call: the plugin's Start runs it while the host starts up, and
// the hooks and tools that need the store wait for it (st.mu) instead of doing
// the work themselves. The idle timer starts when it is done, as after any use.
// A failure is logged at Info and left for the first call to meet again: the
// store held by another process (the operator's CLI), a damaged configuration.
func (st *Stores) Warm(ctx context.Context) {
	start := time.Now()
	home, err := st.Home()
	if err != nil {
		st.logger.Info("memory-tools: not opening the memory store at start", "err", err)
		return
	}
	if _, err := os.Stat(filepath.Join(home, StoreDir, memory.JournalFile)); err != nil {
		// No store yet: load the embedder only (a store is created by the
		// first write, not by starting the plugin).
		cfg, err := st.load()
		if err != nil {
			return
		}
		st.mu.Lock()
		st.embedder(ctx, cfg.Memory.WithDefaults().Embedder, home)
		st.mu.Unlock()
		st.logger.Debug("memory-tools: embedder loaded at start", "took", time.Since(start))
		return
	}
	var opened time.Duration
	if err := st.Use(ctx, func(s *memory.Store) error {
		opened = time.Since(start)
		prime(ctx, s)
		return nil
	}); err != nil {
		st.logger.Info("memory-tools: not opening the memory store at start (the first call tries again)", "err", err)
		return
	}
	st.logger.Debug("memory-tools: memory store opened at start", "open", opened, "took", time.Since(start))
}

// WarmQuery is the search Warm runs once the store is open, so that what a
// store builds on its first search is built before the first prompt's recall.
const WarmQuery = "memory"

// prime does ahead of the first prompt what its memory hooks would otherwise
// do on the prompt's path, on a large store: the census the memory catalog
// shows (the store keeps it until a write), and a first search (the structures
// a store builds on its first search, and the first touch of the mapped
// vector graphs and the full-text segments). Its results are dropped; a
// search has no side effects (no access is recorded).
func prime(ctx context.Context, s *memory.Store) {
	s.Census(ctx, memory.Filter{})
	_, _ = s.Search(ctx, WarmQuery, memory.SearchOptions{Limit: 1})
}

// embedder returns the embedder spec names, made once per spec. One that cannot
// be made (Ollama not running, a damaged vectors file) leaves the store on BM25
// alone, saying why; the records written meanwhile get their vectors on the next
// open with a working embedder. st.mu is held.
func (st *Stores) embedder(ctx context.Context, spec, home string) memory.Embedder {
	if spec == st.embSpec && st.embSpec != "" {
		return st.emb
	}
	return st.loadEmbedder(ctx, spec, home)
}

// loadEmbedder makes the embedder spec names and keeps it for the next opens;
// one that cannot be made is not kept. st.mu is held (by the caller, or by the
// Use whose memory.Open calls it).
func (st *Stores) loadEmbedder(ctx context.Context, spec, home string) memory.Embedder {
	e, err := embed.Open(ctx, embed.Spec(spec), home)
	if err != nil {
		st.logger.Warn("memory-tools: the embedder is not available, recall runs on BM25 alone", "embedder", spec, "err", err)
		return nil // not cached: the next open tries again
	}
	st.embSpec = spec
	st.emb = nil
	if e != nil {
		st.emb = e
	}
	return st.emb
}

// ReportEmbeddingChange reports through c, to the host, that the store's last
// open found its vectors made with another embedding model and re-embedded
// every record (the host fires embedding_model_changed). The change is
// reported once: a report that fails (the call's host runs no agent) is kept
// for the next call. Call it after Use, from a tool or a hook.
func (st *Stores) ReportEmbeddingChange(ctx context.Context, c *sdk.Call) {
	st.mu.Lock()
	ch := st.changed
	st.changed = nil
	dir := ""
	if st.store != nil {
		dir = st.store.Dir()
	}
	st.mu.Unlock()
	if ch == nil {
		return
	}
	if dir == "" {
		if home, err := st.Home(); err == nil {
			dir = filepath.Join(home, StoreDir)
		}
	}
	if err := c.ReportEmbeddingModelChanged(ctx, dir, ch.OldModel, ch.OldDims, ch.NewModel, ch.NewDims); err != nil {
		st.logger.Debug("memory-tools: the embedding model change is not reported yet", "store", dir, "err", err)
		st.mu.Lock()
		if st.changed == nil {
			st.changed = ch
		}
		st.mu.Unlock()
	}
}

// Embedder says which embedder the store is opened with ("" before the first
// open).
func (st *Stores) Embedder() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.embSpec == "" {
		return ""
	}
	return embed.Describe(st.emb)
}

// closeIdle closes the store if nothing used it since the timer of generation
// gen was set.
func (st *Stores) closeIdle(gen int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if gen != st.gen || st.busy > 0 || st.store == nil {
		return
	}
	// What this process wrote stays in view of the next open's Written (the
	// classifier tags the session's records at monologue_end, which may come
	// after a long model call has let the store go idle).
	st.written = st.store.WrittenIDs()
	if err := st.store.Close(); err != nil {
		st.logger.Warn("memory-tools: closing the idle memory store", "err", err)
	}
	st.store = nil
	st.timer = nil
}

// IsOpen reports whether the store is open now.
func (st *Stores) IsOpen() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.store != nil
}

// Close closes the store if it is open (waiting for no one: call it when no tool
// runs).
func (st *Stores) Close() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.timer != nil {
		st.timer.Stop()
		st.timer = nil
	}
	st.gen++
	if st.store == nil {
		return nil
	}
	err := st.store.Close()
	st.store = nil
	return err
}
