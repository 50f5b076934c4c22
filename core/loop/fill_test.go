package loop

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestPromptTokensAreTheRequestSent: the prompt size the host tells an
// extension at message_loop_prompts_after (what the context watchdog turns
// into "the context window is N% full") is that of the request the model
// gets, less only what the hook's later extensions add: a block that is
// already in the history unchanged (pinned at an earlier iteration, so not
// sent again) counts once, and blocks over their share of the window count
// as much as is sent of them.
func TestPromptTokensAreTheRequestSent(t *testing.T) {
	tests := []struct {
		name   string
		bytes  int
		numCtx int
	}{
		{"a block sent once, then pinned in the history", 6000, 8192},
		{"a block larger than the blocks' share, cut to fit", 60000, 8192},
		{"a small block in a small window", 400, 2048},
	}
	bin := sdktest.BuildPlugin(t, "./testdata/fillplugin")
	fillRE := regexp.MustCompile(`prompt_tokens=(\d+) num_ctx=(\d+)`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writePlugin(t, dir, plugin{name: "tools", tools: []string{"echo"}})
			installPlugin(t, dir, "fill", bin)
			h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}},
				PluginEnv: []string{fmt.Sprintf("FILL_BYTES=%d", tt.bytes)}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(h.Close)
			var replies []scripted.Reply
			for i := 1; i <= 3; i++ {
				replies = append(replies, bigEcho(i, 300))
			}
			srv, err := scripted.NewServer(scripted.Script{Replies: replies})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			c, _ := llm.New(srv.URL())
			rec := &recorder{}
			a, err := New(Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), MaxIterations: 3,
				NumCtx: tt.numCtx, Observer: rec.observe})
			if err != nil {
				t.Fatal(err)
			}
			var stop *StopError
			if _, err := a.Monologue(context.Background(), "list the notes"); err != nil && !errors.As(err, &stop) {
				t.Fatal(err)
			}
			var sent []int
			for _, e := range rec.events {
				if e.Type == EventBudget {
					sent = append(sent, e.Budget.Tokens)
				}
			}
			reqs := srv.Requests()
			if len(reqs) != 3 || len(sent) != 3 {
				t.Fatalf("%d requests, %d budget events; want 3 of each", len(reqs), len(sent))
			}
			// What the FILL block itself adds: its title and text, the markers
			// and at most one message of its own.
			const fillBlock = 40
			for i, req := range reqs {
				var told []string
				for _, m := range req.Messages {
					told = append(told, fillRE.FindAllString(m.Content, -1)...)
				}
				if len(told) == 0 {
					t.Errorf("request %d has no FILL block", i+1)
					continue
				}
				m := fillRE.FindStringSubmatch(told[len(told)-1])
				n, _ := strconv.Atoi(m[1])
				if ctx, _ := strconv.Atoi(m[2]); ctx != tt.numCtx {
					t.Errorf("request %d: num_ctx told %d, want %d", i+1, ctx, tt.numCtx)
				}
				// Over: at most the two blocks' messages' overhead, counted
				// before it is known whether each has a block.
				if n > sent[i]+2*messageOverhead || sent[i]-n > fillBlock {
					t.Errorf("request %d: the extension was told prompt_tokens=%d; the request sent has %d tokens (want at most %d more, or %d fewer: what the FILL block adds)",
						i+1, n, sent[i], 2*messageOverhead, fillBlock)
				}
			}
		})
	}
}
