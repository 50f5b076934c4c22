package library

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/extensions/memorytools"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestThroughProtocol(t *testing.T) {
	home := t.TempDir()
	client := sdktest.Serve(t, sdk.Plugin{Name: "cognition", Extensions: []sdk.Extension{Catalog{Home: func() (string, error) { return home, nil }}}})
	call := func() []*exocortexv1.PromptBlock {
		resp, err := client.MessageLoopPromptsBefore(t.Context(), &exocortexv1.MessageLoopPromptsBeforeRequest{Call: sdktest.Call("library_catalog")})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetPromptBlocks()
	}
	if b := call(); len(b) != 0 {
		t.Fatalf("no catalog: %v", b)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cat := memorytools.Catalog{Version: memorytools.CatalogVersion, Documents: []memorytools.CatalogEntry{
		{Key: "a", Title: "HNSW paper", Tags: []string{"search", "papers"}, Words: 9000, Changed: t0},
		{Key: "b", Title: "BM25 notes", Tags: []string{"search"}, Words: 1000, Changed: t0.Add(time.Hour)},
	}}
	b, _ := json.Marshal(cat)
	path := filepath.Join(home, memorytools.CatalogFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	blocks := call()
	if len(blocks) != 1 {
		t.Fatalf("blocks %v", blocks)
	}
	got := blocks[0].GetContent()
	for _, want := range []string{"2 documents (10000 words)", "search (2), papers (1)", `Recent: "BM25 notes", "HNSW paper"`, "library_search"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q: %s", want, got)
		}
	}
	// A broken catalog is skipped, not guessed at.
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b := call(); len(b) != 0 {
		t.Fatalf("broken catalog: %v", b)
	}
}
