package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/embed"
)

// MemoryFacts is what the welcome card says of the memory: read from the
// store itself, never from the configuration alone.
type MemoryFacts struct {
	// Exists is false before anything was saved (no journal).
	Exists       bool
	Records      int
	JournalBytes int64
	// VectorModel is the embedding model of the vectors on disk ("": none
	// built yet).
	VectorModel string
}

// memoryFacts reads the facts of the store. The memory plugin holds the
// store while the session runs, so the store is read without its lock and
// nothing is written (memory.PeekStore): no second writer is opened. When
// the memory service lands, this is the one place to ask it instead.
func (e *Engine) memoryFacts(ctx context.Context) (MemoryFacts, error) {
	dir := e.cfg.MemoryDir
	fi, err := os.Stat(filepath.Join(dir, memory.JournalFile))
	if err != nil {
		return MemoryFacts{}, nil
	}
	p, err := memory.PeekStore(ctx, dir)
	if err != nil {
		return MemoryFacts{}, err
	}
	return MemoryFacts{Exists: true, Records: p.Records, JournalBytes: fi.Size(), VectorModel: p.VectorModel}, nil
}

// MemorySummary is the welcome card's line about the memory: its records and
// journal as the store holds them, and the model its vectors were built
// with. Only where the store has no vectors yet does it name the configured
// embedder, saying so.
func (e *Engine) MemorySummary(ctx context.Context) string {
	f, err := e.memoryFacts(ctx)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	configured := func() string {
		home := filepath.Dir(e.cfg.MemoryDir)
		return embed.DescribeSpec(embed.ConfiguredSpec(configuredEmbedder(home)), home)
	}
	if !f.Exists {
		return "empty (nothing saved yet) · embedder " + configured() + " (configured)"
	}
	vectors := "vectors " + f.VectorModel
	if f.VectorModel == "" {
		vectors = "no vectors on disk yet · embedder " + configured() + " (configured)"
	}
	return fmt.Sprintf("%d records · %s journal · %s", f.Records, bytesize(f.JournalBytes), vectors)
}
