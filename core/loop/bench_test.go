package loop

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/prompts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// benchHost starts n copies of benchplugin (ten extensions each).
func benchHost(b *testing.B, n int) *host.Host {
	b.Helper()
	return benchHostWith(b, sdktest.BuildPlugin(b, "./testdata/benchplugin"), n, nil)
}

// p50 reports the median of ds as a metric.
func reportQuantiles(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(ds[len(ds)*99/100].Nanoseconds())/1e3, "p99-µs")
}

func benchAgent(b *testing.B, h *host.Host, replies int) *Agent {
	b.Helper()
	rs := make([]scripted.Reply, replies)
	for i := range rs {
		rs[i] = scripted.Reply{Content: `{"tool_name":"nothing","tool_args":{}}`, ChunkSize: 1000}
	}
	srv, err := scripted.NewServer(scripted.Script{Replies: rs})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	c, _ := llm.New(srv.URL())
	a, err := New(Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), MaxIterations: 1, UnusableLimit: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// BenchmarkExtensionCall compares one message_loop_end extension call through the
// whole dispatch path (context, state, the call to a plugin process, checks, state
// apply) with the same extension's method called in-process. "out-of-process"
// goes the way the loop sends it, over the plugin's Dispatch stream;
// "out-of-process-unary" by the hook's own RPC, as for a plugin without Dispatch.
func BenchmarkExtensionCall(b *testing.B) {
	for _, unary := range []bool{false, true} {
		name := "out-of-process"
		if unary {
			name += "-unary"
		}
		b.Run(name, func(b *testing.B) {
			h := benchHost(b, 1)
			a := benchAgent(b, h, 1)
			t := &turn{requestID: "bench", iteration: 1}
			exts := h.Extensions(exocortexv1.Hook_HOOK_MESSAGE_LOOP_END)[:1]
			ext := exts[0]
			build := func(c *exocortexv1.HookCall, _ fields) *exocortexv1.MessageLoopEndRequest {
				return &exocortexv1.MessageLoopEndRequest{Call: c, Iteration: 1}
			}
			ds := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				call, _ := a.hookCall(t, ext)
				o := callGroup(context.Background(), unary, exts, map[*host.Extension]*exocortexv1.HookCall{ext: call}, build, exocortexv1.PluginClient.MessageLoopEnd)[0]
				err := o.err
				if err == nil {
					err = checkResponse(ext, o.resp)
				}
				if err == nil {
					err = a.store.Apply(ext.Access, o.resp.GetChanges())
				}
				if err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
			}
			b.StopTimer()
			reportQuantiles(b, ds)
		})
	}
	// The floor: go-plugin's health check to the same process, the cheapest
	// round trip there is; the difference is what the dispatch path adds.
	b.Run("grpc-floor", func(b *testing.B) {
		h := benchHost(b, 1)
		p := h.Plugins()[0]
		ctx := context.Background()
		ds := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			start := time.Now()
			if err := p.Ping(ctx); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(start))
		}
		b.StopTimer()
		reportQuantiles(b, ds)
	})
	b.Run("in-process", func(b *testing.B) {
		srv, err := sdk.NewServer(sdk.Plugin{Name: "bench", Extensions: benchExtensions()})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		ds := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			start := time.Now()
			_, err := srv.MessageLoopEnd(ctx, &exocortexv1.MessageLoopEndRequest{Call: &exocortexv1.HookCall{Extension: "bench_8"}, Iteration: 1})
			if err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(start))
		}
		b.StopTimer()
		reportQuantiles(b, ds)
	})
}

// BenchmarkIteration40 runs whole iterations (prompt assembly, the scripted model
// over HTTP, a tool lookup, message_loop_end) with 40 extensions in 4 plugins.
func BenchmarkIteration40(b *testing.B) {
	h := benchHost(b, 4)
	n := 0
	for _, in := range []exocortexv1.Hook{exocortexv1.Hook_HOOK_MESSAGE_LOOP_START, exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER, exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL, exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER, exocortexv1.Hook_HOOK_MESSAGE_LOOP_END} {
		n += len(h.Extensions(in))
	}
	if n != 40 {
		b.Fatalf("%d extensions loaded, want 40", n)
	}
	a := benchAgent(b, h, b.N+1)
	ctx := context.Background()
	var hookTime, iterHooks time.Duration
	a.opts.Observer = func(e Event) {
		if e.Type == EventHookDone { // wall time, calls at once counted once
			d := time.Duration(e.DurationUS) * time.Microsecond
			hookTime += d
			iterHooks += d
		}
	}
	ds := make([]time.Duration, 0, b.N)
	hs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		iterHooks = 0
		start := time.Now()
		t := &turn{requestID: "bench"}
		t.iteration = 1
		res := &Result{}
		var last string
		var unusable int
		if _, err := a.iterate(ctx, t, res, &last, &unusable); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
		hs = append(hs, iterHooks)
		a.history = a.history[:0]
	}
	b.StopTimer()
	reportQuantiles(b, ds)
	b.ReportMetric(float64(hookTime.Microseconds())/float64(b.N), "hook-µs/op")
	slices.Sort(hs)
	b.ReportMetric(float64(hs[len(hs)/2].Microseconds()), "hook-p50-µs")
}

// benchExtensions mirrors benchplugin's extensions in-process.
func benchExtensions() []sdk.Extension {
	return []sdk.Extension{benchEnd{}}
}

type benchEnd struct{}

func (e benchEnd) Spec() sdk.Spec {
	return sdk.Spec{Name: "bench_8", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 8, Reads: []sdk.KeyRef{sdk.KeyOf[*exocortexv1.FailureTracker]()}}
}

func (benchEnd) MessageLoopEnd(context.Context, *sdk.Call, *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	return nil, nil
}
