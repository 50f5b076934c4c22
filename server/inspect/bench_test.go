package inspect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/replay"
)

// benchRecording records a session of turns turns, each of two iterations
// with hooks hook calls and a request whose history grows by two messages a
// turn (as a long session's does), and returns its directory.
func benchRecording(b *testing.B, turns, hooks int) string {
	b.Helper()
	dir := b.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		b.Fatal(err)
	}
	r, err := replay.NewRecorder(file)
	if err != nil {
		b.Fatal(err)
	}
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	tick := func() time.Time { at = at.Add(time.Millisecond); return at }
	var history []loop.RequestMessage
	for n := 1; n <= turns; n++ {
		r.Observe(loop.Event{Type: loop.EventMonologueStart, Time: tick(), Text: fmt.Sprintf("question %d", n)})
		history = append(history, loop.RequestMessage{Role: "user", Part: loop.PartHistory, Content: fmt.Sprintf("question %d: %s", n, strings.Repeat("words ", 40))})
		for it := 1; it <= 2; it++ {
			for h := range hooks {
				o := int32(h)
				r.Observe(loop.Event{Type: loop.EventHook, Time: tick(), Iteration: it, Hook: fmt.Sprintf("hook_%d", h/3), Extension: fmt.Sprintf("ext_%d", h),
					Plugin: "p", Order: &o, DurationUS: 300, Reads: []string{"k1"}, Writes: []string{fmt.Sprintf("k%d", h%5)}})
				if h%3 == 2 {
					r.Observe(loop.Event{Type: loop.EventHookDone, Time: tick(), Iteration: it, Hook: fmt.Sprintf("hook_%d", h/3), DurationUS: 900, RoundTrips: 1})
				}
			}
			msgs := append([]loop.RequestMessage{{Role: "system", Part: loop.PartSystem, Content: strings.Repeat("the system prompt ", 300)}}, history...)
			r.Observe(loop.Event{Type: loop.EventBudget, Time: tick(), Iteration: it, Budget: &loop.Budget{Window: 8192, Reserve: 1024, Limit: 7168, Tokens: 4000, System: 1300, Blocks: 200, History: 2500, TokensPerByte: 0.25}})
			r.Observe(loop.Event{Type: loop.EventRequest, Time: tick(), Iteration: it, Request: &loop.Request{System: "sys",
				Blocks:   []loop.RequestBlock{{Hook: "message_loop_prompts_after", Extension: "recall", Title: RecallTitle, Content: "Memories:\n- [main] a fact\n  why: bm25 #1"}},
				Messages: msgs}})
			r.Observe(loop.Event{Type: loop.EventLLMReply, Time: tick(), Iteration: it, Text: "a reply"})
		}
		history = append(history, loop.RequestMessage{Role: "assistant", Part: loop.PartHistory, Content: "an answer " + strings.Repeat("more ", 40)})
		r.Observe(loop.Event{Type: loop.EventMonologueEnd, Time: tick()})
	}
	if err := r.Close(); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkWiringLastTurn: the wiring of a long session's last turn, read
// cold (the recording loaded, as on the first request or after a new turn)
// and cached (a followed view asking again). INSPECT_BENCH_TURNS sets the
// session's length (default 200 turns, 400 requests, 30 hook calls each).
func BenchmarkWiringLastTurn(b *testing.B) {
	turns := 200
	if v := os.Getenv("INSPECT_BENCH_TURNS"); v != "" {
		fmt.Sscan(v, &turns)
	}
	dir := benchRecording(b, turns, 30)
	for _, mode := range []string{"cold", "cached", "saw-cached"} {
		b.Run(mode, func(b *testing.B) {
			c := New(Options{Dir: dir})
			if mode != "cold" {
				if _, _, err := c.loadTurn(context.Background(), "s", ""); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				if mode == "cold" {
					c.cache = cache{}
				}
				rec, t, err := c.loadTurn(context.Background(), "s", "")
				if err != nil {
					b.Fatal(err)
				}
				if mode == "saw-cached" {
					_ = Saw("s", rec, t)
				} else if w := Wiring("s", rec, t, nil); len(w.Hooks) == 0 {
					b.Fatal("no hook rows")
				}
			}
		})
	}
}
