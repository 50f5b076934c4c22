package sleep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/service"
	"github.com/exocortex/exocortex/staging"
)

var hashEmb = testEmbedder{dims: 256}

// relationshipKeys reads relationships.jsonl as sorted "from rel to" lines.
func relationshipKeys(t testing.TB, path string) []string {
	t.Helper()
	var out []string
	if _, err := staging.Scan(context.Background(), path, 0, func(r staging.Record) error {
		var rl relationship
		if err := r.Decode(&rl); err != nil {
			return err
		}
		out = append(out, rl.From+" "+rl.Rel+" "+rl.To)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func TestFullRunThenNothingLeft(t *testing.T) {
	ctx := context.Background()
	fx := writeFixture(t, t.TempDir(), hashEmb, smallGen(3))
	rep, err := Run(ctx, fx.config(hashEmb))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Resumed || rep.DryRun || rep.Changes == 0 || rep.ReportPath == "" {
		t.Fatalf("report: %+v", rep)
	}
	for _, p := range rep.Phases {
		if p.Status != "ran" {
			t.Errorf("phase %s: status %s", p.Phase, p.Status)
		}
	}
	c := func(p Phase, k string) int { return rep.Phases[p].Counts[k] }
	// Ingest: six memories; the repeated note, the empty one and the unknown kind are not.
	if c(Ingest, "ingested") != 6 || c(Ingest, "already_ingested") != 1 || c(Ingest, "not_memories") != 2 {
		t.Errorf("ingest counts %v", rep.Phases[Ingest].Counts)
	}
	if c(Dedup, "merged") == 0 || c(Decay, "archived") == 0 || c(Decay, "exempt_pinned") == 0 || c(Loop, "quarantined") == 0 || c(Loop, "corroborated") == 0 {
		t.Errorf("counts: dedup %v decay %v loop %v", rep.Phases[Dedup].Counts, rep.Phases[Decay].Counts, rep.Phases[Loop].Counts)
	}
	if c(Ontology, "merged") != 3 || c(Ontology, "relationships_appended") != 3 || c(Ontology, "same_as_appended") != 3 {
		t.Errorf("ontology counts %v", rep.Phases[Ontology].Counts)
	}
	md, err := os.ReadFile(rep.ReportPath)
	if err != nil || !strings.Contains(string(md), "## Merges") || !strings.Contains(string(md), "█") {
		t.Fatalf("report %s: %v\n%s", rep.ReportPath, err, md)
	}

	s := openRead(t, fx.store, hashEmb)
	// Ingested memories: areas, tags, provenance.
	var ingested []*memory.Record
	for _, r := range must(s.Records(context.Background())) {
		if strings.HasPrefix(r.ID, "stg-") {
			ingested = append(ingested, r)
		}
	}
	areas := map[string]int{}
	for _, r := range ingested {
		areas[r.Area]++
		if r.Provenance.Source != "sleep:ingest" || r.Metadata["staging_seq"] == nil || !r.Created.Before(testNow) {
			t.Errorf("ingested %s: %+v", r.ID, r)
		}
		if strings.Contains(r.Text, "sleeps 3 seconds") && !r.HasTag(TagLoopPeriod) {
			t.Errorf("the loop-period episode lost its tag: %+v", r)
		}
	}
	if areas[memory.AreaMain] != 2 || areas[memory.AreaFragments] != 3 || areas[memory.AreaSolutions] != 1 {
		t.Errorf("ingested by area %v", areas)
	}
	// Every merge and archive is explained by the journal.
	whyOf := func(id string) string {
		hist, err := s.History(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, h := range hist {
			b.WriteString(h.Kind + " " + h.Summary() + "\n")
		}
		return b.String()
	}
	var merged, decayed, quarantined int
	for _, r := range must(s.Records(context.Background())) {
		if r.Active() {
			continue
		}
		why := whyOf(r.ID)
		switch {
		case r.SupersededBy != "":
			merged++
			if !strings.Contains(why, memory.KindMerge) || !strings.Contains(why, "sleep ") {
				t.Errorf("merged %s, history:\n%s", r.ID, why)
			}
		case strings.Contains(why, "decayed: strength"):
			decayed++
		case strings.Contains(why, QuarantineReason):
			quarantined++
		default:
			t.Errorf("archived %s without a reason:\n%s", r.ID, why)
		}
	}
	if merged == 0 || decayed == 0 || quarantined == 0 {
		t.Errorf("merged %d decayed %d quarantined %d", merged, decayed, quarantined)
	}
	// A canonical record carries its sources' provenance.
	for _, r := range must(s.Records(context.Background())) {
		if r.Active() && r.Metadata[MetaSources] != nil {
			if len(asList(r.Metadata[MetaSources])) == 0 {
				t.Errorf("canonical %s: sources %v", r.ID, r.Metadata[MetaSources])
			}
			break
		}
	}
	// Entities: variants merged, python2 and python3 apart.
	for id, want := range map[string]string{"ent-kubernetis": "ent-kubernetes", "ent-agent-zero": "ent-agent_zero", "ent-postgres": "ent-postgresql"} {
		if r, _ := must2(s.Get(context.Background(), id)); r.SupersededBy != want {
			t.Errorf("%s superseded by %q, want %s", id, r.SupersededBy, want)
		}
	}
	for _, id := range []string{"ent-python2", "ent-python3", "ent-redis", "ent-kubernetes"} {
		if r, _ := must2(s.Get(context.Background(), id)); !r.Active() {
			t.Errorf("%s archived", id)
		}
	}
	if r, _ := must2(s.Get(context.Background(), "ent-kubernetes")); !slices.Contains(idsOf(r.Metadata["aliases"]), "Kubernetis") || r.Metadata["mentions"] != float64(6) {
		t.Errorf("canonical entity %+v", r)
	}
	rels := relationshipKeys(t, fx.rels)
	for _, want := range []string{"Exocortex uses Kubernetes", "billing depends_on PostgreSQL", "Agent Zero calls python3",
		"Kubernetis same_as Kubernetes", "agent-zero same_as Agent Zero", "postgres same_as PostgreSQL"} {
		if !slices.Contains(rels, want) {
			t.Errorf("relationships.jsonl lacks %q: %q", want, rels)
		}
	}
	hash := must(s.Hash(context.Background()))
	seq := s.JournalSeq()
	s.Close()

	// A second run right after changes nothing, and writes nothing.
	journal, _ := os.ReadFile(filepath.Join(fx.store, memory.JournalFile))
	relsBefore, _ := os.ReadFile(fx.rels)
	rep2, err := Run(ctx, fx.config(hashEmb))
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Changes != 0 || rep2.Written != 0 || rep2.StateHash != hash {
		for _, p := range rep2.Phases {
			if p.Changes > 0 {
				t.Errorf("second run, phase %s: %+v", p.Phase, p.PhaseSummary)
			}
		}
		t.Fatalf("second run: %d changes, %d written, hash %s (was %s)", rep2.Changes, rep2.Written, rep2.StateHash, hash)
	}
	journal2, _ := os.ReadFile(filepath.Join(fx.store, memory.JournalFile))
	relsAfter, _ := os.ReadFile(fx.rels)
	if string(journal) != string(journal2) || string(relsBefore) != string(relsAfter) {
		t.Fatalf("the second run wrote to the journal (%d -> %d bytes, seq %d) or relationships.jsonl", len(journal), len(journal2), seq)
	}
}

func TestRestoredAndPinnedStay(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	old := testNow.AddDate(-2, 0, 0)
	imp := 0.3
	ins := []memory.Input{
		{ID: "old", Area: memory.AreaFragments, Text: "The office plant was watered on a Tuesday.", Created: &old, Importance: &imp},
		{ID: "pinned", Area: memory.AreaFragments, Text: "The spare key is in the blue box.", Created: &old, Importance: &imp, Tags: []string{TagPinned}},
		{ID: "pinnedmeta", Area: memory.AreaFragments, Text: "The alarm code changes every month.", Created: &old, Importance: &imp, Metadata: map[string]any{"pinned": true}},
		{ID: "fresh", Area: memory.AreaFragments, Text: "The build takes four minutes on the shared runner.", Importance: &imp},
		{ID: "book", Area: memory.AreaLibrary, Text: "Chapter one of the handbook.", Created: &old, Importance: &imp},
	}
	makeStore(t, dir, hashEmb, ins)
	cfg := cfgFor(dir, hashEmb)
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d := rep.Phases[Decay].Counts; d["archived"] != 1 || d["exempt_pinned"] != 2 || d["no_decay_area"] != 1 {
		t.Fatalf("decay counts %v", d)
	}
	s, err := memory.Open(ctx, dir, memory.Options{Embedder: hashEmb, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := must2(s.Get(context.Background(), "old")); r.Active() {
		t.Fatal("the weak record was not archived")
	}
	// The operator brings it back; the next run leaves it.
	if err := s.Restore(ctx, "old", "still useful", memory.Source{Source: "cli"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	cfg.Now = testNow.Add(48 * time.Hour)
	rep, err = Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d := rep.Phases[Decay].Counts; d["archived"] != 0 || d["exempt_restored"] != 1 {
		t.Fatalf("after the restore: decay counts %v", d)
	}
	if r, _ := must2(openRead(t, dir, hashEmb).Get(context.Background(), "old")); !r.Active() {
		t.Fatal("the restored record was archived again")
	}
}

func TestDryRunChangesNothingAndShowsThePlan(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	fx := writeFixture(t, home, hashEmb, smallGen(4))
	if err := os.MkdirAll(filepath.Dir(fx.request), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fx.request, []byte(`{"requested_utc":"2026-11-21T11:00:00Z","session":"s9","reasons":["100 tool calls"],"tool_calls":100}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// With no session serving the store, the dry run opens it (its lock
	// file and the indexes' housekeeping change, a socket comes and goes);
	// the journal, the snapshot and everything outside the store stay.
	housekeeping := func(path string) bool {
		rel, _ := filepath.Rel(fx.store, path)
		return strings.HasSuffix(rel, ".lock") || strings.HasPrefix(rel, "fulltext") || rel == memory.CensusFile
	}
	snapshot := func() map[string]string {
		out := map[string]string{}
		filepath.WalkDir(home, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Type().IsRegular() && !housekeeping(path) {
				b, _ := os.ReadFile(path)
				st, _ := d.Info()
				out[path] = string(b) + "|" + st.ModTime().String()
			}
			return nil
		})
		return out
	}
	before := snapshot()
	cfg := fx.config(hashEmb)
	cfg.DryRun = true
	plan, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	after := snapshot()
	for p, v := range before {
		if after[p] != v {
			t.Errorf("the dry run changed %s", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("the dry run created %s", p)
		}
	}
	if !plan.DryRun || plan.Changes == 0 || len(plan.Plan) != plan.Changes || plan.Request == nil || plan.ReportPath != "" {
		t.Fatalf("dry run report: changes %d, plan %d, request %v, path %q", plan.Changes, len(plan.Plan), plan.Request, plan.ReportPath)
	}
	var md strings.Builder
	plan.WriteMarkdown(&md)
	if !strings.Contains(md.String(), "dry run: nothing was changed") {
		t.Fatalf("plan:\n%s", md.String())
	}
	// The real run does what the plan said.
	real, err := Run(ctx, fx.config(hashEmb))
	if err != nil {
		t.Fatal(err)
	}
	if real.Changes != plan.Changes || real.StateHash != plan.StateHash {
		t.Fatalf("real run: %d changes, hash %s; plan: %d changes, hash %s", real.Changes, real.StateHash, plan.Changes, plan.StateHash)
	}
	for i := range real.Phases {
		if real.Phases[i].Changes != plan.Phases[i].Changes {
			t.Errorf("phase %s: real %d changes, plan %d", real.Phases[i].Phase, real.Phases[i].Changes, plan.Phases[i].Changes)
		}
	}
	// The real run took the request.
	if _, err := os.Stat(fx.request); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the request is still there: %v", err)
	}
}

func TestBusyStoreIsNamed(t *testing.T) {
	dir := t.TempDir()
	makeStore(t, dir, nil, []memory.Input{{ID: "a", Text: "something"}})
	holder, err := memory.Open(context.Background(), dir, memory.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	cfg := cfgFor(dir, nil)
	cfg.Wait = 300 * time.Millisecond
	start := time.Now()
	_, err = Run(context.Background(), cfg)
	var be *BusyError
	if !errors.Is(err, ErrStoreBusy) || !errors.As(err, &be) || !strings.Contains(err.Error(), "memory service") || !strings.Contains(err.Error(), "process") {
		t.Fatalf("error %v", err)
	}
	if time.Since(start) < 250*time.Millisecond {
		t.Fatal("did not wait")
	}
}

// TestRunThroughTheOwner: while another process serves the store (a session),
// a dry run and a real run both work as its clients; the dry run writes
// nothing and plans what the real run then does, and the owner sees the
// real run's changes.
func TestRunThroughTheOwner(t *testing.T) {
	ctx := context.Background()
	fx := writeFixture(t, t.TempDir(), hashEmb, smallGen(11))
	owner, err := service.Connect(ctx, service.Config{Dir: fx.store, Options: memory.Options{Embedder: hashEmb, Logger: quiet()}})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	remote := service.Remote{C: owner}
	before, err := remote.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fx.config(hashEmb)
	cfg.DryRun = true
	plan, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("dry run as a client: %v", err)
	}
	mid, _ := remote.Stats(ctx)
	if mid.JournalSeq != before.JournalSeq || mid.StateHash != before.StateHash {
		t.Fatalf("the dry run wrote: seq %d -> %d", before.JournalSeq, mid.JournalSeq)
	}
	cfg.DryRun = false
	real, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("real run as a client: %v", err)
	}
	if !owner.Owner() || real.Changes == 0 || real.Changes != plan.Changes || real.StateHash != plan.StateHash {
		t.Fatalf("owner %v; real run %d changes, hash %s; plan %d changes, hash %s", owner.Owner(), real.Changes, real.StateHash, plan.Changes, plan.StateHash)
	}
	after, _ := remote.Stats(ctx)
	if after.StateHash != real.StateHash {
		t.Fatalf("the owner's hash %s, the run's %s", after.StateHash, real.StateHash)
	}
}

func TestIngestCheckpointAndReplacedFile(t *testing.T) {
	ctx := context.Background()
	fx := writeFixture(t, t.TempDir(), hashEmb, genConfig{seed: 5, facts: 5, now: testNow})
	cfg := fx.config(hashEmb)
	cfg.Phases = []Phase{Ingest}
	rep, err := Run(ctx, cfg)
	if err != nil || rep.Phases[Ingest].Counts["ingested"] != 6 {
		t.Fatalf("%v %+v", err, rep.Phases[Ingest])
	}
	// New entries: only they are read.
	l, err := staging.Open(ctx, fx.staging, staging.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	l.Append(ctx, StagingNote, "s4", map[string]any{"text": "The VPN drops every night at 2:00."})
	l.Close()
	rep, err = Run(ctx, cfg)
	if err != nil || rep.Phases[Ingest].Examined != 1 || rep.Phases[Ingest].Counts["ingested"] != 1 {
		t.Fatalf("%v %+v", err, rep.Phases[Ingest])
	}
	// A replaced staging.jsonl is read from its start; nothing is ingested twice.
	os.Remove(fx.staging)
	l, err = staging.Open(ctx, fx.staging, staging.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	l.Append(ctx, StagingNote, "s5", map[string]any{"text": "The VPN drops every night at 2:00."})
	l.Append(ctx, StagingNote, "s5", map[string]any{"text": "Lunch is at noon on Fridays."})
	l.Close()
	rep, err = Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	in := rep.Phases[Ingest]
	if in.Examined != 2 || in.Counts["ingested"] != 1 || in.Counts["already_ingested"] != 1 || len(in.Notes) == 0 {
		t.Fatalf("after the replacement: %+v", in)
	}
}

func TestRequestFormatOfTheTrigger(t *testing.T) {
	home := t.TempDir()
	if Pending(home) != nil {
		t.Fatal("a request without a file")
	}
	os.MkdirAll(filepath.Join(home, "sleep"), 0o700)
	os.WriteFile(filepath.Join(home, RequestFile), []byte(`{"requested_utc":"2026-11-21T12:00:00Z","session":"s1","reasons":["a loop fired"],"tool_calls":3,"loop_fired":true}`), 0o600)
	r := Pending(home)
	if r == nil || !r.LoopFired || r.Session != "s1" || r.ToolCalls != 3 {
		t.Fatalf("%+v", r)
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"requested_utc"`) {
		t.Fatal(string(b))
	}
}

// TestSecondRunChangesNothing runs twice on stores from several seeds (and on a
// larger one with GloVe vectors when the file is there): the second run must
// write nothing.
func TestSecondRunChangesNothing(t *testing.T) {
	type store struct {
		name string
		e    memory.Embedder
		gen  genConfig
	}
	stores := []store{}
	for seed := uint64(20); seed < 24; seed++ {
		stores = append(stores, store{fmt.Sprintf("hash-%d", seed), hashEmb, smallGen(seed)})
	}
	if g := gloveEmbedder(); g != nil && !raceEnabled {
		stores = append(stores, store{"glove", g, genConfig{seed: 30, facts: 300, dupRate: 0.5, negRate: 0.5, fillers: 150, stale: 30, loops: 10, now: testNow, areaSplit: true}})
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			fx := writeFixture(t, t.TempDir(), st.e, st.gen)
			first, err := Run(context.Background(), fx.config(st.e))
			if err != nil {
				t.Fatal(err)
			}
			second, err := Run(context.Background(), fx.config(st.e))
			if err != nil {
				t.Fatal(err)
			}
			if second.Written != 0 || second.StateHash != first.StateHash {
				for _, p := range second.Phases {
					if p.Changes > 0 {
						t.Errorf("phase %s: %+v", p.Phase, p.PhaseSummary)
					}
				}
				t.Fatalf("second run wrote %d records", second.Written)
			}
		})
	}
}
