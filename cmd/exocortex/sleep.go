package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/sleep"
)

// sleepFlags are the flags of exocortex sleep.
type sleepFlags struct {
	dryRun, json, ifRequested bool
	phases                    string
	dir, embedder             string
	staging, relationships    string
	reports, now              string
	wait                      time.Duration
	model                     string
	areas, consolidateAreas   []string
	dedup, related, corrob    float64
	decay                     float64
	halfLives                 []string
}

// exitBusy is the exit status when another process holds the store, so that a
// timer can tell "try later" from a failure.
const exitBusy = 3

func newSleepCmd() *cobra.Command {
	f := &sleepFlags{}
	cmd := &cobra.Command{
		Use:   "sleep",
		Short: "Consolidate the long-term memory: ingest, merge duplicates, summarise, decay, adjudicate loop memories, resolve entities",
		Long: `Sleep runs the memory's consolidation as a batch, in phases:

  0 ingest       staging.jsonl entries since the last run become memories
  1 dedup        near-duplicates within an area merge into one canonical record
  2 consolidate  clusters of related records gain a summary record
  3 decay        records whose strength (importance, age, use) fell below the
                 threshold are archived; pinned ones (tag "pinned") are exempt
  4 loop         records written during a loop (tag loop_period) are kept when a
                 record from outside the loop corroborates them, else quarantined
  5 ontology     entity names are resolved; relationships.jsonl follows

Nothing is deleted: archived records come back with "exocortex memory restore ID",
and "exocortex memory why ID" shows the journal events behind any change. A run is
deterministic and resumable: a run that was killed is finished by the next one, and
a run right after a run changes nothing. --dry-run plans on a private overlay of the store's
records (nothing is written, copied or replayed) and prints the plan. The report goes to $EXOCORTEX_HOME/sleep_reports/RUN.md (and to
stdout as JSON with --json). Progress goes to stderr.

The running session never consolidates by itself: its sleep trigger writes
$EXOCORTEX_HOME/sleep/request.json, and "exocortex sleep --if-requested" (from a
timer) runs only when such a request is pending. Sleep goes through the home's
memory service: while a session serves the store, sleep is its client; with none
running, sleep serves it for the run. Only a process that holds the store without
serving it (an Exocortex older than the memory service) makes sleep exit with
status 3; --wait bounds how long it waits for an owner to answer.

Rules and thresholds: docs/sleep.md.`,
		Example: `  exocortex sleep --dry-run
  exocortex sleep --json > sleep.json
  exocortex sleep --phases ingest,dedup
  exocortex sleep --if-requested --wait 5m      # from a timer`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runSleep(cmd, f) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.dryRun, "dry-run", false, "change nothing: run on a copy of the store and print the plan")
	fl.StringVar(&f.phases, "phases", "all", `phases to run: numbers, names or ranges, e.g. "0,1", "dedup-decay"`)
	fl.BoolVar(&f.json, "json", false, "print the report as JSON on stdout")
	fl.BoolVar(&f.ifRequested, "if-requested", false, "run only when the sleep trigger left a request ($EXOCORTEX_HOME/"+sleep.RequestFile+")")
	fl.StringVar(&f.dir, "dir", "", "memory store directory (default $EXOCORTEX_HOME/memory)")
	fl.StringVar(&f.embedder, "embedder", "auto", `vectors: "auto" (the full offline GloVe file if found, else the compact table built in), "none", "glove:PATH", "glove:compact", "ollama:MODEL" or "openai:MODEL"`)
	fl.StringVar(&f.staging, "staging", "", "staging log to ingest (default $EXOCORTEX_HOME/staging.jsonl)")
	fl.StringVar(&f.relationships, "relationships", "", "ontology relationships log (default $EXOCORTEX_HOME/ontology/relationships.jsonl)")
	fl.StringVar(&f.reports, "reports", "", "directory for the Markdown report (default $EXOCORTEX_HOME/sleep_reports)")
	fl.StringVar(&f.now, "now", "", "the run's time (RFC 3339), for reproducible runs; default now")
	fl.DurationVar(&f.wait, "wait", 0, "wait this long for the store's owner to answer (0: 15s)")
	fl.StringVar(&f.model, "model", "", `write cluster summaries with this model of the configured provider, "config" (utility_model, else the chat model) or "script:FILE"; default: extractive`)
	fl.StringSliceVar(&f.areas, "areas", nil, "areas for dedup, consolidation and loop adjudication (default all but library and ontology)")
	fl.StringSliceVar(&f.consolidateAreas, "consolidate-areas", nil, "areas whose related records gain summaries (default main,fragments)")
	fl.Float64Var(&f.dedup, "dedup-similarity", 0, "vector similarity for duplicate candidates (default 0.75; 0.70 with lexical vectors)")
	fl.Float64Var(&f.related, "related-similarity", 0, "vector similarity for related records (default 0.75; 0.50 with lexical vectors)")
	fl.Float64Var(&f.corrob, "corroborate-similarity", 0, "vector similarity for corroborating records (default 0.65; 0.50 with lexical vectors)")
	fl.Float64Var(&f.decay, "decay-threshold", 0, "strength below which a record is archived (default 0.10)")
	fl.StringArrayVar(&f.halfLives, "half-life", nil, `half-life of an area's strength, AREA=DAYS (repeatable; 0 never decays); defaults main=180, fragments=30, solutions=365, others 90`)
	return cmd
}

