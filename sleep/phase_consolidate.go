package sleep

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/exocortex/exocortex/memory"
)

// Phase 2, consolidate: clusters of related records gain a summary record
// linked to its sources. The sources stay as they are.
//
//  1. Candidates are the active records of ConsolidateAreas (that are also work
//     areas) that are not summaries, not written during a loop (tag
//     loop_period), and not already summarised by an active summary.
//  2. Two candidates are related when their similarity reaches
//     RelatedSimilarity (neighbours from the run's index).
//  3. Clusters grow around seeds, the candidates with the most related
//     neighbours first (ties by id): a seed takes its unassigned related
//     neighbours, most similar first, up to MaxCluster; a cluster of fewer than
//     MinCluster records is dropped.
//  4. A cluster's summary has an id derived from its members' ids, so a cluster
//     summarised once (even if that summary was archived since) is not
//     summarised again. The summary is written by the model when one is
//     configured, otherwise extracted: the first sentence of the three most
//     central members (highest mean similarity to the others), after the
//     words the members share.
//  5. The summary record: same area, tag "summary" plus the tags every member
//     has, metadata summary_of (the member ids) and summary_method, the
//     highest member importance.

func (r *runner) planConsolidate(ctx context.Context) (PhaseSummary, []plannedEvent, error) {
	sum := PhaseSummary{Phase: Consolidate}
	covered := map[string]bool{}
	for _, rec := range r.recs {
		if rec.Active() && isSummary(rec) {
			for _, id := range idsOf(rec.Metadata[MetaSummaryOf]) {
				covered[id] = true
			}
		}
	}
	var cands []*memory.Record
	for _, rec := range r.recs {
		// Records written during a loop are left out, adjudicated or not: not
		// yet trusted, a summary would carry them back into recall, and once
		// trusted their corroborating records say the same.
		if !rec.Active() || isSummary(rec) || rec.HasTag(TagLoopPeriod) || !slices.Contains(r.params.ConsolidateAreas, rec.Area) {
			continue
		}
		if !r.params.workArea(rec.Area) {
			continue
		}
		if covered[rec.ID] {
			sum.count("already_summarized_records", 1)
			continue
		}
		cands = append(cands, rec)
	}
	sum.Examined = len(cands)
	if len(cands) < r.params.MinCluster {
		return sum, nil, nil
	}
	ix, err := r.index(ctx)
	if err != nil {
		return sum, nil, err
	}
	if err := ix.prefetch(ctx, cands, func(d, t int) { r.progress(Consolidate, "neighbours", d, t) }); err != nil {
		return sum, nil, err
	}
	isCand := make(map[string]bool, len(cands))
	for _, c := range cands {
		isCand[c.ID] = true
	}
	related := make(map[string][]neighbour, len(cands))
	for _, c := range cands {
		nbs, err := ix.neighbours(c.Area, c.ID)
		if err != nil {
			return sum, nil, err
		}
		for _, nb := range nbs {
			if nb.sim < r.params.RelatedSimilarity {
				break
			}
			if isCand[nb.id] {
				related[c.ID] = append(related[c.ID], nb)
			}
		}
	}
	seeds := append([]*memory.Record(nil), cands...)
	sort.SliceStable(seeds, func(i, j int) bool {
		a, b := len(related[seeds[i].ID]), len(related[seeds[j].ID])
		if a != b {
			return a > b
		}
		return seeds[i].ID < seeds[j].ID
	})
	assigned := map[string]bool{}
	var events []plannedEvent
	for i, s := range seeds {
		if i%5000 == 0 {
			r.progress(Consolidate, "planning", i, len(seeds))
		}
		if assigned[s.ID] || len(related[s.ID])+1 < r.params.MinCluster {
			continue
		}
		cluster := []*memory.Record{s}
		for _, nb := range related[s.ID] {
			if len(cluster) == r.params.MaxCluster {
				break
			}
			if !assigned[nb.id] {
				cluster = append(cluster, r.byID[nb.id])
			}
		}
		if len(cluster) < r.params.MinCluster {
			continue
		}
		for _, m := range cluster {
			assigned[m.ID] = true
		}
		sort.Slice(cluster, func(i, j int) bool { return cluster[i].ID < cluster[j].ID })
		ids := make([]string, len(cluster))
		for i, m := range cluster {
			ids[i] = m.ID
		}
		sumID := contentID("sum-", ids...)
		if r.byID[sumID] != nil {
			sum.count("already_summarized", 1)
			continue
		}
		text, method := r.summaryText(ctx, ix, cluster)
		up := memory.UpsertEvent{ID: sumID, Area: s.Area, Text: text, Tags: sharedTags(cluster),
			Metadata: map[string]any{MetaSummaryOf: ids, MetaSummaryMethod: method}, Source: source(Consolidate),
			Reason: fmt.Sprintf("sleep consolidate: summary of %d related records (similarity ≥ %.2f)", len(cluster), r.params.RelatedSimilarity)}
		imp := 0.0
		for _, m := range cluster {
			imp = max(imp, m.Importance)
		}
		up.Importance = &imp
		events = append(events, event(memory.KindUpsert, up))
		sum.count("summaries", 1)
		sum.count("summarized_records", len(cluster))
		ex := Example{Action: "summary", ID: sumID, Text: shorten(text, 300), Reason: up.Reason}
		for _, m := range cluster {
			ex.Others = append(ex.Others, ExampleRecord{ID: m.ID, Text: shorten(m.Text, 120)})
		}
		sum.example(ex)
	}
	if r.sumErr > 0 {
		sum.Notes = append(sum.Notes, fmt.Sprintf("the model failed on %d clusters: their summaries were extracted instead", r.sumErr))
	}
	return sum, events, nil
}

