package recall

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/extensions/internal/hooktest"
	"github.com/exocortex/exocortex/extensions/internal/memtest"
	"github.com/exocortex/exocortex/extensions/workingmemory"
	"github.com/exocortex/exocortex/memory"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestPipelineThroughProtocol(t *testing.T) {
	now := time.Now().Add(30 * 24 * time.Hour)
	opts := Options{Limit: 5, BlockChars: 2000, Now: func() time.Time { return now }}
	exts := []sdk.Extension{
		Search{}, Filter{}, Enhancement{Options: opts}, Block{Options: opts}, Catalog{},
	}
	home := memtest.Serve(t, sdk.Plugin{Name: "memory-tools", Extensions: exts, UsesMemory: true})
	st, client := home.Store, home.Client
	put := func(_ *testing.T, _ *memory.Store, in memory.Input) { home.Put(t, in) }
	put(t, st, memory.Input{Text: "The nightly build of exocortex runs make test on the CI runner", Tags: []string{"ci"}})
	put(t, st, memory.Input{Text: "The nightly build of exocortex runs make test on the CI runner.", Tags: []string{"ci", "dup"}})
	put(t, st, memory.Input{Text: "Flaky build: the nightly build failed because the runner disk was full", Tags: []string{"loop_period"}})
	put(t, st, memory.Input{Area: memory.AreaSolutions, Text: "Fix for the failed nightly build: clear the Go build cache with go clean -cache when the disk fills"})
	byName := map[string]sdk.Extension{}
	for _, e := range exts {
		byName[e.Spec().Name] = e
	}
	// The solution was already given earlier in the session, further back than
	// the recent messages reach; the operator's question is the last message.
	hist := hooktest.Msgs("assistant", "Fix for the failed nightly build: clear the Go build cache with go clean -cache when the disk fills")
	for range hooktest.RecentCount {
		hist = append(hist, hooktest.Msgs("assistant", "{}")...)
	}
	hist = append(hist, hooktest.Msgs("user", "why did the nightly build on the CI runner fail?")...)
	for i, m := range hist {
		m.Id = fmt.Sprintf("m%d", i+1)
	}
	var mc *exocortexv1.MemoryCandidates
	// step sends what the host sends: the recent messages to every extension,
	// the history only to those that declare ReadsHistory.
	step := func(ext string, state ...*exocortexv1.StateEntry) *exocortexv1.MessageLoopPromptsAfterResponse {
		t.Helper()
		if mc != nil {
			state = append(state, sdktest.State(CandidatesKey(), mc))
		}
		resp, err := client.MessageLoopPromptsAfter(t.Context(), &exocortexv1.MessageLoopPromptsAfterRequest{
			Call: hooktest.Call(ext, 1, hooktest.Recent(hist), state...), Iteration: 1, History: hooktest.History(byName[ext], hist)})
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := sdktest.Written(t, resp.GetChanges(), CandidatesKey()); ok {
			mc = v
		}
		return resp
	}
	step("recall_search")
	if mc.GetStage() != StageRetrieved || len(mc.GetCandidates()) < 3 || !strings.Contains(mc.GetCandidates()[0].GetWhy(), "BM25 rank") {
		t.Fatalf("retrieved %v", mc)
	}
	step("memory_relevance_filter", sdktest.State(workingmemory.Key(), &exocortexv1.WorkingMemory{Entities: []*exocortexv1.WorkingEntity{{Text: "runner"}}}))
	var reasons []string
	for _, cd := range mc.GetCandidates() {
		if cd.GetDropped() {
			reasons = append(reasons, cd.GetDropReason())
		}
	}
	joined := strings.Join(reasons, "|")
	if !strings.Contains(joined, "duplicate of") || !strings.Contains(joined, "loop") || !strings.Contains(joined, "already in the conversation") {
		t.Fatalf("drop reasons %q", reasons)
	}
	step("memory_enhancement", sdktest.State(bstKey(), &exocortexv1.BeliefState{PrimaryDomain: "debugging"}))
	if mc.GetStage() != StageEnhanced || !strings.Contains(mc.GetCandidates()[0].GetWhy(), "half-life 14d") {
		t.Fatalf("enhanced %v", mc.GetCandidates()[0])
	}
	resp := step("recall")
	bs := resp.GetPromptBlocks()
	if len(bs) != 1 || !strings.Contains(bs[0].GetContent(), "why: BM25 rank") || strings.Contains(bs[0].GetContent(), "disk was full") {
		t.Fatalf("block %v", bs)
	}
	// The search runs once per monologue.
	before := mc
	step("recall_search")
	if mc != before {
		t.Fatal("searched twice in one monologue")
	}
	// The block size is configurable.
	if text, ids := Render(mc, 5, 120, nil); len(text) > 120 || len(ids) != 1 {
		t.Fatalf("small block: %d chars, %d memories", len(text), len(ids))
	}
	// Accesses were recorded for the memories shown.
	n := 0
	recs, err := st.List(t.Context(), memory.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		n += int(r.AccessCount)
		if r.AccessCount > 0 && r.LastAccess.IsZero() {
			t.Errorf("record %s counted an access without its time", r.ID)
		}
	}
	if n == 0 {
		t.Error("no access recorded")
	}
	// The catalog.
	cresp, err := client.MessageLoopPromptsAfter(t.Context(), &exocortexv1.MessageLoopPromptsAfterRequest{Call: sdktest.Call("memory_catalog")})
	if err != nil {
		t.Fatal(err)
	}
	built, _ := sdktest.Written(t, cresp.GetChanges(), catalogBuilt())
	if !built.GetBuilt() || built.GetAreas() != 2 || len(cresp.GetPromptBlocks()) != 1 || !strings.Contains(cresp.GetPromptBlocks()[0].GetContent(), "- main: 3 (tags: ci") {
		t.Fatalf("catalog %v %v", built, cresp.GetPromptBlocks())
	}
}