func runSleep(cmd *cobra.Command, f *sleepFlags) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	phases, err := sleep.ParsePhases(f.phases)
	if err != nil {
		return err
	}
	params, err := f.params()
	if err != nil {
		return err
	}
	home, err := config.Home()
	if err != nil {
		return err
	}
	mf := &memoryFlags{dir: f.dir, embedder: f.embedder}
	dir, err := mf.storeDir()
	if err != nil {
		return err
	}
	orHome := func(v, rel string) string {
		if v != "" {
			return v
		}
		return filepath.Join(home, rel)
	}
	requestPath := filepath.Join(home, sleep.RequestFile)
	if f.ifRequested && sleep.Pending(home) == nil {
		if f.json {
			return printJSON(cmd.OutOrStdout(), map[string]any{"ran": false, "reason": "no sleep requested", "request": requestPath})
		}
		fmt.Fprintf(cmd.OutOrStdout(), "no sleep requested (%s does not exist): nothing to do\n", requestPath)
		return nil
	}
	var now time.Time
	if f.now != "" {
		if now, err = time.Parse(time.RFC3339, f.now); err != nil {
			return fmt.Errorf("--now %q: want an RFC 3339 time such as 2026-11-21T12:00:00Z", f.now)
		}
	}
	e, err := mf.newEmbedder(ctx)
	if err != nil {
		return err
	}
	summarizer, stop, err := sleepSummarizer(f.model, mf.loadConfig)
	if err != nil {
		return err
	}
	defer stop()
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(sleep.MemoryLimit)
	}
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	pr := newSleepProgress(cmd.ErrOrStderr())
	shared, err := mf.sharedJournal(log)
	if err != nil {
		return err
	}
	cfg := sleep.Config{
		StoreDir:          dir,
		Store:             memory.Options{Embedder: e, Logger: log, OpenJournal: shared},
		StagingPath:       orHome(f.staging, "staging.jsonl"),
		RelationshipsPath: orHome(f.relationships, filepath.Join("ontology", "relationships.jsonl")),
		ReportDir:         orHome(f.reports, "sleep_reports"),
		RequestPath:       requestPath,
		Phases:            phases,
		Params:            params,
		Now:               now,
		DryRun:            f.dryRun,
		Wait:              f.wait,
		Summarizer:        summarizer,
		Progress:          pr.update,
		Logger:            log,
	}
	rep, err := sleep.Run(ctx, cfg)
	pr.finish()
	if err != nil {
		if errors.Is(err, sleep.ErrStoreBusy) {
			return &exitError{code: exitBusy, err: err}
		}
		return err
	}
	w := cmd.OutOrStdout()
	if f.json {
		return rep.WriteJSON(w)
	}
	if f.dryRun {
		return rep.WriteMarkdown(w)
	}
	printSleepSummary(w, rep)
	return nil
}

// params builds the thresholds from the flags (zero: the run's default).
func (f *sleepFlags) params() (sleep.Params, error) {
	p := sleep.Params{Areas: splitList(f.areas), ConsolidateAreas: splitList(f.consolidateAreas),
		DedupSimilarity: f.dedup, RelatedSimilarity: f.related, CorroborateSimilarity: f.corrob, DecayThreshold: f.decay}
	for _, hl := range f.halfLives {
		area, days, ok := strings.Cut(hl, "=")
		d, err := strconv.ParseFloat(strings.TrimSpace(days), 64)
		if !ok || err != nil || d < 0 || strings.TrimSpace(area) == "" {
			return p, fmt.Errorf("--half-life %q: use AREA=DAYS, e.g. fragments=30 (0: the area never decays)", hl)
		}
		if p.HalfLifeDays == nil {
			p.HalfLifeDays = map[string]float64{}
		}
		p.HalfLifeDays[strings.TrimSpace(area)] = d
	}
	return p, nil
}

