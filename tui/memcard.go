package tui

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/service"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
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
	// Embedder names the embedder the store runs with, and Vectors whether
	// its vectors are on ("on", or why not), as the memory service's owner
	// says ("": no owner answered, and the store was read from disk).
	Embedder, Vectors string
}

// serviceWait bounds how long the card waits for the memory service's owner.
const serviceWait = time.Second

// memoryFacts reads the facts of the store: from the memory service's owner
// when one answers (the session's memory plugin, another terminal), which
// also names the embedder in use; else from disk without the lock, writing
// nothing (memory.PeekStore). The card never becomes the store's owner:
// no writer is opened for a count.
func (e *Engine) memoryFacts(ctx context.Context) (MemoryFacts, error) {
	dir := e.cfg.MemoryDir
	fi, err := os.Stat(filepath.Join(dir, memory.JournalFile))
	if err != nil {
		return MemoryFacts{}, nil
	}
	if f, ok := ownerFacts(ctx, dir); ok {
		return f, nil
	}
	p, err := memory.PeekStore(ctx, dir)
	if err != nil {
		return MemoryFacts{}, err
	}
	return MemoryFacts{Exists: true, Records: p.Records, JournalBytes: fi.Size(), VectorModel: p.VectorModel}, nil
}

// ownerFacts asks the owner serving the store in dir for its stats, as a
// client only (service.Connect would make this process the owner when none
// runs). ok is false when no owner answers within serviceWait.
func ownerFacts(ctx context.Context, dir string) (MemoryFacts, bool) {
	sock := service.SocketPath(dir)
	if _, err := os.Stat(sock); err != nil {
		return MemoryFacts{}, false
	}
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return MemoryFacts{}, false
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, serviceWait)
	defer cancel()
	st, err := service.Remote{C: exocortexv1.NewMemoryServiceClient(conn)}.Stats(ctx)
	if err != nil {
		return MemoryFacts{}, false
	}
	return MemoryFacts{Exists: true, Records: st.Records, JournalBytes: st.JournalBytes, VectorModel: st.VectorModel,
		Embedder: st.Embedder, Vectors: st.Vectors}, true
}
