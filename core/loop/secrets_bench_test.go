package loop

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/sdk/sdktest"
	"github.com/exocortex/exocortex/secrets"
)

// BenchmarkSecretsSession60 runs a 60-turn session (prompt assembly with the
// growing history, the scripted model over HTTP, a tool result of 2 KB
// entering the history, 40 extensions in 4 plugins) without secrets and with
// three, side by side: the difference is the masking's cost (every plugin
// request and answer, every model request, every message and event).
func BenchmarkSecretsSession60(b *testing.B) {
	bin := sdktest.BuildPlugin(b, "./testdata/benchplugin")
	for _, n := range []int{0, 3} {
		b.Run(fmt.Sprintf("secrets=%d", n), func(b *testing.B) {
			var store *secrets.Store
			if n > 0 {
				cfg, env := secrets.Config{}, map[string]string{}
				for i := 0; i < n; i++ {
					name := fmt.Sprintf("S%d", i)
					cfg[name] = secrets.Source{Env: name}
					env[name] = fmt.Sprintf("bench-secret-%d-value-%d", i, 1e6+i)
				}
				var err error
				store, err = secrets.Load(cfg, secrets.LoadOptions{Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
				if err != nil {
					b.Fatal(err)
				}
			}
			h := benchHostWith(b, bin, 4, store)
			const turns = 60
			result := strings.Repeat("line of tool output that holds no secret at all\n", 40)
			var total time.Duration
			for i := 0; i < b.N; i++ {
				a := benchAgent(b, h, turns+1)
				ctx := context.Background()
				start := time.Now()
				for it := 1; it <= turns; it++ {
					t := &turn{requestID: "bench", iteration: it}
					res := &Result{}
					var last string
					var unusable int
					if _, err := a.iterate(ctx, t, res, &last, &unusable); err != nil {
						b.Fatal(err)
					}
					m := a.newMessage("tool", "nothing", result)
					if err := a.addMessage(ctx, t, m); err != nil {
						b.Fatal(err)
					}
				}
				total += time.Since(start)
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1e3, "session-ms")
		})
	}
}

// benchHostWith starts n copies of benchplugin with the secrets store.
func benchHostWith(b *testing.B, bin string, n int, store *secrets.Store) *host.Host {
	b.Helper()
	dir := b.TempDir()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("bench%d", i)
		installPlugin(b, dir, name, bin, fmt.Sprint(i*10), name)
	}
	h, err := host.New(context.Background(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}}, Secrets: store})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(h.Close)
	return h
}
