package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/embed"
	"github.com/exocortex/exocortex/memory/service"
)

// memoryFlags are shared by every memory subcommand.
type memoryFlags struct {
	dir      string
	json     bool
	session  string
	embedder string

	// The configuration, read once per command (loadConfig).
	once sync.Once
	home string
	cfg  config.Config
	err  error
}

// loadConfig reads the home directory and its config.yaml the first time it is
// called and returns the same afterwards: one read per process.
func (f *memoryFlags) loadConfig() (string, config.Config, error) {
	f.once.Do(func() {
		f.home, f.err = config.Home()
		if f.err == nil {
			f.cfg, f.err = config.Load(f.home)
		}
	})
	return f.home, f.cfg, f.err
}

func newMemoryCmd() *cobra.Command {
	f := &memoryFlags{}
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "Read and change the long-term memory store",
		Long: `The memory store lives in $EXOCORTEX_HOME/memory (or --dir). Its journal is the
truth; the full-text and vector indexes are rebuilt from it when missing or damaged.
One process on a home serves it (the first that needs it: a session, or this
command); every other is its client, through $EXOCORTEX_HOME/run/memory.sock.`,
	}
	cmd.PersistentFlags().StringVar(&f.dir, "dir", "", "store directory (default $EXOCORTEX_HOME/memory)")
	cmd.PersistentFlags().BoolVar(&f.json, "json", false, "print JSON for scripts")
	cmd.PersistentFlags().StringVar(&f.session, "session", "", "session id recorded as provenance of changes")
	cmd.PersistentFlags().StringVar(&f.embedder, "embedder", "", `vectors: "auto" (the full offline GloVe file if found, else the compact table built into the binary), "none" (BM25 only), "glove:PATH", "glove:compact", "ollama:MODEL" or "openai:MODEL" (the OpenAI-compatible server under openai: in config.yaml) (default: tools.memory.embedder in config.yaml, else auto)`)
	cmd.AddCommand(
		memAddCmd(f), memGetCmd(f), memSearchCmd(f), memDeleteCmd(f), memForgetCmd(f),
		memImportCmd(f), memExportCmd(f), memStatsCmd(f), memReplayCmd(f), memWhyCmd(f),
		memRestoreCmd(f), memArchiveCmd(f), memServeCmd(f), memMigrateCmd(f), memPromoterCmd(f),
	)
	return cmd
}

// sessionsWhere names where the home's sessions live ("" without a home).
func (f *memoryFlags) sessionsWhere() string {
	home, cfg, err := f.loadConfig()
	if err != nil {
		return ""
	}
	return sessionsLocation(home, journalSetting(cfg))
}

func (f *memoryFlags) storeDir() (string, error) {
	if f.dir != "" {
		return filepath.Abs(f.dir)
	}
	home, err := config.Home()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "memory"), nil
}

func (f *memoryFlags) source() memory.Source {
	return memory.Source{Session: f.session, Source: "cli"}
}

// GloVeEnv names the environment variable that points at the offline word vectors
// (scripts/fetch-glove.sh writes them); see embed.GloVePaths for where they are
// looked for without it.
const GloVeEnv = embed.GloVeEnv

// newEmbedder builds the embedder --embedder asks for (default: the configured
// tools.memory.embedder); nil means BM25 only.
func (f *memoryFlags) newEmbedder(ctx context.Context) (memory.Embedder, error) {
	home, err := config.Home()
	if err != nil {
		return nil, err
	}
	spec := f.embedder
	if spec == "" {
		_, cfg, err := f.loadConfig()
		if err != nil {
			return nil, err
		}
		t, err := cfg.ToolsAt(home)
		if err != nil {
			return nil, err
		}
		spec = t.Memory.WithDefaults().Embedder
	}
	e, err := embed.Open(ctx, embed.Spec(spec), home)
	if err != nil {
		return nil, fmt.Errorf("--embedder: %w", err)
	}
	if e == nil {
		return nil, nil
	}
	return e, nil
}

