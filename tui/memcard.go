package tui

import (
	"context"
	"os"
	"path/filepath"

	"github.com/exocortex/exocortex/memory"
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
