// Command eval measures the retrieval quality of the memory store on a labelled
// data set it generates deterministically: facts about invented people (ten
// relations each, such as "Chiara Brandt is allergic to sesame.") plus distractor
// notes, and one paraphrased question per fact ("Which ingredient makes Chiara
// Brandt sick?") whose answer is that fact. It reports recall@k and mean reciprocal
// rank for BM25 alone, vectors alone and hybrid (reciprocal rank fusion).
//
//	go run ./memory/eval                       # offline GloVe from data/glove-100d.bin
//	go run ./memory/eval -glove PATH -people 200 -k 1,3,5,10
//	go run ./memory/eval -write DIR            # also write facts.jsonl and queries.txt
//
// The word vectors come from scripts/fetch-glove.sh. Without them the evaluation
// still runs BM25 and says that the vector rows are missing.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/embed"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		os.Exit(1)
	}
}

type row struct {
	Mode    memory.Mode     `json:"mode"`
	Recall  map[int]float64 `json:"recall"`
	MRR     float64         `json:"mrr"`
	Queries int             `json:"queries"`
	P50ms   float64         `json:"p50_ms"`
}

func run() error {
	glove := flag.String("glove", envOr("EXOCORTEX_GLOVE", "data/glove-100d.bin"), "GloVe word-vector file (scripts/fetch-glove.sh)")
	people := flag.Int("people", 120, "people in the data set (ten facts each)")
	seed := flag.Uint64("seed", 1, "data set seed")
	ks := flag.String("k", "1,3,5,10", "cut-offs for recall@k")
	rrfK := flag.Float64("rrf-k", 60, "reciprocal rank fusion constant")
	asJSON := flag.Bool("json", false, "print JSON")
	write := flag.String("write", "", "also write the data set (facts.jsonl, queries.txt, labels.jsonl) to this directory")
	flag.Parse()

	var cut []int
	for _, s := range strings.Split(*ks, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k <= 0 {
			return fmt.Errorf("-k %q: want positive integers separated by commas", *ks)
		}
		cut = append(cut, k)
	}
	maxK := 0
	for _, k := range cut {
		maxK = max(maxK, k)
	}

	facts, queries := dataset(*people, *seed)
	if *write != "" {
		if err := writeDataset(*write, facts, queries); err != nil {
			return err
		}
	}

	var emb memory.Embedder
	modes := []memory.Mode{memory.ModeBM25}
	g, err := embed.LoadGloVe(*glove, embed.GloVeConfig{})
	switch {
	case err == nil:
		emb = g
		modes = append(modes, memory.ModeVector, memory.ModeHybrid)
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(os.Stderr, "eval: no word vectors at %s (run scripts/fetch-glove.sh): BM25 only\n", *glove)
	default:
		return fmt.Errorf("loading %s: %w", *glove, err)
	}

	dir, err := os.MkdirTemp("", "exocortex-eval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := memory.Open(ctx, dir, memory.Options{Embedder: emb, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer s.Close()
	ins := make([]memory.Input, len(facts))
	for i, f := range facts {
		ins[i] = memory.Input{ID: f.ID, Area: f.Area, Text: f.Text}
	}
	if _, err := s.PutBatch(ctx, ins, memory.Source{Source: "eval"}); err != nil {
		return err
	}

	var rows []row
	for _, mode := range modes {
		r := row{Mode: mode, Recall: map[int]float64{}, Queries: len(queries)}
		var lat []time.Duration
		for _, q := range queries {
			t0 := time.Now()
			res, err := s.Search(ctx, q.Text, memory.SearchOptions{Limit: maxK, Mode: mode, RRFK: *rrfK})
			lat = append(lat, time.Since(t0))
			if err != nil {
				return fmt.Errorf("%s search %q: %w", mode, q.Text, err)
			}
			for rank, h := range res.Hits {
				if h.Record.ID == q.Want {
					r.MRR += 1 / float64(rank+1)
					for _, k := range cut {
						if rank < k {
							r.Recall[k]++
						}
					}
					break
				}
			}
		}
		for _, k := range cut {
			r.Recall[k] /= float64(len(queries))
		}
		r.MRR /= float64(len(queries))
		r.P50ms = median(lat)
		rows = append(rows, r)
	}

	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"facts": len(facts), "queries": len(queries), "embedder": modelOf(emb), "rrf_k": *rrfK, "rows": rows})
	}
	fmt.Printf("data set: %d facts (%d people x %d relations + %d distractors), %d questions; embedder: %s\n\n",
		len(facts), *people, len(relations), len(facts)-*people*len(relations), len(queries), modelOf(emb))
	fmt.Printf("%-8s", "mode")
	for _, k := range cut {
		fmt.Printf("  recall@%-3d", k)
	}
	fmt.Printf("  MRR     p50\n")
	for _, r := range rows {
		fmt.Printf("%-8s", r.Mode)
		for _, k := range cut {
			fmt.Printf("  %-10.3f", r.Recall[k])
		}
		fmt.Printf("  %.3f  %.2f ms\n", r.MRR, r.P50ms)
	}
	return nil
}

func modelOf(e memory.Embedder) string {
	if e == nil {
		return "none"
	}
	return e.ModelID()
}

func median(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return float64(s[len(s)/2].Microseconds()) / 1000
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// writeDataset writes facts.jsonl (importable with `exocortex memory import`),
// queries.txt (for `exocortex memory search --queries`) and labels.jsonl.
func writeDataset(dir string, facts []fact, queries []query) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var f, q, l strings.Builder
	for _, x := range facts {
		b, _ := json.Marshal(x)
		f.Write(b)
		f.WriteByte('\n')
	}
	for i, x := range queries {
		q.WriteString(x.Text + "\n")
		b, _ := json.Marshal(map[string]any{"line": i + 1, "query": x.Text, "want": x.Want})
		l.Write(b)
		l.WriteByte('\n')
	}
	for name, body := range map[string]string{"facts.jsonl": f.String(), "queries.txt": q.String(), "labels.jsonl": l.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}