// describeEmbedder names the active embedder for people.
func describeEmbedder(e memory.Embedder) string {
	if e == nil {
		return embed.Describe(nil)
	}
	return embed.Describe(e)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printRecord(w io.Writer, r *memory.Record) {
	fmt.Fprintf(w, "id:          %s\narea:        %s\n", r.ID, r.Area)
	if r.Key != "" {
		fmt.Fprintf(w, "key:         %s\n", r.Key)
	}
	if len(r.Tags) > 0 {
		fmt.Fprintf(w, "tags:        %s\n", strings.Join(r.Tags, ", "))
	}
	fmt.Fprintf(w, "status:      %s", r.Status)
	if r.SupersededBy != "" {
		fmt.Fprintf(w, " (superseded by %s)", r.SupersededBy)
	}
	fmt.Fprintf(w, "\ncreated:     %s\nupdated:     %s\nimportance:  %g\naccesses:    %d\n",
		r.Created.Format(time.RFC3339), r.Updated.Format(time.RFC3339), r.Importance, r.AccessCount)
	if len(r.Metadata) > 0 {
		b, _ := json.Marshal(r.Metadata)
		fmt.Fprintf(w, "metadata:    %s\n", b)
	}
	fmt.Fprintf(w, "text:\n%s\n", r.Text)
}

func memAddCmd(f *memoryFlags) *cobra.Command {
	var in memory.Input
	var tags, meta []string
	var importance float64
	cmd := &cobra.Command{
		Use:   "add TEXT...",
		Short: "Save a memory (with --key, update the one that has the key)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in.Text = strings.Join(args, " ")
			if in.Text == "-" {
				b, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return err
				}
				in.Text = string(b)
			}
			in.Tags = splitList(tags)
			if len(meta) > 0 {
				in.Metadata = map[string]any{}
				for _, kv := range meta {
					k, v, ok := strings.Cut(kv, "=")
					if !ok || k == "" {
						return fmt.Errorf("--meta %q: use KEY=VALUE", kv)
					}
					in.Metadata[k] = v
				}
			}
			if cmd.Flags().Changed("importance") {
				in.Importance = &importance
			}
			return f.withStore(cmd, func(s service.Remote) error {
				r, err := s.Put(cmd.Context(), in, f.source())
				if err != nil {
					return err
				}
				if f.json {
					return printJSON(cmd.OutOrStdout(), r)
				}
				fmt.Fprintln(cmd.OutOrStdout(), r.ID)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&in.Area, "area", memory.AreaMain, "area: main, fragments, solutions, library, ontology or a custom one")
	cmd.Flags().StringVar(&in.Key, "key", "", "key, unique within the area")
	cmd.Flags().StringVar(&in.ID, "id", "", "record id (default: new, or the key's record)")
	cmd.Flags().StringSliceVar(&tags, "tags", nil, "comma-separated tags")
	cmd.Flags().StringArrayVar(&meta, "meta", nil, "metadata KEY=VALUE (repeatable)")
	cmd.Flags().Float64Var(&importance, "importance", memory.DefaultImportance, "importance, 0 to 1")
	return cmd
}

func splitList(xs []string) []string {
	var out []string
	for _, x := range xs {
		for _, p := range strings.Split(x, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func memGetCmd(f *memoryFlags) *cobra.Command {
	var key, area string
	cmd := &cobra.Command{
		Use:   "get ID | get --key KEY [--area AREA]",
		Short: "Print a memory",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 0) == (key == "") {
				return errors.New("give an ID or --key")
			}
			return f.withStore(cmd, func(s service.Remote) error {
				var r *memory.Record
				var ok bool
				var err error
				if key != "" {
					if r, ok, err = s.GetByKey(cmd.Context(), area, key); err != nil {
						return err
					}
					if !ok {
						return fmt.Errorf("no memory with key %q in area %s", key, area)
					}
				} else if r, ok, err = s.Get(cmd.Context(), args[0]); err != nil {
					return err
				} else if !ok {
					return fmt.Errorf("no memory with id %s (deleted ones still have a history: exocortex memory why %s)", args[0], args[0])
				}
				if f.json {
					return printJSON(cmd.OutOrStdout(), r)
				}
				printRecord(cmd.OutOrStdout(), r)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "look up by key")
	cmd.Flags().StringVar(&area, "area", memory.AreaMain, "area of the key")
	return cmd
}

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

func idCmd(f *memoryFlags, use, short string, run func(cmd *cobra.Command, s service.Remote, id, reason string) (string, error)) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withStore(cmd, func(s service.Remote) error {
				msg, err := run(cmd, s, args[0], reason)
				if err != nil {
					return err
				}
				if f.json {
					return printJSON(cmd.OutOrStdout(), map[string]string{"id": args[0], "result": msg})
				}
				fmt.Fprintln(cmd.OutOrStdout(), msg)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, recorded in the journal")
	return cmd
}

func memDeleteCmd(f *memoryFlags) *cobra.Command {
	return idCmd(f, "delete ID", "Delete a memory (its history stays in the journal)", func(cmd *cobra.Command, s service.Remote, id, reason string) (string, error) {
		return "deleted " + id, s.Delete(cmd.Context(), id, reason, f.source())
	})
}

func memRestoreCmd(f *memoryFlags) *cobra.Command {
	return idCmd(f, "restore ID", "Make an archived memory active again", func(cmd *cobra.Command, s service.Remote, id, reason string) (string, error) {
		return "restored " + id, s.Restore(cmd.Context(), id, reason, f.source())
	})
}

func memArchiveCmd(f *memoryFlags) *cobra.Command {
	return idCmd(f, "archive ID", "Take a memory out of recall without deleting it", func(cmd *cobra.Command, s service.Remote, id, reason string) (string, error) {
		return "archived " + id, s.Archive(cmd.Context(), id, reason, "", f.source())
	})
}

func memForgetCmd(f *memoryFlags) *cobra.Command {
	var threshold float64
	var filter string
	cmd := &cobra.Command{
		Use:   "forget QUERY...",
		Short: "Delete the memories similar to a query (Agent Zero's memory_forget)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withStore(cmd, func(s service.Remote) error {
				msg, err := s.MemoryForget(cmd.Context(), strings.Join(args, " "), threshold, filter, f.source())
				if err != nil {
					return err
				}
				if f.json {
					return printJSON(cmd.OutOrStdout(), map[string]string{"result": msg})
				}
				fmt.Fprintln(cmd.OutOrStdout(), msg)
				return nil
			})
		},
	}
	cmd.Flags().Float64Var(&threshold, "threshold", memory.DefaultForgetThreshold, "similarity at or above which a memory is deleted")
	cmd.Flags().StringVar(&filter, "filter", "", "filter expression, e.g. \"area == 'main' and 'tmp' in tags\"")
	return cmd
}

func memImportCmd(f *memoryFlags) *cobra.Command {
	var allowBad bool
	cmd := &cobra.Command{
		Use:   "import FILE|-",
		Short: "Import JSONL records ({id?, area?, text, key?, tags?, metadata?, created?})",
		Long: `Import reads one JSON record per line; a record without an area goes to main,
as with memory add. Bad lines (not JSON, no text, not valid UTF-8, an invalid
area) are reported by number on stderr and skipped; the import goes on, and then
exits with status 1 so that a script notices, unless --allow-bad accepts them.
Progress goes to stderr: a bar on a terminal, plain lines otherwise.

Running an import again is safe: each line is known by its id, else its key, else
a hash of its line number and text, and lines already in the store are skipped. An
import that was killed half-way is finished by running it again.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var r io.Reader = cmd.InOrStdin()
			var size int64
			if args[0] != "-" {
				fh, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer fh.Close()
				if st, err := fh.Stat(); err == nil {
					size = st.Size()
				}
				r = fh
			}
			return f.withStore(cmd, func(s service.Remote) error {
				pr := newProgress(cmd.ErrOrStderr(), size)
				rep, err := s.Import(cmd.Context(), r, memory.Source{Session: f.session, Source: "import:" + filepath.Base(args[0])}, pr.update)
				pr.finish()
				if err != nil {
					return err
				}
				if f.json {
					if err := printJSON(cmd.OutOrStdout(), rep); err != nil {
						return err
					}
					return badImport(args[0], rep, allowBad)
				}
				for _, b := range rep.Bad {
					fmt.Fprintf(cmd.ErrOrStderr(), "%s:%d: %s\n", args[0], b.Line, b.Reason)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "imported %d records from %d lines; %d bad lines", rep.Imported, rep.Lines, len(rep.Bad))
				if rep.Skipped > 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "; %d already in the store (skipped)", rep.Skipped)
				}
				fmt.Fprintln(cmd.OutOrStdout())
				return badImport(args[0], rep, allowBad)
			})
		},
	}
	cmd.Flags().BoolVar(&allowBad, "allow-bad", false, "exit 0 although some lines were bad (they are still named on stderr, or in --json's \"bad\")")
	return cmd
}

// badImport is the error of an import with bad lines (exit status 1), or nil
// when there were none or --allow-bad accepts them. The lines themselves were
// named already, on stderr or in the JSON report.
func badImport(file string, rep memory.ImportReport, allowBad bool) error {
	if len(rep.Bad) == 0 || allowBad {
		return nil
	}
	return &exitError{code: 1, err: fmt.Errorf("%d of the %d lines of %s were not imported (each is named above, or in the report's \"bad\"): correct them and import the file again (the records already in are skipped), or pass --allow-bad to accept the import without them",
		len(rep.Bad), rep.Lines, file)}
}

// progress shows import progress on w: a redrawn bar when w is a terminal, else a
// plain line every few seconds.
type progress struct {
	w        io.Writer
	tty      bool
	size     int64
	start    time.Time
	last     time.Time
	lastLine memory.ImportProgress
	// drawn is the line count last drawn (drewAny: something was).
	drawn   int
	drewAny bool
}

func newProgress(w io.Writer, size int64) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	now := time.Now()
	// The first line waits for the interval too: a short import gets the
	// final line alone.
	return &progress{w: w, tty: tty, size: size, start: now, last: now}
}

func (p *progress) update(ip memory.ImportProgress) {
	p.lastLine = ip
	now := time.Now()
	every := 5 * time.Second
	if p.tty {
		every = 100 * time.Millisecond
	}
	if now.Sub(p.last) < every {
		return
	}
	p.last = now
	p.draw(false)
}

func (p *progress) draw(final bool) {
	ip := p.lastLine
	p.drawn, p.drewAny = ip.Lines, true
	rate := float64(ip.Imported) / max(time.Since(p.start).Seconds(), 1e-9)
	status := fmt.Sprintf("%d records, %d lines, %d bad, %.0f records/s", ip.Imported, ip.Lines, ip.Bad, rate)
	if !p.tty {
		fmt.Fprintf(p.w, "import: %s\n", status)
		return
	}
	bar := ""
	if p.size > 0 {
		frac := min(float64(ip.Bytes)/float64(p.size), 1)
		n := int(frac * 30)
		bar = fmt.Sprintf("[%s%s] %3.0f%% ", strings.Repeat("#", n), strings.Repeat(".", 30-n), frac*100)
	}
	fmt.Fprintf(p.w, "\r%s%s\x1b[K", bar, status)
	if final {
		fmt.Fprintln(p.w)
	}
}

// finish draws the final state, once: a plain line already showing it is
// not printed again (a bar is redrawn in place, and ended).
func (p *progress) finish() {
	if p.lastLine.Lines == 0 || (!p.tty && p.drewAny && p.drawn == p.lastLine.Lines) {
		return
	}
	p.draw(true)
}

func memExportCmd(f *memoryFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "export [FILE]",
		Short: "Write every memory as JSONL that import reads back (stdout without FILE)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withStore(cmd, func(s service.Remote) error {
				w := cmd.OutOrStdout()
				if len(args) == 1 {
					fh, err := os.Create(args[0])
					if err != nil {
						return err
					}
					defer fh.Close()
					w = fh
				}
				n, err := s.Export(cmd.Context(), w)
				if err != nil {
					return err
				}
				if len(args) == 1 {
					fmt.Fprintf(cmd.ErrOrStderr(), "exported %d records to %s\n", n, args[0])
				}
				return nil
			})
		},
	}
}

func memStatsCmd(f *memoryFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "stats",
		Short: "Count memories and show where each index stands",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withStore(cmd, func(s service.Remote) error {
				status, err := s.Stats(cmd.Context())
				if err != nil {
					return err
				}
				st := status.Stats
				if f.json {
					// owner_pid names the process serving the store (0: this
					// call opened it itself, no owner running).
					// journal is the file, or the shared stream; shared
					// (for a replica of a stream) adds its lag and promoter.
					// sessions names where the sessions live (the
					// home's directory, or the shared stream's bucket).
					journal := status.JournalPath
					if status.Shared != nil {
						journal = status.Shared.Journal
					}
					return printJSON(cmd.OutOrStdout(), struct {
						memory.Stats
						OwnerPID int                  `json:"owner_pid,omitempty"`
						Journal  string               `json:"journal,omitempty"`
						Shared   *memory.SharedStatus `json:"shared,omitempty"`
						Promoted bool                 `json:"promoted,omitempty"`
						Sessions string               `json:"sessions,omitempty"`
					}{st, status.OwnerPID, journal, status.Shared, status.Shared != nil && f.promoted(), f.sessionsWhere()})
				}
				w := cmd.OutOrStdout()
				fmt.Fprintf(w, "store:      %s\nrecords:    %d\n", st.Dir, st.Records)
				for _, a := range sortedKeys(st.ByArea) {
					fmt.Fprintf(w, "  area %-12s %d\n", a, st.ByArea[a])
				}
				for _, k := range sortedKeys(st.ByStatus) {
					fmt.Fprintf(w, "  status %-10s %d\n", k, st.ByStatus[k])
				}
				fmt.Fprintf(w, "embedder:   %s\n", st.Embedder)
				fmt.Fprintf(w, "journal:    seq %d, %d bytes\nfull-text:  seq %d, %d documents\nvectors:    %s\n",
					st.JournalSeq, st.JournalBytes, st.FulltextSeq, st.FulltextDocs, st.Vectors)
				if st.VectorModel != "" {
					fmt.Fprintf(w, "            model %s, seq %d, %d vectors\n", st.VectorModel, st.VectorSeq, st.VectorCount)
				}
				if st.SkippedEvents > 0 {
					fmt.Fprintf(w, "skipped:    %d events could not apply\n", st.SkippedEvents)
				}
				for _, k := range sortedKeys(st.UnknownEvents) {
					fmt.Fprintf(w, "unknown:    %d %s events (written by a newer version)\n", st.UnknownEvents[k], k)
				}
				if sh := status.Shared; sh != nil {
					fmt.Fprintf(w, "shared:     %s\n", sh.Journal)
					if sh.Offline != "" {
						fmt.Fprintf(w, "            unreachable (%s): searches answer from this host's copy, writes are refused\n", sh.Offline)
					} else {
						fmt.Fprintf(w, "            stream seq %d, this host at %d, lag %d\n", sh.StreamSeq, sh.Applied, sh.Lag)
					}
					fmt.Fprintf(w, "promoter:   %s\n", promoterLine(sh.Promoter, f.promoted()))
				} else if status.JournalPath != "" {
					fmt.Fprintf(w, "journal at: %s (local)\n", status.JournalPath)
				}
				if where := f.sessionsWhere(); where != "" {
					fmt.Fprintf(w, "sessions:   %s\n", where)
				}
				fmt.Fprintf(w, "state hash: %s\n", st.StateHash)
				return nil
			})
		},
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func memReplayCmd(f *memoryFlags) *cobra.Command {
	var verify, keep bool
	var scratch string
	cmd := &cobra.Command{
		Use:   "replay --verify",
		Short: "Rebuild everything from journal sequence 1 in a scratch directory and compare state hashes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !verify {
				return errors.New("replay only runs with --verify (the live store is never replaced)")
			}
			return f.withStore(cmd, func(s service.Remote) error {
				dir := scratch
				if dir == "" {
					d, err := os.MkdirTemp("", "exocortex-replay-")
					if err != nil {
						return err
					}
					dir = d
				}
				if !keep {
					defer os.RemoveAll(dir)
				}
				status, err := s.Stats(cmd.Context())
				if err != nil {
					return err
				}
				live := status.Stats
				e, err := f.newEmbedder(cmd.Context())
				if err != nil {
					return err
				}
				rep, err := memory.Replay(cmd.Context(), status.JournalPath, dir, memory.Options{Embedder: e, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					return err
				}
				matches := rep.StateHash == live.StateHash && rep.Records == live.Records && rep.FulltextDocs == live.FulltextDocs &&
					(e == nil || rep.Vectors == live.VectorCount)
				if err := s.Check(cmd.Context(), false, true); err != nil {
					rep.Anomalies = append(rep.Anomalies, "live "+err.Error())
				}
				if err := s.Check(cmd.Context(), true, false); err != nil {
					rep.Anomalies = append(rep.Anomalies, "live "+err.Error())
				}
				ok := matches && len(rep.Anomalies) == 0
				out := map[string]any{"ok": ok, "matches": matches, "live_hash": live.StateHash, "replay_hash": rep.StateHash, "events": rep.Events,
					"records": rep.Records, "fulltext_docs": rep.FulltextDocs, "live_fulltext_docs": live.FulltextDocs,
					"vectors": rep.Vectors, "live_vectors": live.VectorCount,
					"seconds": rep.Duration.Seconds(), "scratch": dir, "anomalies": rep.Anomalies, "gaps": rep.Gaps, "repaired_at_open": live.Notices}
				if f.json {
					if err := printJSON(cmd.OutOrStdout(), out); err != nil {
						return err
					}
				} else {
					w := cmd.OutOrStdout()
					fmt.Fprintf(w, "replayed %d events into %s in %.2fs\nrecords:     %d (live %d)\nfull-text:   %d documents (live %d)\nvectors:     %d (live %d)\nreplay hash: %s\nlive hash:   %s\n",
						rep.Events, dir, rep.Duration.Seconds(), rep.Records, live.Records, rep.FulltextDocs, live.FulltextDocs,
						rep.Vectors, live.VectorCount, rep.StateHash, live.StateHash)
				}
				if !f.json {
					for _, n := range live.Notices {
						fmt.Fprintf(cmd.OutOrStdout(), "repaired at open: %s\n", n)
					}
					for _, a := range rep.Anomalies {
						fmt.Fprintf(cmd.OutOrStdout(), "ANOMALY: %s\n", a)
					}
				}
				if !matches {
					return &exitError{code: 2, err: errors.New("replay does not match the live store: run `exocortex memory stats` and report the journal")}
				}
				if len(rep.Anomalies) > 0 {
					return &exitError{code: 2, err: fmt.Errorf("the replay matches the live store, but the journal has %d anomalies (listed above)", len(rep.Anomalies))}
				}
				if !f.json {
					fmt.Fprintln(cmd.OutOrStdout(), "OK: the replay matches the live store")
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&verify, "verify", false, "rebuild into a scratch directory and compare (required)")
	cmd.Flags().StringVar(&scratch, "scratch", "", "scratch directory (default a new temporary one)")
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the scratch directory")
	return cmd
}

func memWhyCmd(f *memoryFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "why ID",
		Short: "Show a memory's provenance and its history from the journal",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withStore(cmd, func(s service.Remote) error {
				id := args[0]
				r, exists, err := s.Get(cmd.Context(), id)
				if err != nil {
					return err
				}
				hist, err := s.History(cmd.Context(), id)
				if err != nil {
					return err
				}
				if !exists && len(hist) == 0 {
					return fmt.Errorf("no memory %s, and the journal never mentions it", id)
				}
				if f.json {
					return printJSON(cmd.OutOrStdout(), map[string]any{"record": r, "history": hist})
				}
				w := cmd.OutOrStdout()
				if exists {
					p := r.Provenance
					fmt.Fprintf(w, "%s: %s in area %s\ncreated by seq %d", id, r.Status, r.Area, p.Seq)
					if p.Session != "" {
						fmt.Fprintf(w, ", session %s", p.Session)
					}
					if p.Message != "" {
						fmt.Fprintf(w, ", message %s", p.Message)
					}
					if p.Source != "" {
						fmt.Fprintf(w, ", source %s", p.Source)
					}
					fmt.Fprintf(w, "; last changed by seq %d\n", p.UpdatedSeq)
				} else {
					fmt.Fprintf(w, "%s: deleted\n", id)
				}
				fmt.Fprintln(w, "history:")
				for _, h := range hist {
					fmt.Fprintf(w, "  seq %-8s %s  %-20s %s\n", strconv.FormatUint(h.Seq, 10), h.TS.Format(time.RFC3339), h.Kind, h.Summary())
				}
				return nil
			})
		},
	}
}
