package sleep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/service"
	"github.com/exocortex/exocortex/staging"
)

// Config configures a run.
type Config struct {
	// StoreDir is the memory store's directory.
	StoreDir string
	// Store are the options the store is opened with (embedder, logger, fsync
	// policy) when the run becomes its owner (no session serves it). Every
	// event of a run carries the run's time (staging.Entry.TS).
	Store memory.Options
	// StagingPath is staging.jsonl, which the ingest phase reads ("" reads
	// nothing).
	StagingPath string
	// RelationshipsPath is the ontology's relationships.jsonl, which the
	// ontology phase appends resolved relationships to ("" leaves it alone).
	RelationshipsPath string
	// ReportDir receives RUN.md ("" writes no file).
	ReportDir string
	// RequestPath is the sleep trigger's request file; a real run that
	// finishes removes it (unless a newer request replaced it meanwhile).
	RequestPath string
	// Phases to run (nil: all). A resumed run keeps the phases it began with.
	Phases []Phase
	// Params are the thresholds; zero fields take their defaults.
	Params Params
	// Now fixes the run's time (default: the time the run starts). Ages,
	// decay and every event's time stamp use it.
	Now time.Time
	// DryRun plans on an overlay of the store's records and changes nothing.
	DryRun bool
	// Wait bounds how long to wait for the store's owner to answer (0: the
	// memory service's default).
	Wait time.Duration
	// Summarizer writes cluster summaries (nil: extractive, deterministic).
	Summarizer Summarizer
	// Progress receives progress reports (nil: none).
	Progress func(Progress)
	// Logger receives notices (nil: discarded).
	Logger *slog.Logger
	// BatchSize bounds the memory events per journal write (default 500).
	BatchSize int
	// OnCommit is called after every journal write of the run with the number
	// of journal records this process has written so far.
	OnCommit func(written int)

	dryRun bool // set by runDry on the copy's configuration
}

// Progress is a report of a phase's progress.
type Progress struct {
	Phase Phase
	// Step names what the phase is doing: "reading staging.jsonl",
	// "indexing", "neighbours", "planning", "writing", "done".
	Step        string
	Done, Total int
}

// ErrStoreBusy is wrapped by the error Run returns when a process that does
// not serve the store (one older than the memory service) holds it.
var ErrStoreBusy = errors.New("the memory store is held by another process")

// BusyError says who holds the store and what to do.
type BusyError struct {
	Dir    string
	Holder error // the lock error, naming the process
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%v: %v. A process that holds the store without serving it (an Exocortex older than the "+
		"memory service) must end first: run the sleep again then, or give --wait to wait longer for an owner to answer", ErrStoreBusy, e.Holder)
}

func (e *BusyError) Unwrap() []error { return []error{ErrStoreBusy, e.Holder} }

// runClock is the store's clock during a run: the run's fixed time.
type runClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *runClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func (c *runClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Run runs (or resumes, or with DryRun plans) a sleep consolidation and
// returns its report. It opens the store itself and closes it before returning.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Store.Logger == nil {
		cfg.Store.Logger = cfg.Logger
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 500
	}
	if cfg.DryRun {
		return runDry(ctx, cfg, start)
	}
	return runStore(ctx, cfg, start)
}

func runStore(ctx context.Context, cfg Config, start time.Time) (rep *Report, err error) {
	now := cfg.Now
	if now.IsZero() {
		now = time.Now()
	}
	now = now.UTC().Truncate(time.Microsecond)
	clock := &runClock{}
	clock.set(now)
	var store memStore
	var emb memory.Embedder
	journalPath := filepath.Join(cfg.StoreDir, memory.JournalFile)
	missing := false
	if _, serr := os.Stat(cfg.StoreDir); cfg.dryRun && errors.Is(serr, fs.ErrNotExist) {
		// A dry run creates nothing: there is no store yet, so it plans on
		// an empty one.
		missing = true
	} else {
		c, err := connectStore(ctx, cfg.StoreDir, cfg.Store, cfg.Wait)
		if err != nil {
			return nil, err
		}
		defer func() {
			if cerr := c.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("sleep: closing the store: %w", cerr)
			}
		}()
		remote := service.Remote{C: c}
		st, err := remote.Stats(ctx)
		if err != nil {
			return nil, fmt.Errorf("sleep: the memory store %s: %w", cfg.StoreDir, err)
		}
		journalPath = st.JournalPath
		if emb, err = embedderOf(ctx, remote); err != nil {
			return nil, err
		}
		store = serviceStore{r: remote}
	}
	if cfg.dryRun {
		if store, err = newDryStore(ctx, store, clock.now); err != nil {
			return nil, err
		}
	}
	defer func() {
		if rep != nil {
			rep.Seconds = time.Since(start).Seconds()
			if missing {
				rep.Notices = append(rep.Notices, "dry run: there is no store in "+cfg.StoreDir+" yet; a real run would create an empty one")
			}
		}
	}()
	var reqBytes []byte
	var req *Request
	if cfg.RequestPath != "" {
		req, reqBytes = readRequest(cfg.RequestPath)
	}
	r := &runner{cfg: cfg, store: store, emb: emb, journal: journalPath, clock: clock, now: now, lx: newLexicon(), request: req}
	rep, err = r.execute(ctx)
	if err != nil {
		return rep, err
	}
	rep.Store = cfg.StoreDir
	if cfg.ReportDir != "" {
		path, err := writeReportFiles(cfg.ReportDir, rep)
		if err != nil {
			return rep, err
		}
		rep.ReportPath = path
	}
	if reqBytes != nil {
		// Taken: remove it, unless the trigger wrote a newer one meanwhile.
		if cur, err := os.ReadFile(cfg.RequestPath); err == nil && string(cur) == string(reqBytes) {
			os.Remove(cfg.RequestPath)
		}
	}
	return rep, nil
}

