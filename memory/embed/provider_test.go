package embed_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/embed"
)

// TestProviderFeedsTheStore: embeddings from either protocol's server reach
// the memory store's vector index, and vector search finds the record whose
// text the query repeats.
func TestProviderFeedsTheStore(t *testing.T) {
	ctx := context.Background()
	facts := []memory.Input{
		{ID: "deploy", Text: "deploy the service with make release"},
		{ID: "coffee", Text: "the operator drinks coffee black"},
		{ID: "theme", Text: "the editor theme is solarized dark"},
	}
	for _, name := range llm.Providers() {
		t.Run(name, func(t *testing.T) {
			srv, err := scripted.Start(name, scripted.Script{EmbedDims: 64, Replies: []scripted.Reply{{Content: "unused"}}})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			p, err := llm.Open(llm.Config{Provider: name, BaseURL: srv.URL(), MaxRetryDelay: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			e, err := embed.NewProvider(ctx, embed.ProviderConfig{Server: p, Model: srv.EmbedModel(), BatchSize: 2})
			if err != nil {
				t.Fatal(err)
			}
			if e.Dimensions() != 64 || e.ModelID() != name+":"+srv.EmbedModel()+":64d" {
				t.Fatalf("dims %d, id %q", e.Dimensions(), e.ModelID())
			}
			vs, err := e.Embed(ctx, []string{"a", "b", "c"})
			if err != nil || len(vs) != 3 {
				t.Fatalf("embed: %d vectors, %v", len(vs), err)
			}
			for i, v := range vs {
				var ss float64
				for _, x := range v {
					ss += float64(x) * float64(x)
				}
				if math.Abs(ss-1) > 1e-4 {
					t.Errorf("vector %d has squared norm %v, want 1", i, ss)
				}
			}
			s, err := memory.Open(ctx, t.TempDir(), memory.Options{Embedder: e})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.PutBatch(ctx, facts, memory.Source{Source: "test"}); err != nil {
				t.Fatal(err)
			}
			res, err := s.Search(ctx, "the operator drinks coffee black", memory.SearchOptions{Mode: memory.ModeVector, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			if res.Notice != "" || len(res.Hits) == 0 || res.Hits[0].Record.ID != "coffee" || res.Hits[0].Similarity < 0.999 {
				t.Fatalf("vector search: notice %q, hits %+v", res.Notice, res.Hits)
			}
		})
	}
}

func TestProviderEmbedderErrors(t *testing.T) {
	srv, err := scripted.NewOpenAIServer(scripted.Script{Replies: []scripted.Reply{{Content: "unused"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = embed.NewProvider(context.Background(), embed.ProviderConfig{Server: p, Model: "nomic-embed-text"})
	if !errors.Is(err, llm.ErrModelNotFound) || !strings.Contains(err.Error(), "scripted-embed") {
		t.Errorf("unknown model: %v", err)
	}
	if _, err := embed.NewProvider(context.Background(), embed.ProviderConfig{Server: p}); err == nil || !strings.Contains(err.Error(), "embed_model") {
		t.Errorf("no model: %v", err)
	}
}

// TestOpenSpecOpenAI: "openai:MODEL" reaches the server config.yaml names.
func TestOpenSpecOpenAI(t *testing.T) {
	srv, err := scripted.NewOpenAIServer(scripted.Script{EmbedDims: 32, APIKey: "sk-embed", Replies: []scripted.Reply{{Content: "unused"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("openai:\n  base_url: "+srv.URL()+"\n  api_key_env: EMBED_TEST_KEY\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("EMBED_TEST_KEY", "sk-embed")
	e, err := embed.Open(context.Background(), embed.Spec("openai:"+srv.EmbedModel()), home)
	if err != nil {
		t.Fatal(err)
	}
	if e.Dimensions() != 32 || e.ModelID() != "openai:scripted-embed:32d" {
		t.Fatalf("embedder %s, %d dims", e.ModelID(), e.Dimensions())
	}
	t.Setenv("EMBED_TEST_KEY", "")
	if _, err := embed.Open(context.Background(), embed.Spec("openai:"+srv.EmbedModel()), home); !errors.Is(err, llm.ErrUnauthorized) || !strings.Contains(err.Error(), "EMBED_TEST_KEY") {
		t.Fatalf("without the key: %v", err)
	}
}
