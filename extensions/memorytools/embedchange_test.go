package memorytools

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/embed"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// gloveFile is the offline word-vector file: $EXOCORTEX_GLOVE or the
// checkout's data/glove-100d.bin (make test puts it there).
func gloveFile(t *testing.T) string {
	t.Helper()
	p := os.Getenv(embed.GloVeEnv)
	if p == "" {
		p = filepath.Join("..", "..", "data", embed.GloVeFile)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no GloVe vectors at %s (scripts/fetch-glove.sh makes them): %v", p, err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// TestEmbeddingModelChangedInASession opens real stores in a real plugin
// process (testdata/embedwatch: the memory tools and an extension watching
// embedding_model_changed) through monologues: a store built with the GloVe
// vectors and opened with the scripted Ollama server's embedding model is
// re-embedded, and embedding_model_changed fires once, after the tool call
// that opened it, with the old and new models and dimensions and the store's
// path; a store opened with the model that built it fires nothing.
func TestEmbeddingModelChangedInASession(t *testing.T) {
	bin := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/extensions/memorytools/testdata/embedwatch")
	tests := []struct {
		name  string
		built func(t *testing.T, ollama memory.Embedder) memory.Embedder // the embedder the store was built with
		want  bool
	}{
		{"glove, then ollama", func(t *testing.T, _ memory.Embedder) memory.Embedder {
			g, err := embed.LoadGloVe(gloveFile(t), embed.GloVeConfig{})
			if err != nil {
				t.Fatal(err)
			}
			return g
		}, true},
		{"ollama, then ollama", func(_ *testing.T, ollama memory.Embedder) memory.Embedder { return ollama }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := scripted.NewServer(scripted.Script{Source: t.Name(), Replies: []scripted.Reply{
				toolReply("memory_load", map[string]any{"query": "deploy staging", "threshold": 0.0}),
				toolReply("memory_load", map[string]any{"query": "deploy staging again", "threshold": 0.0}),
				toolReply("response", map[string]any{"text": "done"}),
			}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			t.Setenv("OLLAMA_HOST", srv.URL()) // the fixture's Ollama embedder
			ollama, err := embed.NewOllama(t.Context(), embed.OllamaConfig{Model: srv.EmbedModel()})
			if err != nil {
				t.Fatal(err)
			}
			home := t.TempDir()
			built := tc.built(t, ollama)
			s, err := memory.Open(t.Context(), filepath.Join(home, StoreDir), memory.Options{Embedder: built, Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.MemorySave(t.Context(), "deploy", "Deploy to staging with make deploy-staging.", nil, memory.Source{Source: "test"}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			logPath := filepath.Join(t.TempDir(), "calls.jsonl")
			plugins := t.TempDir()
			if err := os.MkdirAll(filepath.Join(plugins, "embedwatch"), 0o755); err != nil {
				t.Fatal(err)
			}
			pj, _ := json.Marshal(discover.Manifest{Command: []string{bin}})
			if err := os.WriteFile(filepath.Join(plugins, "embedwatch", "plugin.json"), pj, 0o644); err != nil {
				t.Fatal(err)
			}
			h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: plugins, Source: discover.User}},
				PluginEnv: []string{"EMBEDWATCH_LOG=" + logPath, "EXOCORTEX_HOME=" + home,
					"EXOCORTEX_EMBEDDER=ollama:" + srv.EmbedModel(), "OLLAMA_HOST=" + srv.URL()}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(h.Close)
			client, err := llm.New(srv.URL())
			if err != nil {
				t.Fatal(err)
			}
			a, err := loop.New(loop.Options{Host: h, LLM: client, Prompts: prompts.NewLoader(), Model: srv.Model(), MaxIterations: 6})
			if err != nil {
				t.Fatal(err)
			}
			h.Services().SetEmbeddingSink(a.ReportEmbeddingChange)
			if res, err := a.Monologue(t.Context(), "What do you remember about deploying?"); err != nil || res.Response != "done" {
				t.Fatalf("monologue: %v, %+v", err, res)
			}

			var calls []map[string]any
			f, err := os.Open(logPath)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			var order []string
			for sc.Scan() {
				var c map[string]any
				if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
					t.Fatal(err)
				}
				if e, _ := c["error"].(string); e != "" {
					t.Fatalf("%s failed: %s", c["tool"], e)
				}
				calls = append(calls, c)
				order = append(order, strings.TrimSpace(c["hook"].(string)+" "+str(c["tool"])))
			}
			wantOrder := []string{"tool_execute_after memory_load", "tool_execute_after memory_load", "tool_execute_after response"}
			if tc.want {
				// Fired after the tool call that opened the store, before
				// tool_execute_after (core/loop's place for it).
				wantOrder = []string{"embedding_model_changed", "tool_execute_after memory_load", "tool_execute_after memory_load", "tool_execute_after response"}
			}
			if strings.Join(order, ", ") != strings.Join(wantOrder, ", ") {
				t.Fatalf("hooks fired: %s\nwant: %s", strings.Join(order, ", "), strings.Join(wantOrder, ", "))
			}
			if !tc.want {
				return
			}
			ch := calls[0]
			if ch["old"] != built.ModelID() || ch["old_dims"] != float64(built.Dimensions()) ||
				ch["new"] != ollama.ModelID() || ch["new_dims"] != float64(ollama.Dimensions()) ||
				ch["store"] != filepath.Join(home, StoreDir) {
				t.Errorf("embedding_model_changed got %v, want %s (%d) -> %s (%d) in %s", ch, built.ModelID(), built.Dimensions(),
					ollama.ModelID(), ollama.Dimensions(), filepath.Join(home, StoreDir))
			}
			// The re-embedded store answers with the new model's vectors.
			if !strings.Contains(calls[1]["result"].(string), "make deploy-staging") {
				t.Errorf("memory_load found %q", calls[1]["result"])
			}
		})
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func toolReply(tool string, args map[string]any) scripted.Reply {
	b, _ := json.Marshal(map[string]any{"thoughts": []string{"go"}, "headline": tool, "tool_name": tool, "tool_args": args})
	return scripted.Reply{Content: string(b)}
}
