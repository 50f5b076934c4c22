package natsjournal

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/exocortex/exocortex/memory/natsjournal/natstest"
)

// BenchmarkPromoterDrain is the scale simulation's promoter figure alone, for
// profiling: per iteration a fresh embedded server, the raw async publish
// rate, then a promoter draining a backlog of one-entry proposals
// (EXOCORTEX_NATS_SCALE_BACKLOG, default 20,000). The CPU profile holds the
// server's work too (it runs in the process).
//
//	go test -run '^$' -bench PromoterDrain -benchtime 1x -cpuprofile cpu.out ./memory/natsjournal/
func BenchmarkPromoterDrain(b *testing.B) {
	n := 20_000
	if v, err := strconv.Atoi(os.Getenv("EXOCORTEX_NATS_SCALE_BACKLOG")); err == nil && v > 0 {
		n = v
	}
	var raw, drained float64
	var total time.Duration
	for range b.N {
		b.StopTimer()
		srv := natstest.Start(b)
		raw += rawPublishRate(b, srv.URL(), n)
		b.StartTimer()
		d, got := promoterDrain(b, srv.URL(), n)
		total += d
		drained += float64(got)
		b.StopTimer()
		srv.Shutdown()
	}
	b.ReportMetric(raw/float64(b.N), "raw-msgs/s")
	b.ReportMetric(drained/total.Seconds(), "deltas/s")
	b.ReportMetric(100*drained/total.Seconds()/(raw/float64(b.N)), "%-of-raw")
}