func TestHalfLifeAndEmptyStore(t *testing.T) {
	if HalfLife("debugging") >= HalfLife("research") {
		t.Fatal("debugging memories should decay faster than research ones")
	}
	client := memtest.Serve(t, sdk.Plugin{Name: "memory-tools", Extensions: []sdk.Extension{Search{}, Block{}}, UsesMemory: true}).Client
	hist := hooktest.Msgs("user", "anything")
	resp, err := client.MessageLoopPromptsAfter(t.Context(), &exocortexv1.MessageLoopPromptsAfterRequest{Call: hooktest.Call("recall_search", 1, hist)})
	if err != nil {
		t.Fatal(err)
	}
	mc, _ := sdktest.Written(t, resp.GetChanges(), CandidatesKey())
	resp, err = client.MessageLoopPromptsAfter(t.Context(), &exocortexv1.MessageLoopPromptsAfterRequest{Call: hooktest.Call("recall", 1, hist, sdktest.State(CandidatesKey(), mc))})
	if err != nil || len(resp.GetPromptBlocks()) != 0 {
		t.Fatalf("empty store: %v %v", resp, err)
	}
}

func TestRenderAreaLimits(t *testing.T) {
	mc := &exocortexv1.MemoryCandidates{Candidates: []*exocortexv1.MemoryCandidate{
		{Id: "s1", Area: "solutions", Text: "fix one"}, {Id: "s2", Area: "solutions", Text: "fix two"},
		{Id: "m1", Area: "main", Text: "fact one"}, {Id: "s3", Area: "solutions", Text: "fix three"},
		{Id: "m2", Area: "main", Text: "fact two"}, {Id: "f1", Area: "fragments", Text: "note"},
	}}
	for _, tc := range []struct {
		name  string
		limit int
		areas map[string]int
		want  []string
	}{
		{"limit alone", 4, nil, []string{"s1", "s2", "m1", "s3"}},
		{"solutions capped", 4, map[string]int{"solutions": 1}, []string{"s1", "m1", "m2", "f1"}},
		{"an area shut out", 5, map[string]int{"main": 0, "fragments": 1}, []string{"s1", "s2", "s3", "f1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ids := Render(mc, tc.limit, 2000, tc.areas)
			if strings.Join(ids, ",") != strings.Join(tc.want, ",") {
				t.Errorf("Render ids %v, want %v", ids, tc.want)
			}
		})
	}
}

