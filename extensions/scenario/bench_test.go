package scenario

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/extensions/builtin"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// BenchmarkSuiteIteration runs monologues of two iterations (a code_execution
// call, then the answer) with every built-in plugin loaded as a real process,
// and reports the hook time of one iteration: the wall time of the hooks fired
// in it (the loop's hook_done events: context, state, gRPC, checks, state apply,
// with calls made at once counted once), p50 and p99, and the same without the per-chunk
// response_stream_chunk calls, in sessions of sessionLength monologues.
// Monologue-level hooks (the user message's
// hist_add_before, monologue_start, monologue_end) are reported per monologue.
//
// Sub-benchmark "suite" runs the real extensions; "suite-one-call-each" the same
// without batches (every extension in its own round trip); "null" runs nullsuite, the
// same declarations with methods that do nothing, so that the difference is the
// extensions' own work and the rest the cost of dispatching the calls on this
// machine. They run in one go, so the load of the machine is comparable.
//
//	go test ./extensions/scenario -run '^$' -bench SuiteIteration -benchtime 100x
func BenchmarkSuiteIteration(b *testing.B) {
	exe := sdktest.BuildPlugin(b, "github.com/exocortex/exocortex/cmd/exocortex")
	null := sdktest.BuildPlugin(b, "./testdata/nullsuite")
	real := func(p string) []string { return []string{exe, "plugin", "serve", p} }
	for _, tc := range []struct {
		name       string
		command    func(plugin string) []string
		noBatching bool
	}{
		{"suite", real, false},
		{"suite-one-call-each", real, true},
		{"null", func(p string) []string {
			if p == "agent-tools" { // the tools the script calls
				return []string{exe, "plugin", "serve", p}
			}
			return []string{null, p}
		}, false},
	} {
		b.Run(tc.name, func(b *testing.B) { benchSuite(b, tc.command, tc.noBatching) })
	}
}

// sessionLength is how many monologues the benchmark runs in one session before
// it starts another: a session of 10 requests ends with 40 messages of history,
// and the hook time of an iteration does not depend on b.N.
const sessionLength = 10

func benchSuite(b *testing.B, command func(string) []string, noBatching bool) {
	home, proj := b.TempDir(), b.TempDir()
	cfg := fmt.Sprintf("tools:\n  editor:\n    roots: [%q]\n  code_execution:\n    work_dir: %q\n", proj, proj)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Setenv("EXOCORTEX_HOME", home)
	b.Setenv("EXOCORTEX_PROJECT", proj)
	var cands []discover.Candidate
	for _, name := range builtin.Names() {
		cmd := command(name)
		cands = append(cands, discover.Candidate{Name: name, Path: strings.Join(cmd, " "), Command: cmd,
			WorkDir: proj, Dir: discover.Dir{Path: "(built in)", Source: discover.Builtin}})
	}
	h, err := host.New(context.Background(), host.Options{Builtins: cands, PluginEnv: pluginSettings(b, home, proj)})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	n := b.N + 1
	var replies []scripted.Reply
	for i := 0; i < n; i++ {
		replies = append(replies,
			scripted.Reply{Content: fmt.Sprintf(`{"thoughts":["list the files to answer"],"headline":"Listing files","tool_name":"code_execution","tool_args":{"runtime":"terminal","code":"echo %d"}}`, i)},
			scripted.Reply{Content: fmt.Sprintf(`{"thoughts":["done"],"headline":"Answering","tool_name":"response","tool_args":{"text":"The shell printed %d."}}`, i)})
	}
	srv, err := scripted.NewServer(scripted.Script{Replies: replies})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	c, _ := llm.New(srv.URL())
	type key struct{ mono, it int }
	perIt := map[key]time.Duration{}
	perItNoChunk := map[key]time.Duration{}
	perMono := map[int]time.Duration{}
	byHook := map[string]time.Duration{}
	byExt := map[string]time.Duration{}
	mono, trips := 0, 0
	observe := func(ev loop.Event) {
		d := time.Duration(ev.DurationUS) * time.Microsecond
		switch {
		case ev.Type == loop.EventHook:
			byExt[ev.Extension] += d // overlaps where extensions ran at once
			return
		case ev.Type != loop.EventHookDone:
			return
		}
		// A hook firing's wall time, its calls at once counted once.
		byHook[ev.Hook] += d
		if ev.Iteration == 0 || ev.Hook == "monologue_end" {
			perMono[mono] += d
			return
		}
		k := key{mono, ev.Iteration}
		perIt[k] += d
		trips += ev.RoundTrips
		if ev.Hook != "response_stream_chunk" {
			perItNoChunk[k] += d
		}
	}
	newSession := func() *loop.Agent {
		a, err := loop.New(loop.Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), MaxIterations: 2,
			NoBatching: noBatching, Observer: observe})
		if err != nil {
			b.Fatal(err)
		}
		return a
	}
	a := newSession()
	// One warm-up monologue: plugins start lazily and caches fill.
	if _, err := a.Monologue(context.Background(), "What does the shell print?"); err != nil {
		b.Fatal(err)
	}
	clear(perIt)
	clear(perItNoChunk)
	clear(perMono)
	clear(byHook)
	clear(byExt)
	trips = 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		mono = i + 1
		if i%sessionLength == sessionLength-1 {
			a = newSession()
		}
		if _, err := a.Monologue(context.Background(), "What does the shell print?"); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	q := func(m map[key]time.Duration) (p50, p99 time.Duration) {
		var ds []time.Duration
		for _, d := range m {
			ds = append(ds, d)
		}
		slices.Sort(ds)
		if len(ds) == 0 {
			return 0, 0
		}
		return ds[len(ds)/2], ds[len(ds)*99/100]
	}
	p50, p99 := q(perIt)
	b.ReportMetric(float64(p50.Microseconds()), "iter-hook-p50-µs")
	b.ReportMetric(float64(p99.Microseconds()), "iter-hook-p99-µs")
	if len(perIt) > 0 {
		b.ReportMetric(float64(trips)/float64(len(perIt)), "round-trips/iter")
	}
	p50nc, _ := q(perItNoChunk)
	b.ReportMetric(float64(p50nc.Microseconds()), "iter-hook-p50-no-chunks-µs")
	var ms []time.Duration
	for _, d := range perMono {
		ms = append(ms, d)
	}
	slices.Sort(ms)
	if len(ms) > 0 {
		b.ReportMetric(float64(ms[len(ms)/2].Microseconds()), "monologue-hooks-p50-µs")
	}
	if testing.Verbose() {
		var hooks []string
		for hk := range byHook {
			hooks = append(hooks, hk)
		}
		sort.Slice(hooks, func(i, j int) bool { return byHook[hooks[i]] > byHook[hooks[j]] })
		var sb strings.Builder
		for _, hk := range hooks {
			fmt.Fprintf(&sb, "%-28s %8.0f µs/monologue\n", hk, float64(byHook[hk].Microseconds())/float64(b.N))
		}
		b.Logf("hook time by hook:\n%s", sb.String())
		var exts []string
		for e := range byExt {
			exts = append(exts, e)
		}
		sort.Slice(exts, func(i, j int) bool { return byExt[exts[i]] > byExt[exts[j]] })
		sb.Reset()
		for _, e := range exts[:min(12, len(exts))] {
			fmt.Fprintf(&sb, "%-28s %8.0f µs/monologue\n", e, float64(byExt[e].Microseconds())/float64(b.N))
		}
		b.Logf("most expensive extensions (a batch's round trip counts for its first; calls at once overlap):\n%s", sb.String())
	}
}
