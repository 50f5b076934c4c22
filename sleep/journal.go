package sleep

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/staging"
)

// A run keeps its own record in the memory journal, beside the memory events it
// writes, so that the journal alone says what a run decided and how far it got:
//
//	sleep.run.v1   the run began: its id, its "now", its parameters and phases,
//	               and the summaries of the phases before the first that changed
//	               anything (they wrote nothing);
//	sleep.plan.v1  a phase's decisions, written before any of them is applied:
//	               its summary and every memory event it will write, in order;
//	sleep.done.v1  the run finished.
//
// The memory events of a run carry the journal session "sleep:RUN". On start,
// a run that began and did not finish is resumed: a phase with a plan continues
// after the last of its events found in the journal, a phase without one is
// planned again from the state, which is the state it would have been planned
// from. These kinds are not memory events: the store journals them and ignores
// them, so they never change the state hash. A run that finds nothing to change
// writes nothing at all.

// Journal kinds of the run's own records.
const (
	KindRun  = "sleep.run.v1"
	KindPlan = "sleep.plan.v1"
	KindDone = "sleep.done.v1"
)

// sessionPrefix starts the journal session of a run's memory events.
const sessionPrefix = "sleep:"

func runSession(run string) string { return sessionPrefix + run }

// runEvent is the payload of sleep.run.v1.
type runEvent struct {
	Run     string         `json:"run"`
	Now     time.Time      `json:"now"`
	Params  Params         `json:"params"`
	Phases  []Phase        `json:"phases"`
	Vectors string         `json:"vectors"`
	Prior   []PhaseSummary `json:"prior,omitempty"`
	Request *Request       `json:"request,omitempty"`
	Started time.Time      `json:"started"` // wall clock, for people
}

// plannedEvent is one memory event of a plan.
type plannedEvent struct {
	Kind    string          `json:"kind"`
	Payload json.RawMessage `json:"payload"`
}

// planEvent is the payload of sleep.plan.v1.
type planEvent struct {
	Run     string         `json:"run"`
	Phase   Phase          `json:"phase"`
	Summary PhaseSummary   `json:"summary"`
	Events  []plannedEvent `json:"events"`
}

// doneEvent is the payload of sleep.done.v1.
type doneEvent struct {
	Run     string `json:"run"`
	Changes int    `json:"changes"`
}

// runRecord is what the journal says about one run.
type runRecord struct {
	begin    runEvent
	beginSeq uint64
	plans    map[Phase]*planEvent
	planSeq  map[Phase]uint64
	applied  map[Phase]int // memory events of the run found after each plan
	done     bool
}

// journalView is what a run needs from the journal: the runs, and the records
// an operator restored by hand.
type journalView struct {
	runs     []*runRecord // in journal order
	restored map[string]bool
}

// incomplete returns the last run that began and did not finish, or nil.
func (jv *journalView) incomplete() *runRecord {
	if n := len(jv.runs); n > 0 && !jv.runs[n-1].done {
		return jv.runs[n-1]
	}
	return nil
}

// checkpoint returns the staging position the last ingest (of a run other than
// except) reached.
func (jv *journalView) checkpoint(except string) StagingCheckpoint {
	for i := len(jv.runs) - 1; i >= 0; i-- {
		r := jv.runs[i]
		if r.begin.Run == except {
			continue
		}
		if p := r.plans[Ingest]; p != nil && p.Summary.Checkpoint != nil {
			return *p.Summary.Checkpoint
		}
		for _, s := range r.begin.Prior {
			if s.Phase == Ingest && s.Checkpoint != nil {
				return *s.Checkpoint
			}
		}
	}
	return StagingCheckpoint{}
}

// Markers that make a journal line worth decoding; every other line is skipped
// without parsing, so reading a large journal costs little more than its I/O.
var (
	markSleepKind = []byte(`"kind":"sleep.`)
	markRestore   = []byte(`"kind":"` + memory.KindRestore + `"`)
	markSession   = []byte(`"session":"` + sessionPrefix)
)

// readJournal reads the journal file (the store has repaired it on open).
func readJournal(ctx context.Context, path string) (*journalView, error) {
	jv := &journalView{restored: map[string]bool{}}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return jv, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sleep: reading the journal %s: %w", path, err)
	}
	defer f.Close()
	byRun := map[string]*runRecord{}
	var current *runRecord
	var currentPhase Phase = -1
	br := bufio.NewReaderSize(f, 1<<20)
	for lineNo := 1; ; lineNo++ {
		if lineNo%65536 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line (a large plan): gather it whole.
			buf := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				buf = append(buf, line...)
			}
			line = buf
		}
		if len(line) > 0 && line[len(line)-1] == '\n' {
			if rerr := scanLine(line, jv, byRun, &current, &currentPhase); rerr != nil {
				return nil, fmt.Errorf("sleep: %s line %d: %w", path, lineNo, rerr)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("sleep: reading the journal %s: %w", path, err)
		}
	}
	return jv, nil
}

func scanLine(line []byte, jv *journalView, byRun map[string]*runRecord, current **runRecord, phase *Phase) error {
	sleepKind := bytes.Contains(line, markSleepKind)
	restore := bytes.Contains(line, markRestore)
	session := bytes.Contains(line, markSession)
	if !sleepKind && !restore && !session {
		return nil
	}
	var rec staging.Record
	if err := json.Unmarshal(line, &rec); err != nil {
		return nil // not a line this scan needs (the store quarantines bad lines)
	}
	switch {
	case rec.Kind == KindRun:
		var e runEvent
		if err := json.Unmarshal(rec.Payload, &e); err != nil {
			return fmt.Errorf("a %s record that does not decode: %w", KindRun, err)
		}
		r := &runRecord{begin: e, beginSeq: rec.Seq, plans: map[Phase]*planEvent{}, planSeq: map[Phase]uint64{}, applied: map[Phase]int{}}
		byRun[e.Run] = r
		jv.runs = append(jv.runs, r)
		*current, *phase = r, -1
	case rec.Kind == KindPlan:
		var e planEvent
		if err := json.Unmarshal(rec.Payload, &e); err != nil {
			return fmt.Errorf("a %s record that does not decode: %w", KindPlan, err)
		}
		if r := byRun[e.Run]; r != nil {
			r.plans[e.Phase], r.planSeq[e.Phase] = &e, rec.Seq
			*current, *phase = r, e.Phase
		}
	case rec.Kind == KindDone:
		var e doneEvent
		if err := json.Unmarshal(rec.Payload, &e); err == nil {
			if r := byRun[e.Run]; r != nil {
				r.done = true
			}
		}
	case rec.Kind == memory.KindRestore:
		var e memory.RestoreEvent
		if err := json.Unmarshal(rec.Payload, &e); err == nil && e.ID != "" {
			jv.restored[e.ID] = true
		}
	case strings.HasPrefix(rec.Session, sessionPrefix) && strings.HasPrefix(rec.Kind, memory.KindPrefix):
		run := strings.TrimPrefix(rec.Session, sessionPrefix)
		if r := byRun[run]; r != nil && *current == r && *phase >= 0 {
			r.applied[*phase]++
		}
	}
	return nil
}
