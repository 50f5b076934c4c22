package loop

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// installPlugin makes plugin directory dir/name whose plugin.json runs command.
func installPlugin(t testing.TB, dir, name string, command ...string) {
	t.Helper()
	pj, _ := json.Marshal(discover.Manifest{Command: command})
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, "plugin.json"), pj, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runBatchPlugin runs one monologue (tool x, tool y, then the response tool)
// with testdata/batchplugin loaded, and returns the agent and its events.
func runBatchPlugin(t *testing.T, noBatching bool, env ...string) (*Agent, *recorder, error) {
	return runBatchPluginWith(t, host.Options{}, noBatching, env...)
}

// runBatchPluginWith is runBatchPlugin with host options (Dirs and PluginEnv
// are set here).
func runBatchPluginWith(t *testing.T, opts host.Options, noBatching bool, env ...string) (*Agent, *recorder, error) {
	t.Helper()
	bin := sdktest.BuildPlugin(t, "./testdata/batchplugin")
	dir := t.TempDir()
	installPlugin(t, dir, "batchy", bin)
	opts.Dirs, opts.PluginEnv = []discover.Dir{{Path: dir, Source: discover.User}}, env
	h, err := host.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	srv, err := scripted.NewServer(scripted.Script{Replies: []scripted.Reply{
		{Content: `{"thoughts":["x"],"headline":"x","tool_name":"x","tool_args":{"n":1}}`},
		{Content: `{"thoughts":["y"],"headline":"y","tool_name":"y","tool_args":{"n":2}}`},
		{Content: `{"thoughts":["done"],"headline":"done","tool_name":"response","tool_args":{"text":"done"}}`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, _ := llm.New(srv.URL())
	rec := &recorder{}
	a, err := New(Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), MaxIterations: 5,
		Observer: rec.observe, NoBatching: noBatching})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Monologue(context.Background(), "run the tools")
	return a, rec, err
}

// saw is what a test plugin's extension recorded in PREFIX+NAME (batch_ when no
// prefix is given).
func saw(t *testing.T, a *Agent, name string, prefix ...string) string {
	t.Helper()
	p := "batch_"
	if len(prefix) > 0 {
		p = prefix[0]
	}
	v, ok := a.State().Get(p + name)
	if !ok {
		return "(unset)"
	}
	var s wrapperspb.StringValue
	if err := v.UnmarshalTo(&s); err != nil {
		t.Fatal(err)
	}
	return s.GetValue()
}

// TestBatchesKeepOneCallEachSemantics runs the same monologue with and without
// batching: every extension must see and leave the same state, receive the same
// request fields, and fail the same way; only the round trips differ.
func TestBatchesKeepOneCallEachSemantics(t *testing.T) {
	type hookCall struct {
		Hook, Extension string
		Iteration       int
		Reads, Writes   []string
		Failed          bool
	}
	trace := func(rec *recorder) []hookCall {
		var out []hookCall
		for _, e := range rec.events {
			if e.Type == EventHook {
				out = append(out, hookCall{e.Hook, e.Extension, e.Iteration, e.Reads, e.Writes, e.Error != ""})
			}
		}
		return out
	}
	var traces [2][]hookCall
	for i, noBatching := range []bool{false, true} {
		a, rec, err := runBatchPlugin(t, noBatching)
		if err != nil {
			t.Fatalf("noBatching=%v: %v", noBatching, err)
		}
		traces[i] = trace(rec)
		for _, tc := range []struct{ key, want string }{
			{"read", "iteration 3"},           // b_read saw b_write's note of the same hook
			{"read_after_reset", "nothing"},   // and b_read_after_reset saw b_reset clear it
			{"last", "ran at iteration 3"},    // b_fail's error did not stop the hook
			{"p_count", "extras=1 history=0"}, // p_inject's block, and no history undeclared
			{"tools", "x"},                    // t_only_x ran for x only
		} {
			if got := saw(t, a, tc.key); !strings.HasPrefix(got, tc.want) {
				t.Errorf("noBatching=%v: batch_%s = %q, want %q…", noBatching, tc.key, got, tc.want)
			}
		}
		if got := saw(t, a, "p_history"); !strings.HasPrefix(got, "extras=0 history=") || strings.HasPrefix(got, "extras=0 history=0") {
			t.Errorf("noBatching=%v: p_history (declares ReadsHistory, not ReadsPrompt) saw %q, want the history and no extras", noBatching, got)
		}
		fails := rec.hook("b_fail")
		if len(fails) != 3 || !strings.Contains(fails[0].Error, "fails on purpose") {
			t.Errorf("noBatching=%v: b_fail events %+v, want 3 carrying its error", noBatching, fails)
		}
		for _, e := range rec.events {
			if e.Type == EventHook && noBatching && e.Batch != 0 {
				t.Fatalf("a batch without batching: %+v", e)
			}
		}
		if noBatching {
			continue
		}
		// Six message_loop_end extensions in one round trip: state only, so
		// the plugin never stops the batch early.
		if r := rec.hook("b_read")[0]; r.Batch != 6 || r.BatchIndex != 2 {
			t.Errorf("b_read ran as %d of a batch of %d, want 2 of 6", r.BatchIndex, r.Batch)
		}
		// p_inject's block ends its batch: p_count must see the extras the
		// host built from it, so it goes in a second round trip with p_history.
		if r := rec.hook("p_inject")[0]; r.Batch != 3 || r.BatchIndex != 1 {
			t.Errorf("p_inject ran as %d of a batch of %d, want 1 of 3", r.BatchIndex, r.Batch)
		}
		if r := rec.hook("p_count")[0]; r.Batch != 2 || r.BatchIndex != 1 {
			t.Errorf("p_count ran as %d of a batch of %d, want 1 of 2 (sent again after p_inject's block)", r.BatchIndex, r.Batch)
		}
	}
	if len(traces[0]) != len(traces[1]) {
		t.Fatalf("%d hook calls batched, %d one by one", len(traces[0]), len(traces[1]))
	}
	for i := range traces[0] {
		b, o := traces[0][i], traces[1][i]
		if b.Hook != o.Hook || b.Extension != o.Extension || b.Iteration != o.Iteration || b.Failed != o.Failed ||
			strings.Join(b.Reads, ",") != strings.Join(o.Reads, ",") || strings.Join(b.Writes, ",") != strings.Join(o.Writes, ",") {
			t.Errorf("call %d: batched %+v, one by one %+v", i, b, o)
		}
	}
}

// TestBatchCrash: a plugin that dies in the middle of a batch fails every
// extension of the batch (the host cannot know which ran), and the turn goes on.
func TestBatchCrash(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "crashed")
	_, rec, _ := runBatchPlugin(t, false, "BATCHPLUGIN_CRASH="+marker)
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the plugin did not crash: %v", err)
	}
	for _, name := range []string{"s_crash", "s_after_crash"} {
		evs := rec.hook(name)
		if len(evs) == 0 || !strings.Contains(evs[0].Error, "crashed") || !strings.Contains(evs[0].Error, "s_crash, s_after_crash") {
			t.Errorf("%s: first event %+v, want a crash naming the batch", name, evs)
		}
	}
	var later bool
	for _, e := range rec.events {
		if e.Type == EventHook && e.Iteration > 1 && e.Error == "" {
			later = true
		}
	}
	if !later {
		t.Error("no extension ran after the crash: the turn did not go on")
	}
}

