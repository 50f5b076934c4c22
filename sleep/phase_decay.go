package sleep

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/exocortex/exocortex/memory"
)

// Phase 3, decay: every active record has a strength; below DecayThreshold it
// is archived (never deleted: `exocortex memory restore ID` brings it back).
//
//	strength = importance × ½^(age / half-life)
//	         + min(0.5, 0.1 × log2(1 + uses)) × ½^(since last use / half-life)
//
// age is the time since the record was created and "since last use" the time
// since it was last recalled, both in whole days (so two runs on the same day
// agree), and the half-life is its area's (HalfLifeDays; DefaultHalfLifeDays
// for other areas). An area whose half-life is 0 never decays (library and
// ontology by default). Exempt: pinned records, and records an operator
// restored by hand (memory.restore in the journal) — the run does not undo
// that decision.

// strength computes a record's strength at now with half-life hl days.
func strength(r *memory.Record, now time.Time, hl float64) float64 {
	days := func(t time.Time) float64 {
		if t.IsZero() || !now.After(t) {
			return 0
		}
		return math.Floor(now.Sub(t).Hours() / 24)
	}
	s := r.Importance * math.Exp2(-days(r.Created)/hl)
	if r.AccessCount > 0 {
		use := min(0.5, 0.1*math.Log2(1+float64(r.AccessCount)))
		last := r.LastAccess
		if last.IsZero() {
			last = r.Created
		}
		s += use * math.Exp2(-days(last)/hl)
	}
	return s
}

func (r *runner) planDecay(ctx context.Context) (PhaseSummary, []plannedEvent, error) {
	sum := PhaseSummary{Phase: Decay}
	type weak struct {
		rec *memory.Record
		s   float64
		hl  float64
	}
	var archive []weak
	for _, rec := range r.recs {
		if !rec.Active() {
			continue
		}
		sum.Examined++
		hl := r.params.halfLife(rec.Area)
		if hl <= 0 {
			sum.count("no_decay_area", 1)
			continue
		}
		s := strength(rec, r.now, hl)
		if s >= r.params.DecayThreshold {
			continue
		}
		switch {
		case isPinned(rec):
			sum.count("exempt_pinned", 1)
		case r.jv.restored[rec.ID]:
			sum.count("exempt_restored", 1)
		default:
			archive = append(archive, weak{rec, s, hl})
		}
	}
	events := make([]plannedEvent, 0, len(archive))
	for _, w := range archive {
		reason := decayReason(w.rec, w.s, w.hl, r.params.DecayThreshold, r.now)
		events = append(events, event(memory.KindArchive, memory.ArchiveEvent{ID: w.rec.ID, Reason: reason, Source: source(Decay)}))
		sum.count("archived", 1)
		sum.count("archived:"+w.rec.Area, 1)
	}
	// The weakest make the examples.
	sort.SliceStable(archive, func(i, j int) bool { return round3(archive[i].s) < round3(archive[j].s) })
	for _, w := range archive {
		sum.example(Example{Action: "decay", ID: w.rec.ID, Text: shorten(w.rec.Text, 160),
			Reason: decayReason(w.rec, w.s, w.hl, r.params.DecayThreshold, r.now)})
	}
	return sum, events, ctx.Err()
}

func decayReason(rec *memory.Record, s, hl, threshold float64, now time.Time) string {
	age := int(math.Floor(now.Sub(rec.Created).Hours() / 24))
	uses := "never recalled"
	if rec.AccessCount > 0 {
		uses = fmt.Sprintf("recalled %d times", rec.AccessCount)
	}
	return fmt.Sprintf("decayed: strength %.3f below %.2f (importance %.2f, %d days old, half-life %g days in %s, %s)",
		s, threshold, rec.Importance, max(age, 0), hl, rec.Area, uses)
}
