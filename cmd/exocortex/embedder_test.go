package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/extensions/memorytools"
	"github.com/exocortex/exocortex/memory"
)

func scriptedEmbedServer(t *testing.T, model string, dims int) *scripted.Server {
	t.Helper()
	srv, err := scripted.NewServer(scripted.Script{Source: "embed-" + model, Model: "chat-" + model, EmbedModel: model, EmbedDims: dims})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestOllamaEmbedderEndToEnd runs `embedder: ollama:MODEL` against the scripted
// server's /api/embed: the configured embedder reaches the CLI and the
// memory-tools store, records get the model's vectors, `memory stats` names
// it, and changing the model re-embeds every record from the journal.
func TestOllamaEmbedderEndToEnd(t *testing.T) {
	home := t.TempDir()
	t.Setenv("EXOCORTEX_HOME", home)
	t.Setenv(GloVeEnv, "")
	t.Setenv(config.EnvEmbedder, "")
	a := scriptedEmbedServer(t, "embed-a", 48)
	t.Setenv("OLLAMA_HOST", a.URL())
	ctx := context.Background()
	cfg := config.Tools{Home: home, Memory: config.MemoryTools{Embedder: "ollama:embed-a", IdleClose: -1}}

	// The memory-tools plugin's store (what the tools, recall and memorize use).
	st := memorytools.New(memorytools.Fixed(cfg), nil)
	err := st.Use(ctx, func(s *memory.Store) error {
		for _, txt := range []string{"the deploy script runs migrations", "the user likes dark themes", "the cat is called Pebble"} {
			if _, err := s.Put(ctx, memory.Input{Text: txt}, memory.Source{Source: "test"}); err != nil {
				return err
			}
		}
		res, err := s.Search(ctx, "what is the cat called", memory.SearchOptions{Mode: memory.ModeVector, Limit: 1})
		if err != nil {
			return err
		}
		if len(res.Hits) != 1 || !strings.Contains(res.Hits[0].Record.Text, "Pebble") {
			t.Errorf("vector search through the scripted model: %+v", res.Hits)
		}
		if st := s.Stats(); st.VectorCount != 3 || !strings.HasPrefix(st.VectorModel, "ollama:embed-a:") {
			t.Errorf("the tools' store has vectors %d of %q; want 3 of ollama:embed-a", st.VectorCount, st.VectorModel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Embedder(); got != "ollama embed-a" {
		t.Errorf("Stores.Embedder() = %q", got)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	stats := func(embedder string) memory.Stats {
		t.Helper()
		t.Setenv(config.EnvEmbedder, embedder)
		var out memory.Stats
		if err := json.Unmarshal([]byte(mustRun(t, "", "stats", "--json")), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if s := stats("ollama:embed-a"); s.Embedder != "ollama embed-a" || s.VectorCount != 3 || s.Records != 3 {
		t.Errorf("stats with the same model: %+v", s)
	}
	// Another model (another server, as after `ollama pull`): every record is
	// embedded again from the journal, with the new model's length.
	b := scriptedEmbedServer(t, "embed-b", 24)
	t.Setenv("OLLAMA_HOST", b.URL())
	s := stats("ollama:embed-b")
	if s.Embedder != "ollama embed-b" || s.VectorCount != 3 || !strings.HasPrefix(s.VectorModel, "ollama:embed-b:") || !strings.HasSuffix(s.VectorModel, ":24d") {
		t.Errorf("stats after the model changed: %+v", s)
	}
	text := mustRun(t, "", "stats")
	if !strings.Contains(text, "embedder:   ollama embed-b") {
		t.Errorf("memory stats does not name the embedder:\n%s", text)
	}
	// Unset, the default is auto, and there are no word vectors here.
	if s := stats(""); s.Embedder != "none (BM25 only)" {
		t.Errorf("auto without word vectors: %+v", s.Embedder)
	}
}