// sleepSummarizer returns the model summarizer --model asks for (nil:
// extractive), served by the configured provider (Ollama or an
// OpenAI-compatible server; a scripted one for "script:FILE").
// load is the command's configuration, read once (memoryFlags.loadConfig).
func sleepSummarizer(model string, load func() (string, config.Config, error)) (sleep.Summarizer, func(), error) {
	if model == "" {
		return nil, func() {}, nil
	}
	_, cfg, err := load()
	if err != nil {
		return nil, nil, fmt.Errorf("--model %s: %w", model, err)
	}
	if model == "config" {
		model = cfg.UtilityModel
		if model == "" {
			model = cfg.Model
		}
		if model == "" {
			return nil, nil, fmt.Errorf("--model config: no model is configured (set utility_model or model in %s, or %s)", config.FileName, config.EnvModel)
		}
	}
	c, name, stop, err := openModel(cfg, model, nil)
	if err != nil {
		return nil, nil, err
	}
	return &sleep.ModelSummarizer{Client: c, Model: name}, stop, nil
}

func printSleepSummary(w io.Writer, rep *sleep.Report) {
	fmt.Fprintf(w, "sleep run %s", rep.Run)
	if rep.Resumed {
		fmt.Fprint(w, " (resumed)")
	}
	fmt.Fprintf(w, ": %d changes\n", rep.Changes)
	for _, p := range rep.Phases {
		if p.Status == "not asked" {
			continue
		}
		var parts []string
		for _, k := range sortedKeys(p.Counts) {
			if !strings.Contains(k, ":") {
				parts = append(parts, fmt.Sprintf("%s %d", strings.ReplaceAll(k, "_", " "), p.Counts[k]))
			}
		}
		fmt.Fprintf(w, "  %d %-12s %5d changes  %s\n", p.Phase, p.Phase, p.Changes, strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "records: %d active, %d archived (were %d, %d)\n", rep.After.Active, rep.After.Archived, rep.Before.Active, rep.Before.Archived)
	for _, n := range rep.Notices {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if rep.ReportPath != "" {
		fmt.Fprintf(w, "report: %s\n", rep.ReportPath)
	}
}

// sleepProgress shows each phase's progress on w: a redrawn line when w is a
// terminal, otherwise a plain line when a phase starts, every few seconds, and
// when it ends. It is called from several goroutines.
type sleepProgress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	phase sleep.Phase
	step  string
	last  time.Time
	start time.Time
	drawn bool
}

func newSleepProgress(w io.Writer) *sleepProgress {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &sleepProgress{w: w, tty: tty, phase: -1}
}

func (p *sleepProgress) update(pr sleep.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if pr.Phase != p.phase {
		if p.tty && p.drawn {
			fmt.Fprintln(p.w)
		}
		p.phase, p.step, p.start, p.last = pr.Phase, "", now, time.Time{}
		if !p.tty {
			fmt.Fprintf(p.w, "sleep: phase %d %s\n", pr.Phase, pr.Phase)
		}
	}
	if pr.Step == "done" {
		if p.tty {
			fmt.Fprintf(p.w, "\r[%d %s] done in %.1fs\x1b[K\n", pr.Phase, pr.Phase, time.Since(p.start).Seconds())
			p.drawn = false
		} else {
			fmt.Fprintf(p.w, "sleep: phase %d %s done in %.1fs\n", pr.Phase, pr.Phase, time.Since(p.start).Seconds())
		}
		return
	}
	every := 5 * time.Second
	if p.tty {
		every = 100 * time.Millisecond
	}
	if pr.Step == p.step && now.Sub(p.last) < every && pr.Done != pr.Total {
		return
	}
	p.step, p.last = pr.Step, now
	status := fmt.Sprintf("%s %d", pr.Step, pr.Done)
	if pr.Total > 0 {
		status = fmt.Sprintf("%s %d/%d", pr.Step, pr.Done, pr.Total)
	}
	if !p.tty {
		fmt.Fprintf(p.w, "sleep: phase %d %s: %s\n", pr.Phase, pr.Phase, status)
		return
	}
	bar := ""
	if pr.Total > 0 {
		frac := min(float64(pr.Done)/float64(pr.Total), 1)
		n := int(frac * 24)
		bar = fmt.Sprintf("[%s%s] ", strings.Repeat("#", n), strings.Repeat(".", 24-n))
	}
	fmt.Fprintf(p.w, "\r[%d %s] %s%s\x1b[K", pr.Phase, pr.Phase, bar, status)
	p.drawn = true
}

func (p *sleepProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drawn {
		fmt.Fprintln(p.w)
	}
}
