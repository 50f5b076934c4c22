package host_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// BenchmarkReloadLatency measures hot reload from the last write of a new
// plugin binary to the new version serving: the binary is renamed into the
// plugin directory (as `exocortex dev` installs it), the watcher settles, the
// new version is started, vetted and staged, the next "iteration" swaps it in,
// and a call answers from it. Sub-benchmarks compare the default debounce with a
// shorter one, and a manual Reload (no watcher, no debounce) that shows the cost
// of starting and vetting alone. Reported: mean, p50 and max ms per reload.
//
//	go test -run '^$' -bench ReloadLatency -benchtime 20x ./core/host/
func BenchmarkReloadLatency(b *testing.B) {
	bins := map[string]string{
		"v1": sdktest.BuildPlugin(b, "./testdata/reload/v1"),
		"v2": sdktest.BuildPlugin(b, "./testdata/reload/v2"),
	}
	for _, c := range []struct {
		name     string
		debounce time.Duration
		manual   bool
	}{
		{"watch/debounce=250ms", 250 * time.Millisecond, false},
		{"watch/debounce=100ms", 100 * time.Millisecond, false},
		{"manual-reload", 0, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			bin := filepath.Join(dir, "greeter")
			install(b, bins["v1"], bin)
			h, err := host.New(ctx, host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}}, WatchDebounce: c.debounce})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			if !c.manual {
				if err := h.Watch(ctx); err != nil {
					b.Fatal(err)
				}
			}
			var lat []time.Duration
			version := "v1"
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				version = map[string]string{"v1": "v2", "v2": "v1"}[version]
				install(b, bins[version], bin)
				start := time.Now()
				if c.manual {
					if err := h.Reload(ctx, "greeter"); err != nil {
						b.Fatal(err)
					}
				}
				deadline := start.Add(10 * time.Second)
				for !h.ApplyPending() {
					if time.Now().After(deadline) {
						b.Fatalf("reload %d: nothing staged within 10 s", i)
					}
					time.Sleep(time.Millisecond)
				}
				if got := greet(ctx, b, h); !strings.Contains(got, "greetings from "+version) {
					b.Fatalf("reload %d: the greeter answered %q, want %s", i, got, version)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(lat)
			var sum time.Duration
			for _, d := range lat {
				sum += d
			}
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(sum)/float64(len(lat)), "ms/reload")
			b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
			b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// greet calls the greeter's extension once and returns its block.
func greet(ctx context.Context, tb testing.TB, h *host.Host) string {
	tb.Helper()
	for _, e := range h.Extensions(exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER) {
		if e.Name() != "greeter" {
			continue
		}
		resp, err := host.Call(ctx, e, &exocortexv1.MessageLoopPromptsAfterRequest{Call: &exocortexv1.HookCall{Extension: "greeter"}, Iteration: 1},
			exocortexv1.PluginClient.MessageLoopPromptsAfter)
		if err != nil {
			tb.Fatal(err)
		}
		var out []string
		for _, blk := range resp.GetPromptBlocks() {
			out = append(out, blk.GetContent())
		}
		return strings.Join(out, "\n")
	}
	tb.Fatal("no greeter extension")
	return ""
}
