package sleep

import (
	"context"
	"fmt"

	"github.com/exocortex/exocortex/memory"
)

// Phase 4, loop adjudication: memories written while the supervisor's
// loop_active was set carry the tag loop_period (the memory classifier and the
// selective memorizer add it; staged episodes with "loop_period": true get it
// on ingest). Recall leaves them out until they are adjudicated. Each one that
// is active and not yet adjudicated is:
//
//   - corroborated when a record from outside the loop period (active, not
//     tagged loop_period, not a summary) in a work area is similar to it
//     (CorroborateSimilarity) and its words support it (text.go:
//     corroborates): it gains the tag "adjudicated" and metadata saying by
//     which record, and recall uses it again;
//   - otherwise quarantined: archived with the reason "quarantined: written
//     during a loop, not corroborated". Nothing is deleted.
//
// A pinned loop-period record, or one an operator restored by hand, is
// adjudicated by that decision instead.

// QuarantineReason is the archive reason of a quarantined record.
const QuarantineReason = "quarantined: written during a loop, not corroborated"

func (r *runner) planLoop(ctx context.Context) (PhaseSummary, []plannedEvent, error) {
	sum := PhaseSummary{Phase: Loop}
	var loops []*memory.Record
	for _, rec := range r.recs {
		if rec.Active() && inLoop(rec) {
			loops = append(loops, rec)
		}
	}
	sum.Examined = len(loops)
	sum.count("loop_records", len(loops))
	if len(loops) == 0 {
		return sum, nil, nil
	}
	ix, err := r.index(ctx)
	if err != nil {
		return sum, nil, err
	}
	areas := sortedKeys(ix.areas)
	var events []plannedEvent
	for i, rec := range loops {
		r.progress(Loop, "planning", i, len(loops))
		up := restate(rec)
		up.Tags = addTag(up.Tags, TagAdjudicated)
		up.Source = source(Loop)
		switch {
		case isPinned(rec):
			up.Metadata[MetaAdjudicated] = "pinned by the operator"
		case r.jv.restored[rec.ID]:
			up.Metadata[MetaAdjudicated] = "restored by the operator"
		default:
			by, sim, err := r.corroboration(ctx, ix, areas, rec)
			if err != nil {
				return sum, nil, err
			}
			if by == nil {
				events = append(events, event(memory.KindArchive, memory.ArchiveEvent{ID: rec.ID, Reason: QuarantineReason, Source: source(Loop)}))
				sum.count("quarantined", 1)
				sum.example(Example{Action: "quarantine", ID: rec.ID, Text: shorten(rec.Text, 200), Reason: QuarantineReason})
				continue
			}
			up.Metadata[MetaAdjudicated] = fmt.Sprintf("corroborated by %s (similarity %.3f)", by.ID, sim)
			sum.count("corroborated", 1)
			sum.example(Example{Action: "adjudicate", ID: rec.ID, Text: shorten(rec.Text, 200),
				Reason: "corroborated from outside the loop", Others: []ExampleRecord{{ID: by.ID, Text: shorten(by.Text, 200), Similarity: round3(sim)}}})
			up.Reason = "sleep loop: " + up.Metadata[MetaAdjudicated].(string)
			events = append(events, event(memory.KindUpsert, up))
			continue
		}
		sum.count("adjudicated_by_operator", 1)
		up.Reason = "sleep loop: " + up.Metadata[MetaAdjudicated].(string)
		events = append(events, event(memory.KindUpsert, up))
	}
	return sum, events, nil
}

// corroboration finds the record from outside the loop that best supports rec.
func (r *runner) corroboration(ctx context.Context, ix *index, areas []string, rec *memory.Record) (*memory.Record, float64, error) {
	vec, ok := ix.vector(rec.Area, rec.ID)
	if !ok {
		vs, err := r.src.vectors(ctx, []*memory.Record{rec})
		if err != nil {
			return nil, 0, err
		}
		vec = vs[0]
	}
	if vec == nil {
		return nil, 0, nil
	}
	var best *memory.Record
	bestSim := 0.0
	// Loop-period records are few: search deeper than the neighbour lists, so
	// that a longer statement of the same fact, less similar than many records
	// of the same shape, is still found.
	k := max(128, 4*r.params.Neighbours)
	for _, area := range areas {
		nbs, err := ix.search(area, vec, k, rec.ID)
		if err != nil {
			return nil, 0, err
		}
		for _, nb := range nbs {
			if nb.sim < r.params.CorroborateSimilarity {
				break
			}
			o := r.byID[nb.id]
			if o == nil || !o.Active() || o.HasTag(TagLoopPeriod) || isSummary(o) {
				continue
			}
			if !r.lx.corroborates(r.info(rec), r.info(o)).ok {
				continue
			}
			if best == nil || nb.sim > bestSim || (nb.sim == bestSim && o.ID < best.ID) {
				best, bestSim = o, nb.sim
			}
			break
		}
	}
	return best, bestSim, nil
}
