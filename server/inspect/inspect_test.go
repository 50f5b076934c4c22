package inspect

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/extensions/recall"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/replay"
	"github.com/exocortex/exocortex/server/openapi"
)

func TestOpsDescribeEveryRoute(t *testing.T) {
	s := New(Options{Dir: t.TempDir(), Plugins: nilHost{}})
	if err := openapi.Check(s.Routes(), Ops()); err != nil {
		t.Fatal(err)
	}
}

// TestParseRecallReadsWhatRecallRenders: the memories of a block rendered by
// the recall extension itself come back with their area, text and why.
func TestParseRecallReadsWhatRecallRenders(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cands []*exocortexv1.MemoryCandidate
		want  []Recalled
	}{
		{"none kept", []*exocortexv1.MemoryCandidate{{Id: "a", Area: "main", Text: "x", Why: "y", Dropped: true}}, nil},
		{"one", []*exocortexv1.MemoryCandidate{{Id: "a", Area: "main", Text: "the runbook is in the wiki", Why: "bm25 #1"}},
			[]Recalled{{Area: "main", Text: "the runbook is in the wiki", Why: "bm25 #1"}}},
		{"two, one over lines with a bracket", []*exocortexv1.MemoryCandidate{
			{Id: "a", Area: "solutions", Text: "line one\nline two ] - [x]", Why: "vector #2; ×0.90 for age 3d"},
			{Id: "b", Area: "main", Text: "second", Why: "bm25 #3; mentions ops (working memory)"},
		}, []Recalled{
			{Area: "solutions", Text: "line one\nline two ] - [x]", Why: "vector #2; ×0.90 for age 3d"},
			{Area: "main", Text: "second", Why: "bm25 #3; mentions ops (working memory)"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, _ := recall.Render(&exocortexv1.MemoryCandidates{Candidates: tc.cands}, 5, 2000, nil)
			if got := ParseRecall(text); !slices.Equal(got, tc.want) {
				t.Fatalf("ParseRecall(%q)\n= %+v\nwant %+v", text, got, tc.want)
			}
		})
	}
}

// TestSplitFillsTheWindow: the parts of a split add up to the window and
// the recall blocks are taken out of the blocks, never more than they are.
func TestSplitFillsTheWindow(t *testing.T) {
	rb := loop.RequestBlock{Title: RecallTitle, Content: string(make([]byte, 300))}
	for _, tc := range []struct {
		name       string
		b          loop.Budget
		blocks     []loop.RequestBlock
		wantRecall int
	}{
		{"no recall", loop.Budget{Window: 4096, Reserve: 512, Limit: 3584, Tokens: 1000, System: 600, Blocks: 100, Summary: 50, History: 250, TokensPerByte: 0.25}, nil, 0},
		{"recall of 300 bytes", loop.Budget{Window: 4096, Reserve: 512, Limit: 3584, Tokens: 1200, System: 600, Blocks: 300, Summary: 0, History: 300, TokensPerByte: 0.25},
			[]loop.RequestBlock{{Title: "OTHER", Content: "x"}, rb}, 4 + 75 + 2},
		{"recall larger than the blocks", loop.Budget{Window: 4096, Reserve: 512, Limit: 3584, Tokens: 920, System: 600, Blocks: 20, History: 300, TokensPerByte: 0.25},
			[]loop.RequestBlock{rb}, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := SplitOf(1, tc.b, tc.blocks)
			if s.Recall != tc.wantRecall {
				t.Errorf("recall %d, want %d", s.Recall, tc.wantRecall)
			}
			if sum := s.Fixed + s.Blocks + s.Recall + s.History + s.Free + s.Reserve; sum != tc.b.Window {
				t.Errorf("the parts add up to %d, not the window %d: %+v", sum, tc.b.Window, s)
			}
			if s.Blocks < 0 || s.History != tc.b.Summary+tc.b.History {
				t.Errorf("split %+v", s)
			}
		})
	}
}