// runPair runs a one-iteration monologue with pairplugin's alpha and beta loaded.
func runPair(t *testing.T, env ...string) (*Agent, *recorder) {
	t.Helper()
	bin := sdktest.BuildPlugin(t, "./testdata/pairplugin")
	dir := t.TempDir()
	for _, name := range []string{"alpha", "beta"} {
		installPlugin(t, dir, name, bin, name)
	}
	env = append(env, "PAIR_DIR="+t.TempDir())
	h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}}, PluginEnv: env})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	srv, err := scripted.NewServer(scripted.Script{Replies: []scripted.Reply{
		{Content: `{"thoughts":["done"],"headline":"done","tool_name":"response","tool_args":{}}`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, _ := llm.New(srv.URL())
	rec := &recorder{}
	a, err := New(Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), MaxIterations: 1, Observer: rec.observe})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Monologue(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	return a, rec
}

// TestIndependentExtensionsRunAtOnce: at message_loop_end (no response feeds
// the next request), beta's b2 shares nothing with alpha's a1, so it is called
// while a1 runs; b4 reads what a1 writes, so it waits for it. At
// message_loop_prompts_after, where blocks feed the next request, pb2 does not
// read the prompt so far and runs beside pa1, while pb3, which does, waits.
// Responses are still taken in order.
func TestIndependentExtensionsRunAtOnce(t *testing.T) {
	a, rec := runPair(t, "PAIR_WAIT=10s")
	for key, want := range map[string]string{
		"a1":  "together",     // b2 started while a1 waited for it
		"a3":  "note=from a1", // threaded in alpha's batch
		"b4":  "note=from a1", // waited for a1's write
		"b2":  "ran",
		"pa1": "together", // at message_loop_prompts_after, pb2 does not read the prompt so far
		"pb2": "extras=0", // so it was called at once, and sent none of it
		"pb3": "extras=1", // pb3 reads it: it waited for pa1's block
	} {
		if got := saw(t, a, key, "pair_"); got != want {
			t.Errorf("pair_%s = %q, want %q", key, got, want)
		}
	}
	var order []string
	for _, e := range rec.events {
		if e.Type == EventHook && e.Hook == "message_loop_end" {
			order = append(order, e.Extension)
		}
	}
	if strings.Join(order, " ") != "a1 b2 a3 b4" {
		t.Errorf("message_loop_end events in order %v, want a1 b2 a3 b4", order)
	}
}

// TestDeclaredFileKeepsOrder: when b2 declares reading the data file a1
// writes, b2 waits for a1 like any dependent extension.
func TestDeclaredFileKeepsOrder(t *testing.T) {
	a, _ := runPair(t, "PAIR_WAIT=300ms", "PAIR_FILE_DEP=1")
	if got := saw(t, a, "a1", "pair_"); got != "alone" {
		t.Errorf("pair_a1 = %q: b2 ran while a1 did, though it reads a1's file", got)
	}
}

// TestUndeclaredEffectsKeepOrder: in-order is the default. When b2 and pb2 do
// not declare effects_declared (their only effects are their declared keys and
// files), neither is called while alpha's a1 and pa1 run, though their
// declarations do not meet: an undeclared effect could.
func TestUndeclaredEffectsKeepOrder(t *testing.T) {
	a, _ := runPair(t, "PAIR_WAIT=300ms", "PAIR_UNDECLARED=1")
	for _, key := range []string{"a1", "pa1"} {
		if got := saw(t, a, key, "pair_"); got != "alone" {
			t.Errorf("pair_%s = %q: an extension without effects_declared ran beside it", key, got)
		}
	}
	if got := saw(t, a, "pb2", "pair_"); got != "extras=0" {
		t.Errorf("pair_pb2 = %q, want extras=0 (it does not read the prompt so far)", got)
	}
}

// TestDispatchDeadline: an extension that hangs in a batch on the Dispatch
// stream gets its own deadline, not the batch's: its context ends then, the miss
// is its error, and the plugin serves on.
func TestDispatchDeadline(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "hung")
	_, rec, err := runBatchPlugin(t, false, "BATCHPLUGIN_HANG="+marker)
	if err != nil {
		t.Fatal(err)
	}
	evs := rec.hook("s_hang")
	if len(evs) == 0 || !strings.Contains(evs[0].Error, "did not finish within its deadline of 500ms") {
		t.Fatalf("s_hang's first event: %+v, want its own deadline missed", evs)
	}
	if d := time.Duration(evs[0].DurationUS) * time.Microsecond; d > 5*time.Second {
		t.Errorf("s_hang held its batch %s: its own deadline is 500ms", d)
	}
	var after bool
	for _, e := range rec.hook("b_last") {
		if e.Iteration > 1 && e.Error == "" {
			after = true
		}
	}
	if !after {
		t.Error("the plugin did not serve after the miss")
	}
}

// TestDispatchCancel: the operator's cancel ends a call on the Dispatch stream
// at once, without killing the plugin; the next monologue uses a new stream.
func TestDispatchCancel(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "hung")
	bin := sdktest.BuildPlugin(t, "./testdata/batchplugin")
	dir := t.TempDir()
	installPlugin(t, dir, "batchy", bin)
	h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}},
		PluginEnv: []string{"BATCHPLUGIN_HANG=" + marker}, DefaultTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	reply := scripted.Reply{Content: `{"thoughts":["done"],"headline":"done","tool_name":"response","tool_args":{"text":"done"}}`}
	srv, err := scripted.NewServer(scripted.Script{Replies: []scripted.Reply{reply, reply}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, _ := llm.New(srv.URL())
	a, err := New(Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), MaxIterations: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for { // cancel once s_hang is hanging
			if _, err := os.Stat(marker); err == nil {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	if _, err := a.Monologue(ctx, "first"); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled monologue: %v, want context.Canceled", err)
	}
	if c := h.Status()[0].Calls; c != "dispatch" {
		t.Errorf("plugins status says calls %q for a Go SDK plugin, want dispatch", c)
	}
	crashes := h.Status()[0].Crashes
	if _, err := a.Monologue(t.Context(), "second"); err != nil {
		t.Fatalf("the monologue after a cancel: %v", err)
	}
	if st := h.Status()[0]; st.Crashes != crashes {
		t.Errorf("the cancel counted as a crash: %+v", st)
	}
}

// TestDispatchKillsAHungPlugin: an extension that ignores its context holds its
// batch until the batch's deadline (the sum of its extensions'); then the plugin
// is killed, every extension of the batch fails, and the plugin serves again
// after its restart.
func TestDispatchKillsAHungPlugin(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "hung")
	_, rec, err := runBatchPluginWith(t, host.Options{DefaultTimeout: 300 * time.Millisecond}, false, "BATCHPLUGIN_HANG_HARD="+marker)
	if err != nil {
		t.Fatal(err)
	}
	evs := rec.hook("s_hang")
	if len(evs) == 0 || !strings.Contains(evs[0].Error, "timed_out") || !strings.Contains(evs[0].Error, "the plugin was killed") {
		t.Fatalf("s_hang's first event: %+v, want the batch's deadline missed and the plugin killed", evs)
	}
	if e := rec.hook("s_after_crash"); len(e) == 0 || !strings.Contains(e[0].Error, "timed_out") {
		t.Errorf("s_after_crash, in the same batch: %+v, want it failed with the batch", e)
	}
	var after bool
	for _, e := range rec.hook("b_last") {
		if e.Iteration > 1 && e.Error == "" {
			after = true
		}
	}
	if !after {
		t.Error("the plugin did not serve again after it was killed")
	}
}
