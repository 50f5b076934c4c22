package codeexec

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/exocortex/exocortex/extensions/internal/toolstream"
)

// BenchmarkOutputReporting is the cost of reporting a command's output while it
// runs: one cell printing 100,000 lines (about 590 KB) in a real shell, with the
// output reported as it comes to a receiver that takes 2 ms per report (a round
// trip through the host's tool_output_update; the hooks' own time is theirs),
// against the same cell with no reporting. The shell must not wait for the
// reports: the ratio of the two is the overhead.
func BenchmarkOutputReporting(b *testing.B) {
	if _, err := exec.LookPath("bash"); err != nil {
		b.Skip("bash is not installed")
	}
	for _, mode := range []string{"off", "reported"} {
		b.Run(mode, func(b *testing.B) {
			s, err := startSession("bash", b.TempDir(), b.TempDir(), nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer s.kill()
			reports, bytes := 0, 0
			for b.Loop() {
				var onOutput func([]byte)
				var st *toolstream.Streamer
				if mode == "reported" {
					st = toolstream.New(context.Background(), toolstream.Every, func(_ context.Context, d string) error {
						time.Sleep(2 * time.Millisecond)
						reports++
						bytes += len(d)
						return nil
					})
					onOutput = func(p []byte) { _, _ = st.Write(p) }
				}
				out := s.exec(context.Background(), RuntimeTerminal, "", "seq 1 100000", time.Minute, time.Second, onOutput)
				if st != nil {
					st.Close()
				}
				if !out.finished || out.output.total < 500_000 {
					b.Fatalf("the cell did not finish: %+v", out.reason)
				}
			}
			if mode == "reported" {
				// Output faster than the reports is coalesced, and what piles up
				// beyond toolstream.Backlog between two reports is left out of them.
				b.ReportMetric(float64(reports)/float64(b.N), "reports/op")
				b.ReportMetric(float64(bytes)/float64(b.N), "reported-bytes/op")
				if reports == 0 {
					b.Fatal("nothing was reported")
				}
			}
		})
	}
}