// sharedTags are "summary" and the tags every member carries (loop and pin
// markers aside: a summary earns neither).
func sharedTags(cluster []*memory.Record) []string {
	count := map[string]int{}
	for _, m := range cluster {
		for _, t := range m.Tags {
			count[t]++
		}
	}
	out := []string{TagSummary}
	for _, t := range sortedKeys(count) {
		if count[t] == len(cluster) && t != TagLoopPeriod && t != TagAdjudicated && t != TagPinned && t != TagSummary {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// summaryText writes a cluster's summary: by the model when one is configured
// (falling back to extraction when it fails), else by extraction.
func (r *runner) summaryText(ctx context.Context, ix *index, cluster []*memory.Record) (string, string) {
	ordered := centralFirst(ix, cluster)
	if r.cfg.Summarizer != nil {
		texts := make([]string, len(ordered))
		for i, m := range ordered {
			texts[i] = m.Text
		}
		text, err := r.cfg.Summarizer.Summarize(ctx, texts)
		text = strings.TrimSpace(text)
		if err == nil && text != "" {
			return shorten(text, 1200), "model:" + r.cfg.Summarizer.Name()
		}
		r.sumErr++
		if err != nil {
			r.cfg.Logger.Warn("sleep: the model could not summarise a cluster; extracting instead", "err", err)
		}
	}
	return extractiveSummary(r.lx, ordered), "extractive"
}

// centralFirst orders a cluster by mean similarity to the other members,
// highest first (ties by id).
func centralFirst(ix *index, cluster []*memory.Record) []*memory.Record {
	score := make(map[string]float64, len(cluster))
	for _, a := range cluster {
		av, _ := ix.vector(a.Area, a.ID)
		for _, b := range cluster {
			if a.ID == b.ID {
				continue
			}
			bv, _ := ix.vector(b.Area, b.ID)
			if av != nil && bv != nil {
				score[a.ID] += cos(av, bv)
			}
		}
	}
	out := append([]*memory.Record(nil), cluster...)
	sort.SliceStable(out, func(i, j int) bool {
		si, sj := round3(score[out[i].ID]), round3(score[out[j].ID])
		if si != sj {
			return si > sj
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// extractiveSummary is "Summary of N related memories (shared words: ...): "
// followed by the first sentence of the three most central members.
func extractiveSummary(lx *lexicon, ordered []*memory.Record) string {
	df := map[string]int{}
	for _, m := range ordered {
		seen := map[string]bool{}
		for _, w := range lx.analyse(m.Text).content {
			if len(w.lower) >= 3 && !seen[w.lower] {
				seen[w.lower] = true
				df[w.lower]++
			}
		}
	}
	words := sortedKeys(df)
	sort.SliceStable(words, func(i, j int) bool { return df[words[i]] > df[words[j]] })
	var shared []string
	for _, w := range words {
		if df[w] < 2 || len(shared) == 5 {
			break
		}
		shared = append(shared, w)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Summary of %d related memories", len(ordered))
	if len(shared) > 0 {
		fmt.Fprintf(&b, " (shared words: %s)", strings.Join(shared, ", "))
	}
	b.WriteString(":")
	seen := map[string]bool{}
	n := 0
	for _, m := range ordered {
		if n == 3 {
			break
		}
		s := shorten(firstSentence(m.Text), 240)
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		b.WriteString(" ")
		b.WriteString(s)
		if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "…") && !strings.HasSuffix(s, "!") && !strings.HasSuffix(s, "?") {
			b.WriteString(".")
		}
		n++
	}
	return b.String()
}

// firstSentence returns text up to its first sentence end (or line break).
func firstSentence(text string) string {
	text = strings.TrimSpace(text)
	for i, c := range text {
		switch c {
		case '\n':
			return strings.TrimSpace(text[:i])
		case '.', '!', '?':
			if i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n' {
				return strings.TrimSpace(text[:i+1])
			}
		}
	}
	return text
}
