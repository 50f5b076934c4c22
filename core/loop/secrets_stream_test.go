package loop

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/sdk/sdktest"
	"github.com/exocortex/exocortex/secrets"
)

// TestSecretsStreamedChunksMasked: the scripted model streams a reply holding
// the value, raw and base64-encoded, in chunks of every size from 3 to 9 runes,
// so the value straddles chunks at different offsets. No event carries the
// value, and the llm_chunk events put together (what the terminal's live view
// and run --json show) hold the placeholder where the value was.
func TestSecretsStreamedChunksMasked(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte(leakValue))
	bin := sdktest.BuildPlugin(t, "./testdata/leakplugin") // it has the response tool
	for size := 3; size <= 9; size++ {
		t.Run(fmt.Sprintf("chunk_size=%d", size), func(t *testing.T) {
			dir, work := t.TempDir(), t.TempDir()
			installPlugin(t, dir, "leakplugin", bin)
			h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}}, Secrets: tokStore(t),
				PluginEnv: []string{"LEAK_VALUE=" + leakValue, "LEAK_SEEN=" + filepath.Join(work, "seen.jsonl"), "LEAK_ARGS=" + filepath.Join(work, "args.jsonl")}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(h.Close)
			reply := toolCallReply("response", map[string]any{"text": "the token is " + leakValue + ", encoded " + b64 + " done"})
			reply.ChunkSize = size
			rec := runScripted(t, h, reply)
			var chunks strings.Builder
			n := 0
			rec.mu.Lock()
			defer rec.mu.Unlock()
			for _, e := range rec.events {
				b, _ := json.Marshal(e)
				for _, form := range []string{leakValue, b64} {
					if strings.Contains(string(b), form) || strings.Contains(e.Text, form) {
						t.Errorf("event %s holds the secret's form %q: %s", e.Type, form, b)
					}
				}
				if e.Type == EventLLMChunk {
					chunks.WriteString(e.Text)
					n++
				}
			}
			all := chunks.String()
			if n < 2 {
				t.Fatalf("%d llm_chunk events, want the reply streamed in several", n)
			}
			for _, form := range []string{leakValue, b64} {
				if strings.Contains(all, form) {
					t.Errorf("the llm_chunk events together hold %q: %s", form, all)
				}
			}
			if got := strings.Count(all, secrets.Placeholder("TOK")); got != 2 {
				t.Errorf("the llm_chunk events together hold the placeholder %d times, want 2 (raw and base64): %s", got, all)
			}
		})
	}
}

// TestSecretsStreamedToolOutputMasked: a tool reports its partial output in
// pieces that split the value (testdata/toolhooks' stream tool, through
// Host.ReportToolOutput). No tool_output event, no tool_output_update request
// (the plugin's log of what it was sent) and nothing the tool was answered
// holds the value; the placeholder is shown where it was.
func TestSecretsStreamedToolOutputMasked(t *testing.T) {
	bin := sdktest.BuildPlugin(t, "./testdata/toolhooks")
	for _, cut := range []int{1, 5, len(leakValue) / 2, len(leakValue) - 1} {
		t.Run(fmt.Sprintf("cut=%d", cut), func(t *testing.T) {
			dir, work := t.TempDir(), t.TempDir()
			installPlugin(t, dir, "toolhooks", bin)
			logPath := filepath.Join(work, "calls.jsonl")
			pieces := "out: " + leakValue[:cut] + "|" + leakValue[cut:] + " end|!"
			h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}}, Secrets: tokStore(t),
				PluginEnv: []string{"TOOLHOOKS_LOG=" + logPath, "TOOLHOOKS_DIR=" + work, "TOOLHOOKS_PIECES=" + pieces}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(h.Close)
			rec := runScripted(t, h, toolCallReply("stream", map[string]any{}), toolCallReply("response", map[string]any{"text": "done"}))
			rec.mu.Lock()
			defer rec.mu.Unlock()
			var last string
			for _, e := range rec.events {
				b, _ := json.Marshal(e)
				if strings.Contains(string(b), leakValue) {
					t.Errorf("event %s holds the value: %s", e.Type, b)
				}
				if e.Type == EventToolOutput {
					last = e.Text
				}
			}
			// (toolhooks' display shows "secret" as "******": the placeholder's
			// name survives)
			if !strings.Contains(last, "(TOK) end!") {
				t.Errorf("the last tool_output shows %q, want the placeholder where the value was", last)
			}
			b, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			var deltas strings.Builder
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var call map[string]any
				_ = json.Unmarshal([]byte(line), &call)
				if d, ok := call["delta"].(string); ok && call["hook"] == "tool_output_update" {
					deltas.WriteString(d)
				}
			}
			if strings.Contains(string(b), leakValue) || strings.Contains(deltas.String(), leakValue) {
				t.Errorf("tool_output_update was sent the value (deltas together %q)", deltas.String())
			}
		})
	}
}

// tokStore is a secret store with TOK = leakValue.
func tokStore(t *testing.T) *secrets.Store {
	t.Helper()
	store, err := secrets.Load(secrets.Config{"TOK": {Env: "STREAM_TOK"}}, secrets.LoadOptions{Env: func(k string) (string, bool) {
		return leakValue, k == "STREAM_TOK"
	}})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// runScripted runs one monologue on h against a scripted model with replies
// and returns the events it emitted.
func runScripted(t *testing.T, h *host.Host, replies ...scripted.Reply) *recorder {
	t.Helper()
	srv, err := scripted.NewServer(scripted.Script{Source: t.Name(), Replies: replies})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, _ := llm.New(srv.URL())
	rec := &recorder{}
	a, err := New(Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), Observer: rec.observe, MaxIterations: len(replies) + 1})
	if err != nil {
		t.Fatal(err)
	}
	h.Services().SetEmbeddingSink(a.ReportEmbeddingChange)
	if _, err := a.Monologue(context.Background(), "stream it"); err != nil {
		t.Fatal(err)
	}
	return rec
}
