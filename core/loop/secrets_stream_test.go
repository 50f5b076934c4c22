package loop

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
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
			store, err := secrets.Load(secrets.Config{"TOK": {Env: "STREAM_TOK"}}, secrets.LoadOptions{Env: func(k string) (string, bool) {
				return leakValue, k == "STREAM_TOK"
			}})
			if err != nil {
				t.Fatal(err)
			}
			dir, work := t.TempDir(), t.TempDir()
			installPlugin(t, dir, "leakplugin", bin)
			h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}}, Secrets: store,
				PluginEnv: []string{"LEAK_VALUE=" + leakValue, "LEAK_SEEN=" + filepath.Join(work, "seen.jsonl"), "LEAK_ARGS=" + filepath.Join(work, "args.jsonl")}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(h.Close)
			reply := toolCallReply("response", map[string]any{"text": "the token is " + leakValue + ", encoded " + b64 + " done"})
			reply.ChunkSize = size
			srv, err := scripted.NewServer(scripted.Script{Source: t.Name(), Replies: []scripted.Reply{reply}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			c, _ := llm.New(srv.URL())
			rec := &recorder{}
			a, err := New(Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), Observer: rec.observe, MaxIterations: 2})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Monologue(context.Background(), "stream it"); err != nil {
				t.Fatal(err)
			}
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