func TestSearchThreshold(t *testing.T) {
	for _, tc := range []struct {
		threshold float64
		kept      int
	}{{0, 2}, {0.99, 1}} {
		home := memtest.Serve(t, sdk.Plugin{Name: "memory-tools", Extensions: []sdk.Extension{Search{Options: Options{Threshold: tc.threshold}}}, UsesMemory: true})
		home.Put(t, memory.Input{Text: "The nightly build failed because the runner disk was full"})
		home.Put(t, memory.Input{Text: "The build cache lives in the home directory"})
		resp, err := home.Client.MessageLoopPromptsAfter(t.Context(), &exocortexv1.MessageLoopPromptsAfterRequest{
			Call: hooktest.Call("recall_search", 1, hooktest.Msgs("user", "why did the nightly build fail")), Iteration: 1})
		if err != nil {
			t.Fatal(err)
		}
		mc, _ := sdktest.Written(t, resp.GetChanges(), CandidatesKey())
		cands := mc.GetCandidates()
		kept := 0
		for _, cd := range cands {
			if !cd.GetDropped() {
				kept++
			} else if !strings.Contains(cd.GetDropReason(), "below the threshold 0.99") {
				t.Errorf("drop reason %q", cd.GetDropReason())
			}
		}
		if len(cands) != 2 || kept != tc.kept {
			t.Errorf("threshold %v: %d candidates, %d kept; want 2, %d", tc.threshold, len(cands), kept, tc.kept)
		}
	}
}

// TestSearchRanksAsTheStore checks that recall_search, through the host's
// memory service, gets what a search of the store itself gives with the same
// options (SearchOptions{Limit: Pool}): the same records in the same order.
func TestSearchRanksAsTheStore(t *testing.T) {
	home := memtest.Serve(t, sdk.Plugin{Name: "memory-tools", Extensions: []sdk.Extension{Search{}}, UsesMemory: true})
	for i := range 40 {
		home.Put(t, memory.Input{Text: fmt.Sprintf("Build %d of the nightly pipeline ran on runner %d and took %d minutes", i, i%5, 10+i%7),
			Tags: []string{fmt.Sprint("runner", i%5)}})
	}
	home.Put(t, memory.Input{Area: memory.AreaSolutions, Text: "When the nightly build runner fills its disk, clear the Go build cache"})
	query := "why was the nightly build on runner 3 slow"
	want, err := home.Store.Search(t.Context(), query, memory.SearchOptions{Limit: Pool})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := home.Client.MessageLoopPromptsAfter(t.Context(), &exocortexv1.MessageLoopPromptsAfterRequest{
		Call: hooktest.Call("recall_search", 1, hooktest.Msgs("user", query)), Iteration: 1})
	if err != nil {
		t.Fatal(err)
	}
	mc, _ := sdktest.Written(t, resp.GetChanges(), CandidatesKey())
	got := mc.GetCandidates()
	if len(got) != len(want.Hits) || len(got) != Pool {
		t.Fatalf("%d candidates, the store gives %d hits (want %d)", len(got), len(want.Hits), Pool)
	}
	// Records of equal score may come in either order from one search to the
	// next (the store's ties): compare in the order of score, then id.
	type hit struct {
		id, why string
		score   float64
	}
	byScore := func(hs []hit) []hit {
		slices.SortStableFunc(hs, func(a, b hit) int {
			if a.score != b.score {
				return cmp.Compare(b.score, a.score)
			}
			return strings.Compare(a.id, b.id)
		})
		return hs
	}
	var g, w []hit
	for i, h := range want.Hits {
		w = append(w, hit{h.Record.ID, h.Why(), h.Score})
		g = append(g, hit{got[i].GetId(), got[i].GetWhy(), got[i].GetScore()})
		if i > 0 && got[i].GetScore() > got[i-1].GetScore() {
			t.Errorf("candidate %d scores %v, above the one before it (%v)", i, got[i].GetScore(), got[i-1].GetScore())
		}
	}
	// The order is what recall keeps of the search; the BM25 scores of one
	// query may differ a little from one search of a store to the next (its
	// index's statistics), so ids are compared in order, not the scores.
	g, w = byScore(g), byScore(w)
	for i := range w {
		if g[i].id != w[i].id {
			t.Errorf("candidate %d: %+v; the store's hit: %+v", i, g[i], w[i])
		}
	}
}