// runDry plans a run on an overlay of the store (see dryStore) and reports
// what it would do. The store is read through its memory service and never
// written; the relationships file is copied to a scratch directory, where the
// ontology phase appends to the copy.
func runDry(ctx context.Context, cfg Config, start time.Time) (*Report, error) {
	scratch, err := os.MkdirTemp("", "exocortex-sleep-dry-")
	if err != nil {
		return nil, fmt.Errorf("sleep: dry run: %w", err)
	}
	defer os.RemoveAll(scratch)
	real := cfg
	cfg.ReportDir = ""
	cfg.RequestPath = ""
	if real.RelationshipsPath != "" {
		cfg.RelationshipsPath = filepath.Join(scratch, "relationships.jsonl")
		if err := copyFile(real.RelationshipsPath, cfg.RelationshipsPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("sleep: dry run: copying %s: %w", real.RelationshipsPath, err)
		}
	}
	cfg.dryRun = true
	rep, err := runStore(ctx, cfg, start)
	if rep != nil {
		rep.DryRun = true
		rep.Store = real.StoreDir
		if real.RequestPath != "" {
			rep.Request, _ = readRequest(real.RequestPath)
		}
	}
	return rep, err
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// runner is one run in one process.
type runner struct {
	cfg     Config
	store   memStore
	emb     memory.Embedder // the owner's, nil without one
	journal string          // the journal's path, read for the runs' own records
	clock   *runClock
	now     time.Time
	lx      *lexicon
	request *Request

	run     string
	params  Params
	phases  []Phase
	resumed bool
	src     *vectorSource
	jv      *journalView
	inc     *runRecord
	begun   bool
	prior   []PhaseSummary
	written int
	changes int
	plan    []Change
	notices []string

	// The phase being planned: a snapshot of the records and what is derived
	// from them.
	recs   []*memory.Record
	byID   map[string]*memory.Record
	infos  map[string]cachedInfo
	ix     *index
	phase  Phase
	sumErr int
}

type cachedInfo struct {
	text string
	info *textInfo
}

func (r *runner) execute(ctx context.Context) (*Report, error) {
	jv, err := readJournal(ctx, r.journal)
	if err != nil {
		return nil, err
	}
	r.jv = jv
	r.src = newVectorSource(r.store, r.emb, r.lx)
	summarizer := "extractive (the most central sentences of the cluster)"
	if r.cfg.Summarizer != nil {
		summarizer = r.cfg.Summarizer.Name()
	}
	if inc := jv.incomplete(); inc != nil {
		r.inc, r.resumed, r.begun = inc, true, true
		r.run, r.now, r.params, r.phases = inc.begin.Run, inc.begin.Now, inc.begin.Params, inc.begin.Phases
		r.clock.set(r.now)
		r.prior = inc.begin.Prior
		if r.request == nil {
			r.request = inc.begin.Request
		}
		r.notices = append(r.notices, fmt.Sprintf("resumed run %s (begun %s): it keeps its own time, phases and thresholds",
			r.run, inc.begin.Started.UTC().Format(time.RFC3339)))
		if inc.begin.Vectors != r.src.describe() {
			r.notices = append(r.notices, fmt.Sprintf("the run began with vectors from %s, now %s: neighbours may differ from the first attempt's",
				inc.begin.Vectors, r.src.describe()))
		}
	} else {
		seq, err := r.store.Seq(ctx)
		if err != nil {
			return nil, err
		}
		r.run = fmt.Sprintf("%s-%d", r.now.Format("20060102T150405Z"), seq)
		r.params = r.cfg.Params.withDefaults(r.src.lexical)
		r.phases = r.cfg.Phases
		if len(r.phases) == 0 {
			r.phases = AllPhases()
		}
		if err := r.params.check(); err != nil {
			return nil, err
		}
	}
	rep := &Report{Run: r.run, Now: r.now, Resumed: r.resumed, Vectors: r.src.describe(), Summarizer: summarizer,
		Params: r.params, Request: r.request}
	before, err := r.store.Records(ctx)
	if err != nil {
		return nil, err
	}
	rep.Before = shapeOf(before, r.now)
	before = nil

	for p := Ingest; p < numPhases; p++ {
		if !slices.Contains(r.phases, p) {
			rep.Phases = append(rep.Phases, PhaseReport{PhaseSummary: PhaseSummary{Phase: p}, Status: "not asked"})
			continue
		}
		t0 := time.Now()
		pr, err := r.runPhase(ctx, p)
		pr.Seconds = time.Since(t0).Seconds()
		rep.Phases = append(rep.Phases, pr)
		r.progress(p, "done", 1, 1)
		if err != nil {
			rep.Written, rep.Notices = r.written, r.notices
			return rep, err
		}
		r.changes += pr.Changes
	}
	if r.begun {
		if err := r.record(ctx, KindDone, doneEvent{Run: r.run, Changes: r.changes}); err != nil {
			return rep, err
		}
	}
	after, err := r.store.Records(ctx)
	if err != nil {
		return rep, err
	}
	rep.After = shapeOf(after, r.now)
	rep.Changes, rep.Written = r.changes, r.written
	if rep.StateHash, err = r.store.Hash(ctx); err != nil {
		return rep, err
	}
	rep.Notices = append(r.notices, r.store.Notices(ctx)...)
	if r.cfg.dryRun {
		sortChanges(r.plan)
		rep.Plan = r.plan
	}
	return rep, nil
}

// runPhase plans and applies one phase, or finishes the plan an earlier
// process journaled.
func (r *runner) runPhase(ctx context.Context, p Phase) (PhaseReport, error) {
	r.phase = p
	if r.inc != nil {
		if plan := r.inc.plans[p]; plan != nil {
			done := r.inc.applied[p]
			if done > len(plan.Events) {
				return PhaseReport{PhaseSummary: plan.Summary}, fmt.Errorf("sleep: run %s, phase %s: the journal holds %d of its events but its plan has %d; "+
					"refusing to resume (start a new run after checking `exocortex memory stats`)", r.run, p, done, len(plan.Events))
			}
			status := "done earlier"
			if done < len(plan.Events) {
				status = "resumed"
				if err := r.apply(ctx, p, plan.Events[done:]); err != nil {
					return PhaseReport{PhaseSummary: plan.Summary, Status: status}, err
				}
			}
			r.noteChanges(p, plan.Events)
			if p == Ontology {
				r.syncRelationships(ctx, &plan.Summary)
			}
			return PhaseReport{PhaseSummary: plan.Summary, Status: status}, nil
		}
		for _, s := range r.prior {
			if s.Phase == p {
				if p == Ontology {
					r.syncRelationships(ctx, &s)
				}
				return PhaseReport{PhaseSummary: s, Status: "done earlier"}, nil
			}
		}
	}
	if err := r.refresh(ctx); err != nil {
		return PhaseReport{PhaseSummary: PhaseSummary{Phase: p}, Status: "ran"}, err
	}
	sum, events, err := r.planPhase(ctx, p)
	if err != nil {
		return PhaseReport{PhaseSummary: sum, Status: "ran"}, err
	}
	sum.Phase, sum.Changes = p, len(events)
	if len(events) > 0 || r.begun {
		if !r.begun {
			if err := r.record(ctx, KindRun, runEvent{Run: r.run, Now: r.now, Params: r.params, Phases: r.phases, Vectors: r.src.describe(),
				Prior: r.prior, Request: r.request, Started: time.Now().UTC()}); err != nil {
				return PhaseReport{PhaseSummary: sum, Status: "ran"}, err
			}
			r.begun = true
		}
		if err := r.record(ctx, KindPlan, planEvent{Run: r.run, Phase: p, Summary: sum, Events: events}); err != nil {
			return PhaseReport{PhaseSummary: sum, Status: "ran"}, err
		}
		if err := r.apply(ctx, p, events); err != nil {
			return PhaseReport{PhaseSummary: sum, Status: "ran"}, err
		}
	} else {
		r.prior = append(r.prior, sum)
	}
	r.noteChanges(p, events)
	if p == Ontology {
		r.syncRelationships(ctx, &sum)
	}
	return PhaseReport{PhaseSummary: sum, Status: "ran"}, nil
}

func (r *runner) planPhase(ctx context.Context, p Phase) (PhaseSummary, []plannedEvent, error) {
	switch p {
	case Ingest:
		return r.planIngest(ctx)
	case Dedup:
		return r.planDedup(ctx)
	case Consolidate:
		return r.planConsolidate(ctx)
	case Decay:
		return r.planDecay(ctx)
	case Loop:
		return r.planLoop(ctx)
	case Ontology:
		return r.planOntology(ctx)
	}
	return PhaseSummary{}, nil, fmt.Errorf("sleep: no phase %d", p)
}

// refresh takes a snapshot of the records for the phase about to be planned.
func (r *runner) refresh(ctx context.Context) error {
	r.recs, r.byID = nil, nil // let the last snapshot go first
	recs, err := r.store.Records(ctx)
	if err != nil {
		return fmt.Errorf("sleep: reading the records: %w", err)
	}
	r.recs = recs
	r.byID = make(map[string]*memory.Record, len(r.recs))
	for _, rec := range r.recs {
		r.byID[rec.ID] = rec
	}
	if r.infos == nil {
		r.infos = map[string]cachedInfo{}
	}
	return nil
}

// info returns the lexical analysis of a record's text.
func (r *runner) info(rec *memory.Record) *textInfo {
	if c, ok := r.infos[rec.ID]; ok && c.text == rec.Text {
		return c.info
	}
	ti := r.lx.analyse(rec.Text)
	r.infos[rec.ID] = cachedInfo{text: rec.Text, info: ti}
	return ti
}

// index returns the run's vector index, building it on first use. Its members
// are the records of the work areas that are not summaries, whatever their
// status: a set the phases after ingest never change.
func (r *runner) index(ctx context.Context) (*index, error) {
	if r.ix != nil {
		return r.ix, nil
	}
	var members []*memory.Record
	for _, rec := range r.recs {
		if r.params.workArea(rec.Area) && !isSummary(rec) {
			members = append(members, rec)
		}
	}
	ix, err := buildIndex(ctx, r.src, members, r.params.Neighbours, func(done, total int) { r.progress(r.phase, "indexing", done, total) })
	if err != nil {
		return nil, err
	}
	r.ix = ix
	return ix, nil
}

// apply writes a phase's events in batches.
func (r *runner) apply(ctx context.Context, p Phase, events []plannedEvent) error {
	bs := r.cfg.BatchSize
	for start := 0; start < len(events); start += bs {
		chunk := events[start:min(start+bs, len(events))]
		entries := make([]staging.Entry, len(chunk))
		for i, e := range chunk {
			entries[i] = staging.Entry{Kind: e.Kind, Session: runSession(r.run), Payload: e.Payload, TS: r.clock.now()}
		}
		if _, err := r.store.Append(ctx, entries); err != nil {
			return fmt.Errorf("sleep: run %s, phase %s: writing events %d-%d of %d: %w", r.run, p, start+1, start+len(chunk), len(events), err)
		}
		r.written += len(chunk)
		if r.cfg.OnCommit != nil {
			r.cfg.OnCommit(r.written)
		}
		r.progress(p, "writing", start+len(chunk), len(events))
	}
	return nil
}

// record journals one of the run's own records.
func (r *runner) record(ctx context.Context, kind string, payload any) error {
	if _, err := r.store.Append(ctx, []staging.Entry{{Kind: kind, Session: runSession(r.run), Payload: payload, TS: r.clock.now()}}); err != nil {
		return fmt.Errorf("sleep: run %s: writing %s: %w", r.run, kind, err)
	}
	r.written++
	if r.cfg.OnCommit != nil {
		r.cfg.OnCommit(r.written)
	}
	return nil
}

func (r *runner) progress(p Phase, step string, done, total int) {
	if r.cfg.Progress != nil {
		r.cfg.Progress(Progress{Phase: p, Step: step, Done: done, Total: total})
	}
}

// noteChanges lists a dry run's changes.
func (r *runner) noteChanges(p Phase, events []plannedEvent) {
	if !r.cfg.dryRun {
		return
	}
	for _, e := range events {
		var x struct {
			ID           string   `json:"id"`
			Into         string   `json:"into"`
			From         []string `json:"from"`
			Reason       string   `json:"reason"`
			SupersededBy string   `json:"superseded_by"`
		}
		json.Unmarshal(e.Payload, &x)
		c := Change{Phase: p, Action: strings.TrimSuffix(strings.TrimPrefix(e.Kind, memory.KindPrefix), ".v1"), ID: x.ID, Reason: x.Reason,
			Into: x.SupersededBy, From: x.From}
		if e.Kind == memory.KindMerge {
			c.ID = x.Into
		}
		r.plan = append(r.plan, c)
	}
}

// MemoryLimit is the soft limit on the Go heap that `exocortex sleep` asks the
// runtime for (runtime/debug.SetMemoryLimit) unless GOMEMLIMIT is set: a run
// holds its snapshot and index at once, and with the default pacing the heap
// would grow to twice what is live before the collector runs.
const MemoryLimit = 768 << 20
