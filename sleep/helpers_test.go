package sleep

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/embed"
	"github.com/exocortex/exocortex/staging"
)

// testNow is the fixed clock of the tests.
var testNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// makeStore creates a store in dir holding ins (written as of testNow-1h).
func makeStore(t testing.TB, dir string, e memory.Embedder, ins []memory.Input) {
	t.Helper()
	ctx := context.Background()
	s, err := memory.Open(ctx, dir, memory.Options{Embedder: e, Logger: quiet(), Now: func() time.Time { return testNow.Add(-time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	for start := 0; start < len(ins); start += 1000 {
		if _, err := s.PutBatch(ctx, ins[start:min(start+1000, len(ins))], memory.Source{Session: "gen", Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// openRead opens a store to look at it, and closes it at the end of the test.
func openRead(t testing.TB, dir string, e memory.Embedder) *memory.Store {
	t.Helper()
	s, err := memory.Open(context.Background(), dir, memory.Options{Embedder: e, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// storeHash opens a store just long enough to read its state hash.
func storeHash(t testing.TB, dir string) string {
	t.Helper()
	s, err := memory.Open(context.Background(), dir, memory.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := s.Hash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// must is v, for a read of a test's store that is not to fail.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// must2 is must for the reads that say whether they found something.
func must2[T any](v T, ok bool, err error) (T, bool) {
	if err != nil {
		panic(err)
	}
	return v, ok
}

// gloveEmbedder loads the offline GloVe embedder from data/glove-100d.bin (or
// EXOCORTEX_GLOVE), once; nil when the file is not there.
var gloveEmbedder = sync.OnceValue(func() memory.Embedder {
	path := os.Getenv("EXOCORTEX_GLOVE")
	if path == "" {
		path = filepath.Join("..", "data", "glove-100d.bin")
	}
	g, err := embed.LoadGloVe(path, embed.GloVeConfig{})
	if err != nil {
		return nil
	}
	return g
})

func needGloVe(t testing.TB) memory.Embedder {
	t.Helper()
	g := gloveEmbedder()
	if g == nil {
		t.Skip("skipped: data/glove-100d.bin is missing (scripts/fetch-glove.sh makes it; EXOCORTEX_GLOVE points elsewhere)")
	}
	return g
}

// copyDir copies a store directory for a second run on identical data.
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	if _, err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
}

// cfgFor is a run over dir with the test clock.
func cfgFor(dir string, e memory.Embedder) Config {
	return Config{StoreDir: dir, Store: memory.Options{Embedder: e}, Now: testNow, Logger: quiet()}
}

// fixture is an Exocortex home for a run: a store of generated records and
// entities, staging.jsonl with every kind of entry, and relationships.jsonl.
type fixture struct {
	home, store, staging, rels, reports, request string
	gen                                          *generated
}

func fixtureAt(home string) *fixture {
	return &fixture{home: home, store: filepath.Join(home, "memory"), staging: filepath.Join(home, "staging.jsonl"),
		rels: filepath.Join(home, "ontology", "relationships.jsonl"), reports: filepath.Join(home, "sleep_reports"),
		request: filepath.Join(home, RequestFile)}
}

// entities are the ontology records of the fixture: name variants to resolve,
// and names to keep apart.
func entities() []memory.Input {
	ent := func(name, kind string, mentions int, aliases ...string) memory.Input {
		as := make([]any, len(aliases))
		for i, a := range aliases {
			as[i] = a
		}
		return memory.Input{ID: "ent-" + strings.ReplaceAll(name, " ", "_"), Area: memory.AreaOntology, Key: entityPrefix + name,
			Text: fmt.Sprintf("%s (%s), also written %s", aliases[0], kind, strings.Join(aliases, ", ")), Tags: []string{"entity", kind},
			Metadata: map[string]any{"kind": kind, "mentions": mentions, "aliases": as}}
	}
	return []memory.Input{
		ent("kubernetes", "name", 5, "Kubernetes"),
		ent("kubernetis", "name", 1, "Kubernetis"),
		ent("agent zero", "name", 4, "Agent Zero"),
		ent("agent-zero", "name", 1, "agent-zero"),
		ent("postgresql", "name", 6, "PostgreSQL", "Postgres"),
		ent("postgres", "name", 2, "postgres"),
		ent("python2", "name", 3, "python2"),
		ent("python3", "name", 3, "python3"),
		ent("redis", "name", 2, "Redis"),
	}
}

// writeFixture builds the fixture in home with embedder e.
func writeFixture(t testing.TB, home string, e memory.Embedder, cfg genConfig) *fixture {
	t.Helper()
	fx := fixtureAt(home)
	fx.gen = generate(cfg)
	makeStore(t, fx.store, e, append(fx.gen.inputs(), entities()...))
	ctx := context.Background()
	appendLog := func(path string, entries []staging.Entry) {
		l, err := staging.Open(ctx, path, staging.Options{Logger: quiet(), Now: func() time.Time { return testNow.Add(-2 * time.Hour) }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.AppendBatch(ctx, entries); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	appendLog(fx.staging, []staging.Entry{
		{Kind: StagingNote, Session: "s1", Payload: map[string]any{"title": "migration", "text": "Invoices still use the old schema until the March release.", "tags": []string{"billing"}, "tool": "staging_note"}},
		{Kind: StagingNote, Session: "s1", Payload: map[string]any{"text": "Run the linter with make lint before every commit.", "area": "solutions", "tool": "staging_note"}},
		{Kind: StagingArtifact, Session: "s1", Payload: map[string]any{"path": "reports/q3.md", "text": "quarterly report written by the agent", "tool": "staging_note"}},
		{Kind: StagingMemorize, Session: "s2", Payload: map[string]any{"request_id": "r1", "user": "How many files are in src?", "response": "There are 42 files in src.", "loop_period": false}},
		{Kind: StagingMemorize, Session: "s2", Payload: map[string]any{"request_id": "r2", "user": "Fix the flaky upload test", "response": "The upload test sleeps 3 seconds before polling the queue.", "loop_period": true}},
		{Kind: StagingInsight, Session: "s2", Payload: map[string]any{"type": "decision", "text": "We decided to keep the ledger service on PostgreSQL 16.", "source": "operator"}},
		{Kind: "custom", Session: "s2", Payload: map[string]any{"anything": 1}},
		{Kind: StagingNote, Session: "s3", Payload: map[string]any{"title": "migration", "text": "Invoices still use the old schema until the March release.", "tool": "staging_note"}},
		{Kind: StagingNote, Session: "s3", Payload: map[string]any{"text": "   ", "tool": "staging_note"}},
	})
	appendLog(fx.rels, []staging.Entry{
		{Kind: KindRelationship, Session: "s1", Payload: relationship{From: "Exocortex", Rel: "uses", To: "Kubernetis", Evidence: "Exocortex uses Kubernetis."}},
		{Kind: KindRelationship, Session: "s1", Payload: relationship{From: "billing", Rel: "depends_on", To: "postgres", Evidence: "billing depends on postgres"}},
		{Kind: KindRelationship, Session: "s1", Payload: relationship{From: "agent-zero", Rel: "calls", To: "python3", Evidence: "agent-zero calls python3"}},
		{Kind: KindRelationship, Session: "s1", Payload: relationship{From: "Exocortex", Rel: "uses", To: "Redis", Evidence: "Exocortex uses Redis"}},
	})
	return fx
}

// config is a run over the fixture with the test clock.
func (fx *fixture) config(e memory.Embedder) Config {
	return Config{StoreDir: fx.store, Store: memory.Options{Embedder: e}, StagingPath: fx.staging, RelationshipsPath: fx.rels,
		ReportDir: fx.reports, RequestPath: fx.request, Now: testNow, Logger: quiet()}
}

// smallGen is the generator configuration of most tests: every case, small.
func smallGen(seed uint64) genConfig {
	return genConfig{seed: seed, facts: 60, dupRate: 0.5, negRate: 0.5, fillers: 30, stale: 10, loops: 6, now: testNow, areaSplit: true}
}

// copyTree copies the regular files under src to dst, leaving out lock files
// and temporary files. Files that vanish while copying (an index merging its
// segments under a running session) are listed, not fatal: the copy's store
// rebuilds what is damaged.
func copyTree(src, dst string) ([]string, error) {
	var vanished []string
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				vanished = append(vanished, path)
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		if !d.Type().IsRegular() || strings.HasSuffix(path, ".lock") || strings.HasSuffix(path, ".tmp") {
			return nil
		}
		if err := copyFile(path, target); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				vanished = append(vanished, rel)
				return nil
			}
			return err
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("the store %s does not exist", src)
	}
	return vanished, err
}
