package memory

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/exocortex/exocortex/internal/procstat"
)

// BenchmarkPeekStore: what the terminal's welcome card costs to count a
// store another process holds (PeekStore: the snapshot decoded, the journal
// past it applied, no index, no lock), beside opening the same store
// (Open, from its snapshot), on one fixture in one run.
func BenchmarkPeekStore(b *testing.B) {
	n := benchN(100_000)
	e, _ := benchSetup()
	dir := openFixture(b, n, e)
	for _, mode := range []string{"peek", "open"} {
		b.Run(mode, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				t0, c0 := time.Now(), procstat.CPUTime()
				var got int
				switch mode {
				case "peek":
					p, err := PeekStore(context.Background(), dir)
					if err != nil {
						b.Fatal(err)
					}
					got = p.Records
				default:
					s, err := Open(context.Background(), dir, Options{Embedder: e, Logger: discardLogger()})
					if err != nil {
						b.Fatal(err)
					}
					got = must(s.Stats(context.Background())).Records
					if err := s.Close(); err != nil {
						b.Fatal(err)
					}
				}
				lat = append(lat, time.Since(t0))
				cpu += procstat.CPUTime() - c0
				if got != n {
					b.Fatalf("counted %d records, want %d", got, n)
				}
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}
