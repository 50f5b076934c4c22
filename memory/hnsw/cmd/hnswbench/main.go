// Command hnswbench compares our HNSW index with github.com/coder/hnsw v0.6.1 and
// exact brute force on the same vectors, printing recall@10 and single-thread
// queries per second for each at several EfSearch values, plus build time, heap
// and persisted size.
//
//	go run ./memory/hnsw/cmd/hnswbench                   # 340k GloVe vectors (make glove)
//	go run ./memory/hnsw/cmd/hnswbench -synthetic 20000  # no data needed
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/exocortex/exocortex/memory/hnsw/internal/annbench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "hnswbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("hnswbench", flag.ContinueOnError)
	data := fs.String("data", "data/glove-100d.bin", "word-vector file (scripts/fetch-glove.sh makes it)")
	queries := fs.Int("queries", 1000, "held-out queries")
	synthetic := fs.Int("synthetic", 0, "use this many synthetic clustered vectors instead of GloVe")
	dim := fs.Int("dim", 64, "dimensions of the synthetic vectors")
	k := fs.Int("k", 10, "neighbours per query (recall@k)")
	m := fs.Int("m", 16, "M: links per node (2M on layer 0)")
	efc := fs.Int("efc", 200, "efConstruction")
	efs := fs.String("ef", "10,20,40,80,120,200,400", "EfSearch values to sweep")
	par := fs.Int("parallel", 0, "build goroutines for our index (0: GOMAXPROCS)")
	coderMax := fs.Int("coder-max", 0, "index at most this many vectors in coder/hnsw (0: all, -1: skip it)")
	repeat := fs.Int("repeat", 1, "run each search sweep this many times and keep the fastest")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var sweep []int
	for _, s := range strings.Split(*efs, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v <= 0 {
			return fmt.Errorf("-ef: bad value %q", s)
		}
		sweep = append(sweep, v)
	}
	var ds *annbench.Dataset
	if *synthetic > 0 {
		ds = annbench.Synthetic(*synthetic, *queries, *dim, 100, 1)
	} else {
		var err error
		if ds, err = annbench.GloVe(*data, *queries, 1); err != nil {
			return err
		}
	}
	cfg := annbench.Config{K: *k, M: *m, EfConstruction: *efc, EfSearch: sweep, Parallelism: *par, CoderMax: *coderMax, Repeat: *repeat}
	if !*quiet {
		cfg.Progress = func(f string, a ...any) { fmt.Fprintf(os.Stderr, "hnswbench: "+f+"\n", a...) }
	}
	res, err := annbench.Run(ctx, ds, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	annbench.Print(os.Stdout, res)
	return nil
}
