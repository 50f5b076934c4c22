package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/service"
	"github.com/spf13/cobra"
)

type searchFlags struct {
	areas, tags, statuses []string
	key, mode             string
	limit, budget         int
	rrfK, mmr             float64
	recency               time.Duration
	since, until          string
	queries               string
	// minSimilarity is the text output's relevance floor (memory_floor.go).
	minSimilarity float64
}

func (sf *searchFlags) options() (memory.SearchOptions, error) {
	if sf.limit <= 0 {
		return memory.SearchOptions{}, fmt.Errorf("--limit/-k %d: give a positive number of hits (e.g. 10)", sf.limit)
	}
	if sf.budget < 0 {
		return memory.SearchOptions{}, fmt.Errorf("--budget %d: give a positive number of tokens, or 0 for no budget", sf.budget)
	}
	o := memory.SearchOptions{Limit: sf.limit, Mode: memory.Mode(sf.mode), RRFK: sf.rrfK, MMRLambda: sf.mmr,
		RecencyHalfLife: sf.recency, TokenBudget: sf.budget}
	switch o.Mode {
	case memory.ModeHybrid, memory.ModeBM25, memory.ModeVector:
	default:
		return o, fmt.Errorf("--mode %q: use hybrid, bm25 or vector", sf.mode)
	}
	o.Filter = memory.Filter{Areas: splitList(sf.areas), Tags: splitList(sf.tags), Key: sf.key}
	for _, st := range splitList(sf.statuses) {
		o.Filter.Statuses = append(o.Filter.Statuses, memory.Status(st))
	}
	var err error
	if o.Filter.From, err = parseTime(sf.since); err != nil {
		return o, fmt.Errorf("--since: %w", err)
	}
	if o.Filter.To, err = parseTime(sf.until); err != nil {
		return o, fmt.Errorf("--until: %w", err)
	}
	return o, nil
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date (2006-01-02) or RFC 3339 time", s)
}

// searchResult is `search --json` output: the store's result and the embedder
// that made its vector leg.
type searchResult struct {
	memory.Result
	Embedder string `json:"embedder"`
}

// searchLine is one line of `search --queries` output.
type searchLine struct {
	Line     int         `json:"line"`
	Query    string      `json:"query"`
	Mode     memory.Mode `json:"mode"`
	Embedder string      `json:"embedder"`
	Notice   string      `json:"notice,omitempty"`
	Hits     []lineHit   `json:"hits"`
	Error    string      `json:"error,omitempty"`
}

type lineHit struct {
	ID         string  `json:"id"`
	Area       string  `json:"area"`
	Key        string  `json:"key,omitempty"`
	BM25Rank   int     `json:"bm25_rank"`
	VectorRank int     `json:"vector_rank"`
	Fused      float64 `json:"fused"`
	Score      float64 `json:"score"`
}

func memSearchCmd(f *memoryFlags) *cobra.Command {
	sf := &searchFlags{}
	cmd := &cobra.Command{
		Use:   "search QUERY... | search --queries FILE",
		Short: "Hybrid recall (BM25 + vectors, fused by reciprocal rank); each hit says why",
		Long: `Search prints the best memories for a query and why each matched (BM25 rank,
vector rank, fused score). A hit that shares no word with the query and whose
similarity is below --min-similarity (0.3) is left out of the printed list and
counted, and "no good match" says when that leaves none: every store has a nearest
memory, related or not. The ranking is the same as the agent's recall; --json and
--queries (what scripts and the evaluation read) have every hit. With --queries
FILE (- for stdin) it answers one query per line as JSONL, for evaluation scripts.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := sf.options()
			if err != nil {
				return err
			}
			if sf.queries == "" && strings.TrimSpace(strings.Join(args, " ")) == "" {
				// One behaviour for "" and "   ": a blank query searches for nothing.
				return errors.New("the query is empty: give words to search for, or --queries FILE (to list every memory, use `exocortex memory export`)")
			}
			return f.withStore(cmd, func(s service.Remote) error {
				if sf.queries != "" {
					return searchFile(cmd, s, sf.queries, o)
				}
				res, err := s.Search(cmd.Context(), strings.Join(args, " "), o)
				if err != nil {
					return err
				}
				if f.json {
					return printJSON(cmd.OutOrStdout(), searchResult{Result: res, Embedder: embedderOf(cmd.Context(), s)})
				}
				w := cmd.OutOrStdout()
				if res.Notice != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", res.Notice)
				}
				printHits(w, res, sf.minSimilarity)
				if res.Dropped > 0 {
					fmt.Fprintf(w, "(%d more left out by the token budget)\n", res.Dropped)
				}
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&sf.areas, "area", nil, "areas to search (default all but library)")
	fl.StringSliceVar(&sf.tags, "tags", nil, "only memories with every one of these tags")
	fl.StringVar(&sf.key, "key", "", "only the memory with this key")
	fl.StringSliceVar(&sf.statuses, "status", nil, "statuses: active, archived (default active)")
	fl.StringVar(&sf.since, "since", "", "created at or after (2006-01-02 or RFC 3339)")
	fl.StringVar(&sf.until, "until", "", "created before (2006-01-02 or RFC 3339)")
	fl.IntVarP(&sf.limit, "limit", "k", 10, "hits to return")
	fl.StringVar(&sf.mode, "mode", "hybrid", "retrievers: hybrid, bm25 or vector")
	fl.Float64Var(&sf.rrfK, "rrf-k", 60, "reciprocal rank fusion constant")
	fl.Float64Var(&sf.mmr, "mmr", 0, "MMR lambda in (0,1) for diversity (0: off)")
	fl.DurationVar(&sf.recency, "recency", 0, "recency half-life, e.g. 720h (0: off)")
	fl.IntVar(&sf.budget, "budget", 0, "token budget of the returned block (0: none)")
	fl.StringVar(&sf.queries, "queries", "", "answer one query per line of FILE (- for stdin) as JSONL")
	fl.Float64Var(&sf.minSimilarity, "min-similarity", defaultMinSimilarity, "leave out of the printed list the hits that share no word with the query and whose similarity is below this (the ranking, --json and --queries are unchanged)")
	return cmd
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len([]rune(s)) > n {
		return string([]rune(s)[:n]) + "…"
	}
	return s
}

func searchFile(cmd *cobra.Command, s service.Remote, path string, o memory.SearchOptions) error {
	var r io.Reader = cmd.InOrStdin()
	if path != "-" {
		fh, err := os.Open(path)
		if err != nil {
			return err
		}
		defer fh.Close()
		r = fh
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	w := bufio.NewWriter(cmd.OutOrStdout())
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	embedder := embedderOf(cmd.Context(), s)
	for n := 1; sc.Scan(); n++ {
		q := strings.TrimSpace(sc.Text())
		if q == "" {
			continue
		}
		out := searchLine{Line: n, Query: q, Embedder: embedder, Hits: []lineHit{}}
		res, err := s.Search(cmd.Context(), q, o)
		if err != nil {
			out.Error = err.Error()
		}
		out.Mode, out.Notice = res.Mode, res.Notice
		for _, h := range res.Hits {
			out.Hits = append(out.Hits, lineHit{ID: h.Record.ID, Area: h.Record.Area, Key: h.Record.Key,
				BM25Rank: h.BM25Rank, VectorRank: h.VectorRank, Fused: h.Fused, Score: h.Score})
		}
		if err := enc.Encode(out); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading queries from %s: %w", path, err)
	}
	return nil
}
