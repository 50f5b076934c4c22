package sleep

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/exocortex/exocortex/memory"
)

// Phase 1, dedup: near-duplicates within an area merge into one canonical
// record.
//
//  1. Candidates are the active records of the work areas, summaries aside.
//  2. Each asks the run's vector index for its nearest neighbours; a pair is
//     a duplicate candidate when their cosine similarity reaches
//     DedupSimilarity, and a duplicate when the lexical check (text.go: dup)
//     agrees. Duplicates join groups (union-find).
//  3. Each group elects a canonical record: pinned first, then a record not
//     waiting for loop adjudication, then the highest importance, the most
//     used, the longest text (it says the most), the oldest, the smallest id.
//  4. Every other member is checked against the canonical record itself
//     (similarity and words), so a chain of small differences cannot merge
//     two different facts; pinned records and records an operator restored by
//     hand are never merged away.
//  5. Two events per group: an upsert of the canonical record adding the
//     members' provenance to its metadata ("sources"), then a memory.merge
//     that archives the members with superseded_by = canonical.
//
// When a loop-period member merges into a canonical record from outside the
// loop, that record is the corroboration: the canonical gains "adjudicated",
// so the loop tag the merge carries over does not hide it from recall.

func (r *runner) dedupCandidates() []*memory.Record {
	var out []*memory.Record
	for _, rec := range r.recs {
		if rec.Active() && r.params.workArea(rec.Area) && !isSummary(rec) {
			out = append(out, rec)
		}
	}
	return out
}

func (r *runner) planDedup(ctx context.Context) (PhaseSummary, []plannedEvent, error) {
	sum := PhaseSummary{Phase: Dedup}
	cands := r.dedupCandidates()
	sum.Examined = len(cands)
	if len(cands) < 2 {
		return sum, nil, nil
	}
	ix, err := r.index(ctx)
	if err != nil {
		return sum, nil, err
	}
	if err := ix.prefetch(ctx, cands, func(d, t int) { r.progress(Dedup, "neighbours", d, t) }); err != nil {
		return sum, nil, err
	}
	isCand := make(map[string]bool, len(cands))
	for _, c := range cands {
		isCand[c.ID] = true
	}
	adj := map[string][]string{}
	threshold := r.params.DedupSimilarity
	for i, a := range cands {
		if i%5000 == 0 {
			r.progress(Dedup, "planning", i, len(cands))
		}
		nbs, err := ix.neighbours(a.Area, a.ID)
		if err != nil {
			return sum, nil, err
		}
		for _, nb := range nbs {
			if nb.sim < threshold {
				break
			}
			if !isCand[nb.id] {
				continue
			}
			// Each pair once: from its smaller id, or from the larger when the
			// smaller's list does not hold it.
			if a.ID > nb.id && ix.listHolds(a.Area, nb.id, a.ID) {
				continue
			}
			sum.count("pairs_checked", 1)
			if m := r.lx.dup(r.info(a), r.info(r.byID[nb.id])); m.ok {
				adj[a.ID] = append(adj[a.ID], nb.id)
				adj[nb.id] = append(adj[nb.id], a.ID)
			} else {
				sum.count("rejected_by_words", 1)
			}
		}
	}
	// Elect and merge until no group is left. Each round, every group of
	// records still in play elects its canonical record, which takes the
	// members it confirms; the canonical record and those members then leave
	// play, and what is left of the group may form smaller groups in the next
	// round. A second run finds exactly these groups again and nothing to
	// merge.
	done := map[string]bool{}
	var events []plannedEvent
	for {
		groups := components(adj, done)
		if len(groups) == 0 {
			break
		}
		for _, g := range groups {
			members := make([]*memory.Record, len(g))
			for i, id := range g {
				members[i] = r.byID[id]
			}
			sort.SliceStable(members, func(i, j int) bool { return canonicalBefore(members[i], members[j]) })
			canon := members[0]
			done[canon.ID] = true
			cv, _ := ix.vector(canon.Area, canon.ID)
			var from []*memory.Record
			var sims []float64
			for _, m := range members[1:] {
				mv, _ := ix.vector(m.Area, m.ID)
				sim := cos(cv, mv)
				if sim < threshold || !r.lx.dup(r.info(canon), r.info(m)).ok {
					continue
				}
				switch {
				case isPinned(m):
					sum.count("exempt_pinned", 1)
					continue
				case r.jv.restored[m.ID]:
					sum.count("exempt_restored", 1)
					continue
				}
				done[m.ID] = true
				from = append(from, m)
				sims = append(sims, sim)
			}
			if len(from) == 0 {
				continue
			}
			evs, ex := r.mergeEvents(canon, from, sims)
			events = append(events, evs...)
			sum.count("groups", 1)
			sum.count("merged", len(from))
			sum.count("merged:"+canon.Area, len(from))
			sum.example(ex)
		}
	}
	return sum, events, nil
}