// TestWiringGroupsFirings: a recording written by the replay package's
// Recorder is read back into hook rows: two firings of one hook in a row
// stay two rows, a firing whose hook_done is missing is closed by the next
// hook, offsets run from the turn's start, keys name who read and wrote
// them, and a call refused because its plugin is quarantined names it.
func TestWiringGroupsFirings(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := replay.NewRecorder(file)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	o := func(n int32) *int32 { return &n }
	for _, e := range []loop.Event{
		{Type: loop.EventMonologueStart, Time: at(0), Text: "hi"},
		{Type: loop.EventHook, Time: at(5), Hook: "hist_add_before", Extension: "a", Plugin: "p", Order: o(1), DurationUS: 2000, Writes: []string{"k"}},
		{Type: loop.EventHookDone, Time: at(6), Hook: "hist_add_before", DurationUS: 4000, RoundTrips: 1},
		{Type: loop.EventHook, Time: at(10), Iteration: 1, Hook: "tool_execute_before", Extension: "b", Plugin: "q", Order: o(2), DurationUS: 1000, Reads: []string{"k"}},
		{Type: loop.EventHookDone, Time: at(10), Iteration: 1, Hook: "tool_execute_before", DurationUS: 1000, RoundTrips: 1},
		{Type: loop.EventHook, Time: at(20), Iteration: 1, Hook: "tool_execute_before", Extension: "b", Plugin: "q", Order: o(2), DurationUS: 3000, Reads: []string{"k"}},
		{Type: loop.EventHookDone, Time: at(20), Iteration: 1, Hook: "tool_execute_before", DurationUS: 3000, RoundTrips: 1},
		{Type: loop.EventHook, Time: at(30), Iteration: 1, Hook: "tool_execute_after", Extension: "c", Plugin: "z", DurationUS: 10,
			Error: "plugin z: quarantined after repeated crashes; it is retried when its file changes on disk", ErrorKind: "unavailable"},
		{Type: loop.EventHook, Time: at(40), Iteration: 1, Hook: "message_loop_end", Extension: "a", Plugin: "p", DurationUS: 500, Writes: []string{"k"}},
		{Type: loop.EventHookDone, Time: at(40), Iteration: 1, Hook: "message_loop_end", DurationUS: 600, RoundTrips: 1},
		{Type: loop.EventSignal, Time: at(41), Iteration: 1, Signal: "nudge", Text: "go on"},
		{Type: loop.EventMonologueEnd, Time: at(50)},
	} {
		r.Observe(e)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	rec, turn, err := New(Options{Dir: dir}).loadTurn(context.Background(), "s", "")
	if err != nil {
		t.Fatal(err)
	}
	w := Wiring("s", rec, turn, nil)
	type row struct {
		hook       string
		start, end int64
		calls      int
	}
	var got []row
	for _, h := range w.Hooks {
		got = append(got, row{h.Hook, h.StartUS, h.EndUS, len(h.Calls)})
	}
	want := []row{
		{"hist_add_before", 2000, 6000, 1},
		{"tool_execute_before", 9000, 10000, 1},
		{"tool_execute_before", 17000, 20000, 1},
		{"tool_execute_after", 29990, 30000, 1},
		{"message_loop_end", 39400, 40000, 1},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("rows\n%+v\nwant\n%+v", got, want)
	}
	if len(w.Keys) != 1 || !slices.Equal(w.Keys[0].WrittenBy, []string{"p/a"}) || !slices.Equal(w.Keys[0].ReadBy, []string{"q/b"}) {
		t.Errorf("keys %+v", w.Keys)
	}
	if len(w.Failures) != 1 || w.Failures[0].Plugin != "z" || !slices.Equal(w.Quarantined, []string{"z"}) || !w.Hooks[3].Failed {
		t.Errorf("failures %+v, quarantined %v", w.Failures, w.Quarantined)
	}
	if len(w.Signals) != 1 || w.Signals[0].Signal != "nudge" || !w.Turn.Ended || w.Turn.TookUS != 50000 {
		t.Errorf("signals %+v, turn %+v", w.Signals, w.Turn)
	}
}

// nilHost is a host with no plugin, for the route list alone.
type nilHost struct{}

func (nilHost) Status() []host.PluginStatus          { return nil }
func (nilHost) FailedPlugins() []*host.StartError    { return nil }
func (nilHost) Reload(context.Context, string) error { return nil }
func (nilHost) ApplyPending() bool                   { return false }
func (nilHost) Pending() []string                    { return nil }

// TestCacheSeesAppendedTurns: a recording read once is read again when the
// session records another turn, and kept while nothing changed.
func TestCacheSeesAppendedTurns(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c := New(Options{Dir: dir})
	for i, want := range []int{1, 2} {
		r, err := replay.NewRecorder(file)
		if err != nil {
			t.Fatal(err)
		}
		r.Observe(loop.Event{Type: loop.EventMonologueStart, Time: time.Now(), Text: "turn"})
		r.Observe(loop.Event{Type: loop.EventMonologueEnd, Time: time.Now()})
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		rec, turn, err := c.loadTurn(context.Background(), "s", "")
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.Turns) != want || turn.N != want {
			t.Fatalf("round %d: %d turns, the last %d; want %d", i, len(rec.Turns), turn.N, want)
		}
		again, _, _ := c.loadTurn(context.Background(), "s", "")
		if again != rec {
			t.Errorf("round %d: an unchanged recording was read again", i)
		}
	}
}
