package sleep

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/embed"
)

// testNow is the fixed clock of the tests.
var testNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// makeStore creates a store in dir holding ins (written as of testNow-1h).
func makeStore(t testing.TB, dir string, e memory.Embedder, ins []memory.Input) {
	t.Helper()
	ctx := context.Background()
	s, err := memory.Open(ctx, dir, memory.Options{Embedder: e, Logger: quiet(), Now: func() time.Time { return testNow.Add(-time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	for start := 0; start < len(ins); start += 1000 {
		if _, err := s.PutBatch(ctx, ins[start:min(start+1000, len(ins))], memory.Source{Session: "gen", Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// openRead opens a store to look at it, and closes it at the end of the test.
func openRead(t testing.TB, dir string, e memory.Embedder) *memory.Store {
	t.Helper()
	s, err := memory.Open(context.Background(), dir, memory.Options{Embedder: e, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// storeHash opens a store just long enough to read its state hash.
func storeHash(t testing.TB, dir string) string {
	t.Helper()
	s, err := memory.Open(context.Background(), dir, memory.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return s.Hash()
}

// gloveEmbedder loads the offline GloVe embedder from data/glove-100d.bin (or
// EXOCORTEX_GLOVE), once; nil when the file is not there.
var gloveEmbedder = sync.OnceValue(func() memory.Embedder {
	path := os.Getenv("EXOCORTEX_GLOVE")
	if path == "" {
		path = filepath.Join("..", "data", "glove-100d.bin")
	}
	g, err := embed.LoadGloVe(path, embed.GloVeConfig{})
	if err != nil {
		return nil
	}
	return g
})

func needGloVe(t testing.TB) memory.Embedder {
	t.Helper()
	g := gloveEmbedder()
	if g == nil {
		t.Skip("skipped: data/glove-100d.bin is missing (scripts/fetch-glove.sh makes it; EXOCORTEX_GLOVE points elsewhere)")
	}
	return g
}

// copyDir copies a store directory for a second run on identical data.
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	if _, err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
}

// cfgFor is a run over dir with the test clock.
func cfgFor(dir string, e memory.Embedder) Config {
	return Config{StoreDir: dir, Store: memory.Options{Embedder: e}, Now: testNow, Logger: quiet()}
}
