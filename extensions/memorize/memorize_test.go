package memorize

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/extensions/internal/hooktest"
	"github.com/exocortex/exocortex/extensions/internal/memtest"
	"github.com/exocortex/exocortex/extensions/internal/stagelog"
	"github.com/exocortex/exocortex/memory"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestMonologueEndThroughProtocol(t *testing.T) {
	home := t.TempDir()
	homeFn := func() (string, error) { return home, nil }
	h := memtest.ServeIn(t, home, sdk.Plugin{Name: "memory-tools", UsesMemory: true, MemoryWriteAreas: WriteAreas(), Extensions: []sdk.Extension{
		Memorize{Home: homeFn}, Selective{}, Capture{Home: homeFn}, Classifier{},
	}})
	st, client := h.Store, h.Client
	ledger := &exocortexv1.EvidenceLedger{Entries: []*exocortexv1.Evidence{
		{ToolName: "code_execution", ArgsJson: `{"code":"go test ./..."}`, Excerpt: "cannot find package foo", Ok: false},
		{ToolName: "code_execution", ArgsJson: `{"code":"go mod download && go test ./..."}`, Excerpt: "ok all", Ok: true},
	}}
	hist := hooktest.Msgs("user", "I want to get the tests green. Why do they fail?", "assistant", "{}")
	state := []*exocortexv1.StateEntry{
		sdktest.State(bstKey(), &exocortexv1.BeliefState{PrimaryDomain: "debugging", CompoundSig: "debugging+coding"}),
		sdktest.State(ledgerKey(), ledger),
		sdktest.State(loopKey(), &exocortexv1.LoopActive{Active: true}),
	}
	final := "The tests failed because a module was missing; we decided to vendor it. They pass now after go mod download."
	for _, ext := range []string{"memorize", "selective_memorizer", "insight_capture", "memory_classifier"} {
		if _, err := client.MonologueEnd(t.Context(), &exocortexv1.MonologueEndRequest{Call: hooktest.Call(ext, 3, hist, state...), FinalResponse: final, History: hist}); err != nil {
			t.Fatalf("%s: %v", ext, err)
		}
	}
	kinds := map[string]int{}
	var ep Episode
	if err := stagelog.Read(context.Background(), filepath.Join(home, stagelog.StagingFile), 0, func(r stagelog.Record) error {
		kinds[r.Kind]++
		if r.Kind == stagelog.KindMemorize {
			return r.Decode(&ep)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if kinds[stagelog.KindMemorize] != 1 || kinds[stagelog.KindInsight] != 2 || ep.ToolCalls != 2 || ep.Failures != 1 || !ep.LoopPeriod || ep.Domain != "debugging+coding" {
		t.Fatalf("staging kinds %v, episode %+v", kinds, ep)
	}
	recs, err := st.List(context.Background(), memory.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d memories, want a solution and an answer", len(recs))
	}
	for _, r := range recs {
		if !slices.Contains(r.Tags, "loop_period") || !slices.ContainsFunc(r.Tags, func(x string) bool { return strings.HasPrefix(x, "axis:") }) || !slices.Contains(r.Tags, "domain:debugging") {
			t.Errorf("%s memory tags %v", r.Area, r.Tags)
		}
		if r.Area == memory.AreaSolutions && (!strings.Contains(r.Text, "go mod download") || !slices.Contains(r.Tags, "axis:procedural")) {
			t.Errorf("solution %q %v", r.Text, r.Tags)
		}
		if r.Provenance.Session != "sdktest-session" || r.Provenance.Source != "extension:selective_memorizer" {
			t.Errorf("%s memory provenance %+v", r.Area, r.Provenance)
		}
	}
	// Running again updates instead of duplicating.
	if _, err := client.MonologueEnd(t.Context(), &exocortexv1.MonologueEndRequest{Call: hooktest.Call("selective_memorizer", 3, hist, state...), FinalResponse: final, History: hist}); err != nil {
		t.Fatal(err)
	}
	if recs, err := st.List(context.Background(), memory.Filter{}); err != nil || len(recs) != 2 {
		t.Errorf("%d memories after a second run (%v)", len(recs), err)
	}
}

func TestMaintenance(t *testing.T) {
	// Updated is the journal time; judge from 200 days on.
	now := time.Now().Add(200 * 24 * time.Hour)
	h := memtest.Serve(t, sdk.Plugin{Name: "memory-tools", UsesMemory: true, MemoryWriteAreas: WriteAreas(),
		Extensions: []sdk.Extension{Maintenance{Now: func() time.Time { return now }}}})
	old := time.Now().Add(-200 * 24 * time.Hour)
	low := 0.2
	if _, err := h.Store.PutBatch(context.Background(), []memory.Input{
		{Text: "stale trivia", Importance: &low, Created: &old},
		{Text: "fresh trivia", Importance: &low},
		{Area: memory.AreaSolutions, Text: "an old solution", Importance: &low, Created: &old},
	}, memory.Source{}); err != nil {
		t.Fatal(err)
	}
	client := h.Client
	resp, err := client.MonologueEnd(t.Context(), &exocortexv1.MonologueEndRequest{Call: sdktest.Call("memory_maintenance")})
	if err != nil {
		t.Fatal(err)
	}
	ms, ok := sdktest.Written(t, resp.GetChanges(), maintKey())
	if !ok || ms.GetArchivedTotal() != 2 || ms.GetRuns() != 1 {
		t.Fatalf("maintenance state %v", ms)
	}
	// Not again within a day.
	resp, err = client.MonologueEnd(t.Context(), &exocortexv1.MonologueEndRequest{Call: sdktest.Call("memory_maintenance", sdktest.State(maintKey(), ms))})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sdktest.Written(t, resp.GetChanges(), maintKey()); ok {
		t.Fatal("ran twice within a day")
	}
}
