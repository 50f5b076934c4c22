package memory

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/internal/procstat"
	"github.com/exocortex/exocortex/memory/embed"
)

// BenchmarkOpenProcess measures what a new process pays to load the offline
// embedder and open BenchmarkOpen's store of benchN(100,000) records, as the
// memory-tools plugin and every CLI call do. A new process starts with an empty
// heap: its first touch of the vector file's 55 MB and of the records costs
// page faults that BenchmarkOpen's repeated opens in one process do not see.
// Each open is this test binary run again (TestHelperOpenProcess), the modes
// taking turns:
//
//   - sequential: load the embedder, then Open (memory-tools before issue 15's
//     last pass);
//   - concurrent: Open with Options.LoadEmbedder, so the embedder loads while
//     the snapshot, the journal and the full-text index are read;
//   - bm25: Open without an embedder (no vector file read);
//   - open: the embedder loaded before the clock starts, then Open: what the
//     store alone costs a new process;
//   - open+search: the same and the first search (hybrid, limit 10).
//
// It needs EXOCORTEX_GLOVE (the plugin's embedder):
//
//	EXOCORTEX_GLOVE=/work/glove/glove-100d.bin go test ./memory -run '^$' -bench 'OpenProcess' -benchtime 3x -timeout 60m
func BenchmarkOpenProcess(b *testing.B) {
	if os.Getenv(embed.GloVeEnv) == "" {
		b.Skip("set EXOCORTEX_GLOVE: this benchmark measures loading the offline embedder with the store")
	}
	e, _ := benchSetup()
	dir := openFixture(b, benchN(100_000), e)
	modes := []string{"sequential", "concurrent", "bm25", "open", "open+search"}
	walls, cpus := map[string][]time.Duration{}, map[string][]time.Duration{}
	for i := 0; i < b.N; i++ {
		for _, mode := range modes {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperOpenProcess$")
			cmd.Env = append(os.Environ(), "MEMORY_OPEN_PROCESS_DIR="+dir, "MEMORY_OPEN_PROCESS_MODE="+mode)
			out, err := cmd.CombinedOutput()
			if err != nil {
				b.Fatalf("%s: %v\n%s", mode, err, out)
			}
			var wall, cpu time.Duration
			if _, err := fmt.Sscanf(string(out[strings.Index(string(out), "OPEN "):]), "OPEN %d %d", &wall, &cpu); err != nil {
				b.Fatalf("%s: no figures in %q", mode, out)
			}
			walls[mode] = append(walls[mode], wall)
			cpus[mode] = append(cpus[mode], cpu)
		}
	}
	for _, mode := range modes {
		w := walls[mode]
		sort.Slice(w, func(i, j int) bool { return w[i] < w[j] })
		var cpu time.Duration
		for _, c := range cpus[mode] {
			cpu += c
		}
		b.ReportMetric(float64(w[len(w)/2].Microseconds())/1000, mode+"-p50-ms")
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), mode+"-cpu-ms")
	}
}

// TestHelperOpenProcess is one open of BenchmarkOpenProcess, in a process of
// its own; it does nothing in an ordinary run. It prints "OPEN wall cpu" in
// nanoseconds, from the start of the embedder's load to an open store.
func TestHelperOpenProcess(t *testing.T) {
	dir, mode := os.Getenv("MEMORY_OPEN_PROCESS_DIR"), os.Getenv("MEMORY_OPEN_PROCESS_MODE")
	if dir == "" {
		t.Skip("helper process of BenchmarkOpenProcess")
	}
	// The embedder the fixture was built with (benchSetup's), loaded as the
	// memory-tools plugin loads it (embed.LoadGloVe: the file in place).
	load := func() (Embedder, error) {
		return embed.LoadGloVe(os.Getenv(embed.GloVeEnv), embed.GloVeConfig{})
	}
	opts := Options{Logger: discardLogger()}
	if mode == "open" || mode == "open+search" {
		e, err := load()
		if err != nil {
			t.Fatal(err)
		}
		opts.Embedder = e
	}
	t0, c0 := time.Now(), procstat.CPUTime()
	switch mode {
	case "sequential":
		e, err := load()
		if err != nil {
			t.Fatal(err)
		}
		opts.Embedder = e
	case "concurrent":
		opts.LoadEmbedder = load
	}
	s, err := Open(context.Background(), dir, opts)
	if err == nil && mode == "open+search" {
		_, err = s.Search(context.Background(), "deploy the service again", SearchOptions{Limit: 10})
	}
	wall, cpu := time.Since(t0), procstat.CPUTime()-c0
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := s.Notices(); len(n) > 0 {
		t.Fatalf("the benchmark store did not open cleanly: %q", n)
	}
	if (mode == "bm25") != (s.Embedder() == nil) {
		t.Fatalf("mode %s opened with embedder %v", mode, s.Embedder())
	}
	fmt.Printf("OPEN %d %d\n", wall.Nanoseconds(), cpu.Nanoseconds())
}
