package service

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/memory"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// BenchmarkServiceSearch compares a search through the memory service (a
// client on the socket, as every process but the owner reaches it) with the
// same search in the owner's process, and Stats both ways, on a store of
// MEMORY_BENCH_N records (default 100,000; BM25 alone: the transport's cost
// does not depend on the embedder). The store is built once and kept in
// $TMPDIR/exocortex-bench-service-N. Run it alone:
//
//	MEMORY_BENCH_N=100000 go test -run '^$' -bench ServiceSearch -benchtime 1x ./memory/service/
func BenchmarkServiceSearch(b *testing.B) {
	n := 100_000
	if s := os.Getenv("MEMORY_BENCH_N"); s != "" {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			n = v
		}
	}
	ctx := context.Background()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("exocortex-bench-service-%d", n), "memory")
	rng := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 20_000)
	for i := range words {
		words[i] = fmt.Sprintf("w%sq%d", strings.Repeat(string(rune('a'+i%26)), 1+i%3), i)
	}
	text := func(k int) string {
		var sb strings.Builder
		for j := range k {
			if j > 0 {
				sb.WriteByte(' ')
			}
			// Zipf-like: low indexes far more often.
			sb.WriteString(words[int(float64(len(words))*rng.Float64()*rng.Float64()*rng.Float64())])
		}
		return sb.String()
	}
	if _, err := os.Stat(filepath.Join(dir, "ready")); err != nil {
		os.RemoveAll(filepath.Dir(dir))
		st, err := memory.Open(ctx, dir, memory.Options{})
		if err != nil {
			b.Fatal(err)
		}
		for done := 0; done < n; done += 1000 {
			ins := make([]memory.Input, min(1000, n-done))
			for i := range ins {
				ins[i] = memory.Input{Text: text(12 + rng.IntN(20))}
			}
			if _, err := st.PutBatch(ctx, ins, memory.Source{Source: "bench"}); err != nil {
				b.Fatal(err)
			}
		}
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "ready"), nil, 0o600)
	}
	sock := filepath.Join(b.TempDir(), "m.sock")
	if len(sock) > 100 {
		sock = filepath.Join(os.TempDir(), fmt.Sprintf("exo-bench-%d.sock", os.Getpid()))
	}
	owner, err := Connect(ctx, Config{Dir: dir, Socket: sock})
	if err != nil {
		b.Fatal(err)
	}
	defer owner.Close()
	client, err := Connect(ctx, Config{Dir: dir, Socket: sock})
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	store := owner.Store()
	queries := make([]string, 400)
	for i := range queries {
		queries[i] = text(3)
	}
	p50 := func(ds []time.Duration) time.Duration {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2]
	}
	for range b.N {
		var local, remote, lstats, rstats []time.Duration
		for _, q := range queries {
			t0 := time.Now()
			if _, err := store.Search(ctx, q, memory.SearchOptions{}); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if _, err := client.Search(ctx, &exocortexv1.MemorySearchRequest{Query: q}); err != nil {
				b.Fatal(err)
			}
			local, remote = append(local, t1.Sub(t0)), append(remote, time.Since(t1))
		}
		for range 50 {
			t0 := time.Now()
			store.Stats(ctx)
			t1 := time.Now()
			if _, err := client.Stats(ctx, &exocortexv1.MemoryStatsRequest{}); err != nil {
				b.Fatal(err)
			}
			lstats, rstats = append(lstats, t1.Sub(t0)), append(rstats, time.Since(t1))
		}
		l, r := p50(local), p50(remote)
		b.ReportMetric(float64(l.Microseconds()), "in-process-p50-µs")
		b.ReportMetric(float64(r.Microseconds()), "service-p50-µs")
		b.ReportMetric(float64((r - l).Microseconds()), "added-p50-µs")
		b.ReportMetric(float64(p50(lstats).Microseconds()), "stats-in-process-p50-µs")
		b.ReportMetric(float64(p50(rstats).Microseconds()), "stats-service-p50-µs")
		b.Logf("%d records: search p50 in-process %s, through the service %s (+%s); stats p50 %s, through the service %s",
			n, l, r, r-l, p50(lstats), p50(rstats))
	}
}
