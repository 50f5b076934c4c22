package natsjournal

import (
	"os"
	"strconv"
	"testing"

	"github.com/exocortex/exocortex/memory/natsjournal/natstest"
)

// BenchmarkPromoterDrain is the scale simulation's promoter figure alone
// (promoterFigures: raw rates, a backlog drained, raw rates again), for
// profiling and for old-against-new turns: per iteration a fresh embedded
// server; EXOCORTEX_NATS_SCALE_BACKLOG proposals (default 20,000). The CPU
// profile holds the server's work too (it runs in the process).
//
//	go test -run '^$' -bench PromoterDrain -benchtime 1x -cpuprofile cpu.out ./memory/natsjournal/
func BenchmarkPromoterDrain(b *testing.B) {
	n := 20_000
	if v, err := strconv.Atoi(os.Getenv("EXOCORTEX_NATS_SCALE_BACKLOG")); err == nil && v > 0 {
		n = v
	}
	var raw, deltas float64
	for range b.N {
		srv := natstest.Start(b)
		f := promoterFigures(b, srv.URL(), n)
		raw += f.raw
		deltas += f.deltas
		srv.Shutdown()
	}
	b.ReportMetric(raw/float64(b.N), "raw-msgs/s")
	b.ReportMetric(deltas/float64(b.N), "deltas/s")
	b.ReportMetric(100*deltas/raw, "%-of-raw")
}
