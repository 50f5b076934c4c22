package main

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/embed"
	"github.com/exocortex/exocortex/memory/service"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// homeMemory is how an agent's host reaches the memory service of home for its
// plugins (host.Options.Memory): this process becomes the owner of
// home/memory when no other process holds it, and is a client of the owner
// otherwise. As owner it opens the store with the embedder spec names
// (tools.memory.embedder), loaded only once the lock is held; an embedder that
// cannot be made (Ollama not running, a damaged vectors file) leaves the store
// on BM25 alone, saying why, as the memory-tools plugin did when it held the
// store itself.
func homeMemory(home, spec string, log *slog.Logger) host.MemoryConnector {
	return homeMemoryOn(home, spec, "", log)
}

// homeMemoryOn is homeMemory with the memory.journal setting (empty: the
// store's own journal file).
func homeMemoryOn(home, spec, journal string, log *slog.Logger) host.MemoryConnector {
	return func(ctx context.Context) (exocortexv1.MemoryServiceClient, error) {
		c, err := connectHomeMemoryOn(ctx, home, spec, journal, log)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// connectHomeMemory is homeMemory's connection, for a command that closes it
// itself (`exocortex mcp`).
func connectHomeMemory(ctx context.Context, home, spec string, log *slog.Logger) (*service.Client, error) {
	return connectHomeMemoryOn(ctx, home, spec, "", log)
}

// connectHomeMemoryOn is connectHomeMemory with the memory.journal setting.
func connectHomeMemoryOn(ctx context.Context, home, spec, journal string, log *slog.Logger) (*service.Client, error) {
	shared, err := sharedJournal(journal, log)
	if err != nil {
		return nil, err
	}
	load := func() (memory.Embedder, error) {
		e, err := embed.Open(context.WithoutCancel(ctx), embed.Spec(spec), home)
		if err != nil {
			log.Warn("the embedder is not available, recall runs on BM25 alone", "embedder", spec, "err", err)
			return nil, nil
		}
		if e == nil {
			return nil, nil
		}
		return e, nil
	}
	return service.Connect(ctx, service.Config{
		Dir:      filepath.Join(home, "memory"),
		Options:  memory.Options{Logger: log, LoadEmbedder: load, OpenJournal: shared},
		Describe: describeEmbedder,
		Logger:   log,
	})
}
