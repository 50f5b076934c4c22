package sleep

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/staging"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestLoopAdjudication(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	loop := []string{TagLoopPeriod}
	makeStore(t, dir, hashEmb, []memory.Input{
		{ID: "a-loop", Text: "The deploy key for staging lives in vault path secret/deploy.", Tags: loop},
		{ID: "a-out", Text: "Confirmed by the operator: the deploy key for staging lives in vault path secret/deploy."},
		{ID: "b-loop", Text: "The build server password rotates every Friday evening.", Tags: loop},
		{ID: "c-loop", Text: "The API rate limit is 100 requests per minute.", Tags: loop},
		{ID: "c-out", Text: "The API rate limit is 500 requests per minute."},
		{ID: "d-loop", Text: "The printer on floor two needs a new toner.", Tags: append([]string{TagPinned}, loop...)},
		{ID: "e-loop", Text: "The production deploy key lives in vault path secret/prod.", Tags: loop},
	})
	cfg := cfgFor(dir, hashEmb)
	cfg.Phases = []Phase{Loop}
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Phases[Loop].Counts; c["loop_records"] != 5 || c["corroborated"] != 1 || c["quarantined"] != 3 || c["adjudicated_by_operator"] != 1 {
		t.Fatalf("loop counts %v", c)
	}
	s := openRead(t, dir, hashEmb)
	a, _ := must2(s.Get(context.Background(), "a-loop"))
	if !a.Active() || !a.HasTag(TagAdjudicated) || !strings.Contains(fmt.Sprint(a.Metadata[MetaAdjudicated]), "a-out") {
		t.Errorf("corroborated: %+v", a)
	}
	for _, id := range []string{"b-loop", "c-loop", "e-loop"} {
		r, _ := must2(s.Get(context.Background(), id))
		hist, _ := s.History(ctx, id)
		last := hist[len(hist)-1]
		if r.Active() || last.Kind != memory.KindArchive || !strings.Contains(string(last.Payload), QuarantineReason) {
			t.Errorf("%s: %+v, last event %s %s", id, r, last.Kind, last.Payload)
		}
	}
	if d, _ := must2(s.Get(context.Background(), "d-loop")); !d.Active() || !d.HasTag(TagAdjudicated) {
		t.Errorf("pinned loop record: %+v", d)
	}
	// Quarantined records come back whole with a restore.
	if err := s.Restore(ctx, "b-loop", "checked by hand", memory.Source{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := must2(s.Get(context.Background(), "b-loop")); !b.Active() || b.Text != "The build server password rotates every Friday evening." {
		t.Fatalf("restored: %+v", b)
	}
}

// clusterStore holds one cluster of related records (no duplicates: each
// names a different cluster and city) and unrelated ones.
func clusterStore(t *testing.T) string {
	dir := t.TempDir()
	makeStore(t, dir, hashEmb, []memory.Input{
		{ID: "k1", Area: memory.AreaFragments, Text: "The billing service runs on the Kubernetes cluster alpha in Frankfurt."},
		{ID: "k2", Area: memory.AreaFragments, Text: "The billing service runs on the Kubernetes cluster beta in Dublin."},
		{ID: "k3", Area: memory.AreaFragments, Text: "The billing service runs on the Kubernetes cluster gamma in Madrid."},
		{ID: "u1", Area: memory.AreaFragments, Text: "The coffee machine on floor two is broken again."},
		{ID: "u2", Area: memory.AreaFragments, Text: "Lunch orders close at eleven every weekday."},
	})
	return dir
}

func TestConsolidateExtractive(t *testing.T) {
	dir := clusterStore(t)
	cfg := cfgFor(dir, hashEmb)
	cfg.Phases = []Phase{Consolidate}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Phases[Consolidate].Counts; c["summaries"] != 1 || c["summarized_records"] != 3 {
		t.Fatalf("counts %v", c)
	}
	s := openRead(t, dir, hashEmb)
	var sum *memory.Record
	for _, r := range must(s.Records(context.Background())) {
		if isSummary(r) {
			sum = r
		}
	}
	if sum == nil || sum.Area != memory.AreaFragments || !sum.HasTag(TagSummary) || fmt.Sprint(idsOf(sum.Metadata[MetaSummaryOf])) != "[k1 k2 k3]" ||
		sum.Metadata[MetaSummaryMethod] != "extractive" || !strings.HasPrefix(sum.Text, "Summary of 3 related memories") ||
		!strings.Contains(sum.Text, "Kubernetes cluster") {
		t.Fatalf("summary %+v", sum)
	}
	for _, id := range []string{"k1", "k2", "k3"} {
		if r, _ := must2(s.Get(context.Background(), id)); !r.Active() {
			t.Errorf("source %s was archived", id)
		}
	}
}

// TestConsolidateWithAModel writes a cluster's summary with a model through
// either provider; a thinking model's <think> block stays out of the summary,
// and a failing model leaves the extractive one.
func TestConsolidateWithAModel(t *testing.T) {
	const summary = "The billing service runs on Kubernetes clusters alpha (Frankfurt), beta (Dublin) and gamma (Madrid)."
	for _, provider := range llm.Providers() {
		for _, kind := range []string{"plain", "think", "fail"} {
			t.Run(provider+" "+kind, func(t *testing.T) {
				dir := clusterStore(t)
				reply := scripted.Reply{Content: summary, ExpectContains: "Summarise these related memories"}
				switch kind {
				case "think":
					reply.Content = "<think>\nThree clusters, keep the cities.\n</think>\n\n" + summary
				case "fail":
					reply = scripted.Reply{Error: "model crashed"}
				}
				srv, err := scripted.Start(provider, scripted.Script{Replies: []scripted.Reply{reply}})
				if err != nil {
					t.Fatal(err)
				}
				defer srv.Close()
				c, err := llm.Open(llm.Config{Provider: provider, BaseURL: srv.URL(), MaxRetries: -1})
				if err != nil {
					t.Fatal(err)
				}
				cfg := cfgFor(dir, hashEmb)
				cfg.Phases = []Phase{Consolidate}
				cfg.Summarizer = &ModelSummarizer{Client: c, Model: srv.Model()}
				rep, err := Run(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				if f := srv.Failures(); len(f) > 0 {
					t.Fatalf("the request did not match the script: %v", f)
				}
				var sum *memory.Record
				for _, r := range must(openRead(t, dir, hashEmb).Records(context.Background())) {
					if isSummary(r) {
						sum = r
					}
				}
				if kind == "fail" {
					if sum.Metadata[MetaSummaryMethod] != "extractive" || len(rep.Phases[Consolidate].Notes) == 0 {
						t.Fatalf("fallback: %+v, notes %v", sum, rep.Phases[Consolidate].Notes)
					}
					return
				}
				if sum.Text != summary || sum.Metadata[MetaSummaryMethod] != "model:"+srv.Model() {
					t.Fatalf("summary %+v", sum)
				}
			})
		}
	}
}

func TestReportGolden(t *testing.T) {
	fx := writeFixture(t, t.TempDir(), hashEmb, genConfig{seed: 9, facts: 14, dupRate: 0.6, negRate: 0.5, fillers: 6, stale: 4, loops: 4, now: testNow, areaSplit: true})
	rep, err := Run(context.Background(), fx.config(hashEmb))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	file, _ := os.ReadFile(rep.ReportPath)
	if string(file) != b.String() {
		t.Fatal("the report file differs from WriteMarkdown")
	}
	golden := filepath.Join("testdata", "report.golden.md")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./sleep -run TestReportGolden -update writes it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("the report differs from %s (go test ./sleep -run TestReportGolden -update rewrites it):\n%s", golden, b.String())
	}
	var js strings.Builder
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal([]byte(js.String()), &back); err != nil || back.Run != rep.Run || len(back.Phases) != 6 || back.Phases[Dedup].Phase != Dedup {
		t.Fatalf("JSON round trip: %v %+v", err, back.Phases)
	}
}

func TestJournalReadsLongPlans(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	makeStore(t, dir, nil, []memory.Input{{ID: "a", Text: "x"}})
	s := openRead(t, dir, nil)
	events := make([]plannedEvent, 30000)
	for i := range events {
		events[i] = event(memory.KindArchive, memory.ArchiveEvent{ID: fmt.Sprintf("record-%06d", i), Reason: "a reason long enough to make the line large"})
	}
	if _, err := s.Append(ctx, []staging.Entry{
		{Kind: KindRun, Session: runSession("r1"), Payload: runEvent{Run: "r1", Now: testNow, Phases: AllPhases()}},
		{Kind: KindPlan, Session: runSession("r1"), Payload: planEvent{Run: "r1", Phase: Decay, Events: events}},
	}); err != nil {
		t.Fatal(err)
	}
	jv, err := readJournal(ctx, s.JournalPath())
	if err != nil {
		t.Fatal(err)
	}
	inc := jv.incomplete()
	if inc == nil || inc.begin.Run != "r1" || len(inc.plans[Decay].Events) != 30000 || inc.applied[Decay] != 0 {
		t.Fatalf("journal view: %+v", inc)
	}
}

func TestParsePhases(t *testing.T) {
	for in, want := range map[string]string{"": "[ingest dedup consolidate decay loop ontology]", "all": "[ingest dedup consolidate decay loop ontology]",
		"0,1": "[ingest dedup]", "dedup-decay": "[dedup consolidate decay]", "5,0": "[ingest ontology]", "loop": "[loop]", "1-1,3": "[dedup decay]"} {
		got, err := ParsePhases(in)
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("ParsePhases(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"7", "sleepy", "3-1", ","} {
		if _, err := ParsePhases(bad); err == nil {
			t.Errorf("ParsePhases(%q) accepted", bad)
		}
	}
}
