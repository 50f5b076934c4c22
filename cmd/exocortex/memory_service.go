package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/service"
)

// The memory commands reach the store through the home's memory service
// (memory/service): while a session (or any process) serves it they are its
// clients, and none is refused. With no owner running, the command itself
// becomes a short-lived owner: it opens the store with its --embedder, serves
// it while it runs (a session started meanwhile is its client) and closes it
// at the end. As a client the owner's embedder answers: --embedder chooses
// only for an owner this command starts.

// connect reaches the service of the store --dir names.
func (f *memoryFlags) connect(ctx context.Context, cmd *cobra.Command) (*service.Client, error) {
	dir, err := f.storeDir()
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts := memory.Options{Logger: log, LoadEmbedder: func() (memory.Embedder, error) {
		return f.newEmbedder(context.WithoutCancel(ctx))
	}}
	if f.embedder != "" {
		// An embedder asked for by name is checked (and loaded) first, so a
		// wrong one is an error, not a notice.
		e, err := f.newEmbedder(ctx)
		if err != nil {
			return nil, err
		}
		opts.Embedder, opts.LoadEmbedder = e, nil
	}
	shared, err := f.sharedJournal(log)
	if err != nil {
		return nil, err
	}
	opts.OpenJournal = shared
	return service.Connect(ctx, service.Config{Dir: dir, Logger: log, Options: opts, Describe: describeEmbedder})
}

// sharedJournal is the shared journal memory.journal names (nil: the store's
// own file). A store given by --dir is the home's only when it is the home's
// memory directory: another directory keeps its own journal unless
// $EXOCORTEX_NATS_URL names one.
func (f *memoryFlags) sharedJournal(log *slog.Logger) (func(context.Context) (memory.Journal, error), error) {
	setting := os.Getenv("EXOCORTEX_NATS_URL")
	if setting == "" && f.dir == "" {
		if _, cfg, err := f.loadConfig(); err == nil {
			setting = cfg.Memory.Journal
		}
	}
	return sharedJournal(setting, log)
}

// withStore connects to the memory service, runs fn and closes the
// connection (and the store, when this command was its owner), reporting a
// close error.
func (f *memoryFlags) withStore(cmd *cobra.Command, fn func(s service.Remote) error) (err error) {
	c, err := f.connect(cmd.Context(), cmd)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}()
	return fn(service.Remote{C: c})
}

// embedderOf names the owner's embedder for people ("" if it cannot say).
func embedderOf(ctx context.Context, s service.Remote) string {
	st, err := s.Stats(ctx)
	if err != nil {
		return ""
	}
	return st.Embedder
}
