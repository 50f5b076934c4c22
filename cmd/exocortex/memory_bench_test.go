package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/memory/embed"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// BenchmarkMemoryCommands measures `exocortex memory stats` and `memory
// search` as processes (the real binary) on a store of 1,000 records and one
// of RUNP_BENCH_N (default 100,000), BM25 alone, with no owner running (the
// command opens the store itself) and beside an owner (`memory serve`): issue
// 25's target is at most 3x the 1k cost at 100k. The commands take turns
// across the stores and the modes, so that a change of the machine's load
// weighs on all alike; each figure is a median wall time (ms) and ratio-* is
// the 100k median over the 1k one. The stores are built once and kept in
// os.TempDir (exocortex-bench-runp-N-none).
//
//	go test ./cmd/exocortex -run '^$' -bench MemoryCommands -benchtime 5x -timeout 30m
func BenchmarkMemoryCommands(b *testing.B) {
	n := 100_000
	if s := os.Getenv("RUNP_BENCH_N"); s != "" {
		fmt.Sscan(s, &n)
	}
	exe := sdktest.BuildPlugin(b, "github.com/exocortex/exocortex/cmd/exocortex")
	stores := []struct{ name, dir string }{
		{"1k", runPStore(b, 1000, embed.Spec("none"))},
		{fmt.Sprintf("%dk", n/1000), runPStore(b, n, embed.Spec("none"))},
	}
	commands := []struct {
		name string
		args []string
	}{
		{"stats", []string{"stats", "--json"}},
		{"search", []string{"search", "--json", "--limit", "5", "morning coffee with milk"}},
	}
	exo := func(dir string, args ...string) *exec.Cmd {
		cmd := exec.Command(exe, append([]string{"memory", "--dir", dir, "--embedder", "none"}, args...)...)
		cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+b.TempDir())
		return cmd
	}
	timed := func(dir string, args []string) time.Duration {
		cmd := exo(dir, args...)
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("memory %v: %v\n%s", args, err, out)
		}
		return time.Since(t0)
	}
	walls := map[string][]time.Duration{}
	key := func(mode, cmd, store string) string { return mode + "/" + cmd + "/" + store }
	for _, mode := range []string{"no-owner", "owner"} {
		var owners []*exec.Cmd
		if mode == "owner" {
			for _, st := range stores {
				cmd := exo(st.dir, "serve")
				out, err := cmd.StdoutPipe()
				if err != nil {
					b.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				sc := bufio.NewScanner(out)
				if !sc.Scan() || !strings.HasPrefix(sc.Text(), "serving ") {
					cmd.Process.Kill()
					cmd.Wait()
					b.Fatalf("memory serve on %s says %q", st.dir, sc.Text())
				}
				owners = append(owners, cmd)
			}
		}
		for _, st := range stores { // one untimed round: the page cache
			for _, c := range commands {
				timed(st.dir, c.args)
			}
		}
		for i := 0; i < b.N; i++ {
			for _, c := range commands {
				for _, st := range stores {
					walls[key(mode, c.name, st.name)] = append(walls[key(mode, c.name, st.name)], timed(st.dir, c.args))
				}
			}
		}
		for _, cmd := range owners {
			cmd.Process.Signal(os.Interrupt)
			if err := cmd.Wait(); err != nil {
				b.Errorf("memory serve's exit: %v", err)
			}
		}
	}
	for _, mode := range []string{"no-owner", "owner"} {
		for _, c := range commands {
			small, large := medianDur(walls[key(mode, c.name, stores[0].name)]), medianDur(walls[key(mode, c.name, stores[1].name)])
			b.ReportMetric(small.Seconds()*1000, key(mode, c.name, stores[0].name)+"-ms")
			b.ReportMetric(large.Seconds()*1000, key(mode, c.name, stores[1].name)+"-ms")
			b.ReportMetric(large.Seconds()/small.Seconds(), "ratio-"+mode+"/"+c.name)
		}
	}
}