// components returns the connected groups (two or more records) of the
// duplicate graph among the records not done, each sorted, ordered by first id.
func components(adj map[string][]string, done map[string]bool) [][]string {
	seen := map[string]bool{}
	var out [][]string
	for _, start := range sortedKeys(adj) {
		if done[start] || seen[start] {
			continue
		}
		var g []string
		stack := []string{start}
		seen[start] = true
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			g = append(g, x)
			for _, y := range adj[x] {
				if !done[y] && !seen[y] {
					seen[y] = true
					stack = append(stack, y)
				}
			}
		}
		if len(g) > 1 {
			sort.Strings(g)
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// canonicalBefore orders a group's members, the canonical record first.
func canonicalBefore(a, b *memory.Record) bool {
	if pa, pb := isPinned(a), isPinned(b); pa != pb {
		return pa
	}
	if la, lb := inLoop(a), inLoop(b); la != lb {
		return lb
	}
	if a.Importance != b.Importance {
		return a.Importance > b.Importance
	}
	if a.AccessCount != b.AccessCount {
		return a.AccessCount > b.AccessCount
	}
	if len(a.Text) != len(b.Text) {
		return len(a.Text) > len(b.Text)
	}
	if !a.Created.Equal(b.Created) {
		return a.Created.Before(b.Created)
	}
	return a.ID < b.ID
}

// mergeEvents returns the events that fold from into canon, and an example.
func (r *runner) mergeEvents(canon *memory.Record, from []*memory.Record, sims []float64) ([]plannedEvent, Example) {
	up := restate(canon)
	sources := map[string]any{}
	for _, s := range asList(canon.Metadata[MetaSources]) {
		if m, ok := s.(map[string]any); ok {
			if id, _ := m["id"].(string); id != "" {
				sources[id] = m
			}
		}
	}
	loopMember := false
	ids := make([]string, len(from))
	ex := Example{Action: "merge", ID: canon.ID, Text: shorten(canon.Text, 200)}
	for i, m := range from {
		ids[i] = m.ID
		sources[m.ID] = map[string]any{"id": m.ID, "session": m.Provenance.Session, "source": m.Provenance.Source,
			"seq": m.Provenance.Seq, "created": m.Created.UTC().Format(time.RFC3339Nano)}
		if inLoop(m) {
			loopMember = true
		}
		ex.Others = append(ex.Others, ExampleRecord{ID: m.ID, Text: shorten(m.Text, 200), Similarity: round3(sims[i])})
	}
	list := make([]any, 0, len(sources))
	for _, id := range sortedKeys(sources) {
		list = append(list, sources[id])
	}
	up.Metadata[MetaSources] = list
	if loopMember && !inLoop(canon) {
		up.Tags = addTag(up.Tags, TagAdjudicated)
		up.Metadata[MetaAdjudicated] = "corroborated by the duplicate " + canon.ID + " from outside the loop (dedup)"
	}
	up.Source = source(Dedup)
	up.Reason = fmt.Sprintf("sleep dedup: canonical record of %d near-duplicates", len(from))
	minSim := 1.0
	for _, s := range sims {
		minSim = min(minSim, s)
	}
	reason := fmt.Sprintf("sleep dedup: near-duplicates of %s (similarity ≥ %.3f, same values and words)", canon.ID, minSim)
	ex.Reason = reason
	return []plannedEvent{
		event(memory.KindUpsert, up),
		event(memory.KindMerge, memory.MergeEvent{Into: canon.ID, From: ids, Reason: reason, Source: source(Dedup)}),
	}, ex
}

func asList(v any) []any {
	xs, _ := v.([]any)
	return xs
}

func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }
