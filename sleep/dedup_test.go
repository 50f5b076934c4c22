package sleep

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/memory"
)

// dedupScore measures a dedup run against the generator's labels. A merge is
// correct when the archived record and the record it was merged into state the
// same fact (the same group). Recall counts, for every group of k records,
// the k-1 merges that would leave one.
type dedupScore struct {
	merged, correct, expected int
	byKind                    map[string][2]int // kind -> (merged correctly, expected)
	wrong                     []string
}

func (d dedupScore) precision() float64 {
	if d.merged == 0 {
		return 1
	}
	return float64(d.correct) / float64(d.merged)
}
func (d dedupScore) recall() float64 { return float64(d.correct) / float64(d.expected) }

func scoreDedup(g *generated, after []*memory.Record) dedupScore {
	group := map[string]string{}
	kind := map[string]string{}
	size := map[string]int{}
	for _, r := range g.recs {
		group[r.in.ID], kind[r.in.ID] = r.group, r.kind
		size[r.group]++
	}
	sc := dedupScore{byKind: map[string][2]int{}}
	for _, r := range g.recs {
		if r.kind != "base" && r.kind != "negative" && r.kind != "filler" && size[r.group] > 1 && r.kind != "loop" && r.kind != "corroborator" {
			sc.expected++
			x := sc.byKind[r.kind]
			x[1]++
			sc.byKind[r.kind] = x
		}
	}
	byID := map[string]*memory.Record{}
	for _, r := range after {
		byID[r.ID] = r
	}
	for _, r := range after {
		if r.Status != memory.StatusArchived || r.SupersededBy == "" {
			continue
		}
		sc.merged++
		if group[r.ID] == group[r.SupersededBy] {
			sc.correct++
			// Credit the kind of the member that is no longer active.
			k := kind[r.ID]
			if k == "base" {
				k = kind[r.SupersededBy]
			}
			x := sc.byKind[k]
			x[0]++
			sc.byKind[k] = x
		} else {
			sc.wrong = append(sc.wrong, fmt.Sprintf("%s %q\n    merged into %s %q", r.ID, r.Text, r.SupersededBy, byID[r.SupersededBy].Text))
		}
	}
	return sc
}

// TestDedupPrecisionRecallGloVe is the labelled benchmark of the dedup phase
// with the offline GloVe embedder.
func TestDedupPrecisionRecallGloVe(t *testing.T) {
	if raceEnabled {
		t.Skip("a quality measure, not a concurrency test: skipped under -race")
	}
	e := needGloVe(t)
	g := generate(genConfig{seed: 1, facts: 600, dupRate: 0.5, negRate: 0.5, fillers: 300, now: testNow, areaSplit: true})
	dir := t.TempDir()
	makeStore(t, dir, e, g.inputs())
	cfg := cfgFor(dir, e)
	cfg.Phases = []Phase{Dedup}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := openRead(t, dir, e)
	sc := scoreDedup(g, must(s.Records(context.Background())))
	var kinds []string
	for k, v := range sc.byKind {
		kinds = append(kinds, fmt.Sprintf("%s %d/%d", k, v[0], v[1]))
	}
	sort.Strings(kinds)
	t.Logf("%d records; merged %d, correct %d, expected %d: precision %.3f recall %.3f (%s); pairs checked %d, rejected by words %d",
		len(g.recs), sc.merged, sc.correct, sc.expected, sc.precision(), sc.recall(), strings.Join(kinds, ", "),
		rep.Phases[Dedup].Counts["pairs_checked"], rep.Phases[Dedup].Counts["rejected_by_words"])
	for _, w := range sc.wrong[:min(len(sc.wrong), 10)] {
		t.Logf("wrong: %s", w)
	}
	if sc.precision() < 0.95 || sc.recall() < 0.90 {
		t.Errorf("precision %.3f (want ≥ 0.95), recall %.3f (want ≥ 0.90)", sc.precision(), sc.recall())
	}
}
