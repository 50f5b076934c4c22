package tui

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/service"
)

// TestMemorySummaryCountsTheHeldStore: while another process holds the store
// (the memory plugin) and its snapshot on disk is older than its journal,
// the card counts what the store holds, not the snapshot's header; with no
// vectors built it names the configured embedder as configured only.
func TestMemorySummaryCountsTheHeldStore(t *testing.T) {
	t.Setenv(config.EnvEmbedder, "none")
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "memory")
	quiet := memory.Options{Logger: slog.New(slog.DiscardHandler)}
	s, err := memory.Open(ctx, dir, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, memory.Input{Text: "saved before the snapshot"}, memory.Source{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	held, err := memory.Open(ctx, dir, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	for i := range 16 {
		if _, err := held.Put(ctx, memory.Input{Text: fmt.Sprintf("note %d on subject %d", i, i*3)}, memory.Source{}); err != nil {
			t.Fatal(err)
		}
	}
	if n, _, _ := memory.SnapshotCount(dir); n != 1 {
		t.Fatalf("the snapshot header counts %d; the test wants it stale at 1", n)
	}
	got := NewEngine(Config{MemoryDir: dir}).MemorySummary(ctx)
	hst, err := held.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d records · ", hst.Records)
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "no vectors on disk yet · embedder none (BM25 only) (configured)") {
		t.Errorf("MemorySummary = %q, want it to start %q and name the embedder as configured", got, want)
	}
}

// TestMemorySummaryAsksTheOwner: with the memory service's owner running
// (here this test process), the card takes the count and the embedder from
// it, as a client.
func TestMemorySummaryAsksTheOwner(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "memory")
	quiet := slog.New(slog.DiscardHandler)
	c, err := service.Connect(ctx, service.Config{Dir: dir, Logger: quiet, Describe: func(memory.Embedder) string { return "OWNER-EMBEDDER" }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 3 {
		if _, err := (service.Remote{C: c}).Put(ctx, memory.Input{Text: fmt.Sprintf("owned note %d", i)}, memory.Source{}); err != nil {
			t.Fatal(err)
		}
	}
	got := NewEngine(Config{MemoryDir: dir}).MemorySummary(ctx)
	if !strings.HasPrefix(got, "3 records · ") || !strings.Contains(got, "embedder OWNER-EMBEDDER") {
		t.Errorf("MemorySummary = %q, want the owner's count and embedder", got)
	}
}
