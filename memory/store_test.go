package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestHybridSearchExplainsAndFilters(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{Embedder: newHashEmbedder()})
	putFacts(t, s)

	res, err := s.Search(ctx, "how do I deploy the service", SearchOptions{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != ModeHybrid || res.Notice != "" {
		t.Fatalf("mode %s notice %q", res.Mode, res.Notice)
	}
	if len(res.Hits) == 0 || res.Hits[0].Record.ID != "deploy" {
		t.Fatalf("hits %v, want deploy first", hitIDs(res))
	}
	top := res.Hits[0]
	if top.BM25Rank != 1 || top.VectorRank == 0 || top.Fused <= 0 || top.Similarity <= 0 {
		t.Fatalf("top hit does not say why: %+v", top)
	}
	if !strings.Contains(top.Why(), "BM25 rank 1") || !strings.Contains(top.Why(), "vector rank") {
		t.Fatalf("Why() = %q", top.Why())
	}
	if slices.Contains(hitIDs(res), "book") {
		t.Fatal("a library record came back without asking for the library")
	}
	lib, _ := s.Search(ctx, "deploy", SearchOptions{Filter: Filter{Areas: []string{AreaLibrary}}})
	if fmt.Sprint(hitIDs(lib)) != "[book]" {
		t.Fatalf("library search = %v", hitIDs(lib))
	}

	cases := []struct {
		name  string
		query string
		f     Filter
		want  string
	}{
		{"area", "user", Filter{Areas: []string{AreaMain}}, "coffee theme"},
		{"tags", "user", Filter{Tags: []string{"habit"}}, "coffee"},
		{"key", "", Filter{Key: "user_theme"}, "theme"},
		{"custom area", "cat", Filter{Areas: []string{"pets"}}, "cat"},
		{"time range excludes all", "user", Filter{To: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)}, ""},
	}
	for _, c := range cases {
		res, err := s.Search(ctx, c.query, SearchOptions{Filter: c.f})
		if err != nil {
			t.Fatal(err)
		}
		got := hitIDs(res)
		slices.Sort(got)
		if strings.Join(got, " ") != c.want {
			t.Errorf("%s: %v, want %s", c.name, got, c.want)
		}
	}

	// A selective filter is answered exactly from the vectors of what it admits.
	vres, err := s.Search(ctx, "black coffee in the morning", SearchOptions{Mode: ModeVector, Filter: Filter{Tags: []string{"pref"}}})
	if err != nil || fmt.Sprint(hitIDs(vres)) != "[coffee theme]" || vres.Hits[0].VectorRank != 1 || vres.Hits[0].Similarity <= vres.Hits[1].Similarity {
		t.Fatalf("filtered vector search: %v %+v %v", hitIDs(vres), vres.Hits, err)
	}

	// Archived records leave recall, and come back on restore.
	if err := s.Archive(ctx, "coffee", "stale", "", Source{}); err != nil {
		t.Fatal(err)
	}
	res, _ = s.Search(ctx, "coffee", SearchOptions{})
	if slices.Contains(hitIDs(res), "coffee") {
		t.Fatal("archived record recalled")
	}
	res, _ = s.Search(ctx, "coffee", SearchOptions{Filter: Filter{Statuses: []Status{StatusArchived}}})
	if fmt.Sprint(hitIDs(res)) != "[coffee]" {
		t.Fatalf("archived search = %v", hitIDs(res))
	}
	if err := s.Restore(ctx, "coffee", "needed", Source{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Restore(ctx, "coffee", "again", Source{}); err == nil {
		t.Fatal("restoring an active record succeeded")
	}
	res, _ = s.Search(ctx, "coffee", SearchOptions{RecordAccess: true})
	if len(res.Hits) == 0 || res.Hits[0].Record.ID != "coffee" {
		t.Fatalf("restored record not recalled: %v", hitIDs(res))
	}
	if r, _ := must2(s.Get(context.Background(), "coffee")); r.AccessCount != 1 || r.LastAccess.IsZero() {
		t.Fatalf("access not counted: %+v", r)
	}
}

func TestTokenBudgetAndMMR(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{Embedder: newHashEmbedder()})
	var ins []Input
	for i := 0; i < 5; i++ {
		ins = append(ins, Input{ID: fmt.Sprintf("dup%d", i), Text: "restart the web server with systemctl restart web " + strings.Repeat("again ", i)})
	}
	ins = append(ins, Input{ID: "other", Text: "the web server logs rotate daily under /var/log/web"})
	if _, err := s.PutBatch(ctx, ins, Source{}); err != nil {
		t.Fatal(err)
	}
	full, _ := s.Search(ctx, "restart web server", SearchOptions{Limit: 6})
	if len(full.Hits) != 6 || full.Dropped != 0 {
		t.Fatalf("unbudgeted: %d hits", len(full.Hits))
	}
	budget := full.Hits[0].Tokens + full.Hits[1].Tokens
	cut, _ := s.Search(ctx, "restart web server", SearchOptions{Limit: 6, TokenBudget: budget})
	if len(cut.Hits) != 2 || cut.Dropped != 4 || cut.Tokens > budget || strings.Count(cut.Block, "\n[") != 1 {
		t.Fatalf("budget %d: %d hits, %d dropped, %d tokens, block:\n%s", budget, len(cut.Hits), cut.Dropped, cut.Tokens, cut.Block)
	}
	plain, _ := s.Search(ctx, "restart web server", SearchOptions{Limit: 2})
	mmr, _ := s.Search(ctx, "restart web server", SearchOptions{Limit: 2, MMRLambda: 0.3})
	// MMR keeps the best hit and replaces its nearest duplicate (dup1, one
	// word apart) with a hit less like it.
	p, m := hitIDs(plain), hitIDs(mmr)
	if len(p) != 2 || len(m) != 2 || p[0] != m[0] || p[1] != "dup1" || m[1] == "dup1" {
		t.Fatalf("MMR did not diversify: plain %v, mmr %v", p, m)
	}
}

func TestRecencyWeighting(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	clock := now.Add(-365 * 24 * time.Hour)
	s := openStore(t, t.TempDir(), Options{Now: func() time.Time { return clock }})
	s.Put(ctx, Input{ID: "old", Text: "the build uses go 1.21 modules"}, Source{})
	clock = now
	s.Put(ctx, Input{ID: "new", Text: "the build uses go 1.26 modules"}, Source{})
	// Equal BM25 relevance; recency puts the new one first and says so.
	res, _ := s.Search(ctx, "build go modules", SearchOptions{RecencyHalfLife: 24 * time.Hour, RecencyWeight: 0.5, Now: now})
	if fmt.Sprint(hitIDs(res)) != "[new old]" || res.Hits[1].Score >= res.Hits[1].Fused {
		t.Fatalf("recency: %v %+v", hitIDs(res), res.Hits)
	}
	if !strings.Contains(res.Hits[1].Why(), "after recency") {
		t.Fatalf("Why() = %q", res.Hits[1].Why())
	}
}

func TestWithoutEmbedderBM25Only(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{})
	putFacts(t, s)
	res, err := s.Search(ctx, "deploy service", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != ModeBM25 || !strings.Contains(res.Notice, "no embedder") || res.Hits[0].Record.ID != "deploy" || res.Hits[0].VectorRank != 0 {
		t.Fatalf("BM25-only search: %+v", res)
	}
	if st := must(s.Stats(context.Background())); !strings.HasPrefix(st.Vectors, "off") {
		t.Fatalf("Stats.Vectors = %q", st.Vectors)
	}
}

func TestKeysAreUniquePerArea(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{})
	a, _ := s.Put(ctx, Input{Key: "k", Text: "one"}, Source{})
	b, _ := s.Put(ctx, Input{Key: "k", Text: "two"}, Source{})
	if a.ID != b.ID || b.Text != "two" || !b.Created.Equal(a.Created) {
		t.Fatalf("same key did not update: %+v %+v", a, b)
	}
	c, _ := s.Put(ctx, Input{Key: "k", Area: AreaSolutions, Text: "three"}, Source{})
	if c.ID == a.ID {
		t.Fatal("the key is shared across areas")
	}
	if _, err := s.Put(ctx, Input{ID: "other", Key: "k", Text: "four"}, Source{}); err == nil || !strings.Contains(err.Error(), a.ID) {
		t.Fatalf("a second id took the key: %v", err)
	}
	if _, err := s.PutBatch(ctx, []Input{{Text: "ok"}, {Text: " "}}, Source{}); err == nil || !strings.Contains(err.Error(), "record 2") {
		t.Fatalf("empty text: %v", err)
	}
	if _, err := s.Put(ctx, Input{Area: "Bad Area", Text: "x"}, Source{}); err == nil {
		t.Fatal("bad area accepted")
	}
}

// randomOps drives a store through every event kind.
func randomOps(t testing.TB, s *Store, n int) {
	t.Helper()
	ctx := context.Background()
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau")
	var ids []string
	for i := 0; i < n; i++ {
		w := func(k int) string { return words[(i*7+k*3)%len(words)] }
		switch {
		case i%10 == 3 && len(ids) > 2:
			s.Archive(ctx, ids[i%len(ids)], "op", "", Source{})
		case i%10 == 5 && len(ids) > 2:
			s.Restore(ctx, ids[(i/2)%len(ids)], "op", Source{})
		case i%17 == 0 && len(ids) > 4:
			id := ids[i%len(ids)]
			if s.Delete(ctx, id, "op", Source{}) == nil {
				ids = slices.DeleteFunc(ids, func(x string) bool { return x == id })
			}
		case i%13 == 0 && len(ids) > 4:
			s.Merge(ctx, MergeEvent{Into: ids[0], From: []string{ids[len(ids)-1]}, Text: "merged " + w(1), Reason: "duplicate"})
		case i%6 == 0 && len(ids) > 0:
			s.RecordAccess(ctx, []string{ids[i%len(ids)]}, Source{})
		default:
			imp := float64(i%10) / 10
			r, err := s.Put(ctx, Input{Area: []string{AreaMain, AreaFragments, AreaLibrary}[i%3], Text: w(0) + " " + w(1) + " " + w(2),
				Key: map[bool]string{true: "k" + w(0)}[i%4 == 0], Tags: []string{w(3)}, Importance: &imp,
				Metadata: map[string]any{"n": i, "z": []any{"x", 1.5}}}, Source{Session: "sess", Message: fmt.Sprint(i)})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r.ID)
		}
	}
}

func TestReplayHashEqualsLiveHash(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir, Options{Embedder: newHashEmbedder()})
	randomOps(t, s, 300)
	live := must(s.Hash(context.Background()))
	st := must(s.Stats(context.Background()))

	rep, err := Replay(ctx, s.JournalPath(), filepath.Join(t.TempDir(), "scratch"), Options{Embedder: newHashEmbedder()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.StateHash != live {
		t.Fatalf("replay hash %s != live %s", rep.StateHash, live)
	}
	if rep.Records != st.Records || rep.FulltextDocs != st.FulltextDocs || rep.Vectors != st.VectorCount || rep.Events != st.JournalSeq {
		t.Fatalf("replay %+v vs live %+v", rep, st)
	}
	// Reopening (a replay at another time) gives the same hash.
	s.Close()
	s2 := openStore(t, dir, Options{Embedder: newHashEmbedder(), Now: func() time.Time { return time.Unix(0, 0) }})
	if must(s2.Hash(context.Background())) != live {
		t.Fatal("hash changed across reopen")
	}
	if n := s2.Notices(); len(n) != 0 {
		t.Fatalf("clean reopen has notices: %v", n)
	}
	if _, err := Replay(ctx, s2.JournalPath(), dir, Options{}); err == nil {
		t.Fatal("replay into a non-empty directory succeeded")
	}
}

func TestIdempotentApply(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	randomOps(t, s, 60)
	before := must(s.Hash(context.Background()))
	// Applying the whole journal again changes nothing.
	if err := s.journal.Read(context.Background(), 0, func(r stagingRecord) error {
		_, err := s.state.apply(r)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if must(s.Hash(context.Background())) != before {
		t.Fatal("re-applying the journal changed the state")
	}
}

func TestDamagedIndexesAreRebuilt(t *testing.T) {
	ctx := context.Background()
	damage := []struct {
		name   string
		do     func(dir string)
		notice string
	}{
		{"fulltext deleted", func(dir string) { os.RemoveAll(filepath.Join(dir, FulltextDir)) }, "is missing"},
		{"fulltext corrupted", func(dir string) {
			filepath.WalkDir(filepath.Join(dir, FulltextDir), func(p string, d os.DirEntry, err error) error {
				if strings.HasSuffix(p, ".zap") {
					b, _ := os.ReadFile(p)
					b[len(b)/3] ^= 0x5a
					os.WriteFile(p, b, 0o600)
				}
				return nil
			})
		}, "fails its checksum"},
		{"fulltext after a crash", func(dir string) { os.Remove(filepath.Join(dir, FulltextDir+".manifest")) }, "catching up from the journal"},
		{"fulltext from another store", func(dir string) {
			// A stray copy: a clean index whose documents do not match the journal.
			other := filepath.Join(dir, "other")
			s, _ := Open(context.Background(), other, Options{Logger: discardLogger()})
			s.Put(context.Background(), Input{ID: "stray", Text: "user terminal stray"}, Source{})
			s.Put(context.Background(), Input{ID: "stray2", Text: "another"}, Source{})
			s.Delete(context.Background(), "stray2", "", Source{})
			s.Close()
			os.RemoveAll(filepath.Join(dir, FulltextDir))
			os.Rename(filepath.Join(other, FulltextDir), filepath.Join(dir, FulltextDir))
			os.Rename(filepath.Join(other, FulltextDir+".manifest"), filepath.Join(dir, FulltextDir+".manifest"))
			os.RemoveAll(other)
		}, "holds 4 documents for 6 records"},
		{"vectors deleted", func(dir string) { os.Remove(filepath.Join(dir, VectorsFile)) }, ""},
		{"vectors corrupted", func(dir string) {
			p := filepath.Join(dir, VectorsFile)
			b, _ := os.ReadFile(p)
			b[len(b)-10] ^= 0xff
			os.WriteFile(p, b, 0o600)
		}, "fails its checksum"},
		{"vectors truncated", func(dir string) {
			p := filepath.Join(dir, VectorsFile)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o600)
		}, "vector index"},
	}
	for _, d := range damage {
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir, Options{Embedder: newHashEmbedder()})
			putFacts(t, s)
			want, _ := s.Search(ctx, "user terminal", SearchOptions{})
			hash := must(s.Hash(context.Background()))
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			d.do(dir)
			s2 := openStore(t, dir, Options{Embedder: newHashEmbedder()})
			notes := strings.Join(s2.Notices(), "\n")
			if d.notice != "" && !strings.Contains(notes, d.notice) {
				t.Fatalf("notices %q do not say %q", notes, d.notice)
			}
			got, err := s2.Search(ctx, "user terminal", SearchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(hitIDs(got)) != fmt.Sprint(hitIDs(want)) || must(s2.Hash(context.Background())) != hash {
				t.Fatalf("after rebuild: %v, want %v", hitIDs(got), hitIDs(want))
			}
			if st := must(s2.Stats(context.Background())); st.FulltextDocs != uint64(len(facts)) || st.VectorCount != len(facts) {
				t.Fatalf("after rebuild: %d docs, %d vectors", st.FulltextDocs, st.VectorCount)
			}
		})
	}
}

func TestModelChangeReembeds(t *testing.T) {
	dir := t.TempDir()
	e := newHashEmbedder()
	s := openStore(t, dir, Options{Embedder: e})
	putFacts(t, s)
	s.Close()
	e2 := newHashEmbedder()
	e2.model = "test-hash-64-v2"
	s2 := openStore(t, dir, Options{Embedder: e2})
	if !strings.Contains(strings.Join(s2.Notices(), "\n"), "re-embedding every record") {
		t.Fatalf("notices: %v", s2.Notices())
	}
	if e2.calls.Load() == 0 || must(s2.Stats(context.Background())).VectorCount != len(facts) || must(s2.Stats(context.Background())).VectorModel != "test-hash-64-v2" {
		t.Fatalf("not re-embedded: %+v", must(s2.Stats(context.Background())))
	}
	// Without an embedder the vector file is left as it is.
	s2.Close()
	before, _ := os.ReadFile(filepath.Join(dir, VectorsFile))
	s3 := openStore(t, dir, Options{})
	s3.Close()
	after, _ := os.ReadFile(filepath.Join(dir, VectorsFile))
	if !bytes.Equal(before, after) {
		t.Fatal("a store without embedder changed the vector file")
	}
}

// TestEmbeddingChangeReported: Open says which model and dimensions the
// vectors had when it re-embeds them for another model, and only then (not
// for a new store, the same model, a store opened without an embedder, or the
// next open after the re-embedding).
func TestEmbeddingChangeReported(t *testing.T) {
	hash := func(model string, dims int) *hashEmbedder { return &hashEmbedder{dims: dims, model: model} }
	tests := []struct {
		name   string
		first  *hashEmbedder // builds the store; nil: no vectors
		second *hashEmbedder
		want   *EmbeddingChange
	}{
		{"new store", nil, hash("m", 64), nil},
		{"same model", hash("m", 64), hash("m", 64), nil},
		{"other model", hash("m", 64), hash("m2", 64), &EmbeddingChange{OldModel: "m", OldDims: 64, NewModel: "m2", NewDims: 64}},
		{"other dimensions", hash("m", 64), hash("m-small", 32), &EmbeddingChange{OldModel: "m", OldDims: 64, NewModel: "m-small", NewDims: 32}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var first Options
			if tc.first != nil {
				first.Embedder = tc.first
			}
			s := openStore(t, dir, first)
			putFacts(t, s)
			if _, changed := s.EmbeddingChange(); changed {
				t.Fatal("a store opened for the first time reports a change")
			}
			s.Close()
			s2 := openStore(t, dir, Options{Embedder: tc.second})
			got, changed := s2.EmbeddingChange()
			switch {
			case tc.want == nil && changed:
				t.Fatalf("change %+v, want none", got)
			case tc.want != nil && (!changed || got != *tc.want):
				t.Fatalf("change %+v (%v), want %+v", got, changed, *tc.want)
			}
			if tc.want != nil && must(s2.Stats(context.Background())).VectorCount != len(facts) {
				t.Fatalf("not re-embedded: %+v", must(s2.Stats(context.Background())))
			}
			s2.Close()
			s3 := openStore(t, dir, Options{Embedder: tc.second})
			defer s3.Close()
			if got, changed := s3.EmbeddingChange(); changed {
				t.Fatalf("the open after the re-embedding reports %+v again", got)
			}
		})
	}
}

func TestEmbedderFailureKeepsRecords(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := newHashEmbedder()
	s := openStore(t, dir, Options{Embedder: e})
	putFacts(t, s)
	e.fail.Store(true)
	if _, err := s.Put(ctx, Input{ID: "late", Text: "the staging log lives in the home directory"}, Source{}); err != nil {
		t.Fatalf("a failing embedder blocked a save: %v", err)
	}
	if !must(s.Stats(context.Background())).VectorsLagging {
		t.Fatal("lag not reported")
	}
	res, err := s.Search(ctx, "staging log", SearchOptions{})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Record.ID != "late" || !strings.Contains(res.Notice, "embedding the query failed") {
		t.Fatalf("BM25 did not find the record saved while embedding failed: %v %v %q", hitIDs(res), err, res.Notice)
	}
	if _, err := s.Search(ctx, "staging log", SearchOptions{Mode: ModeVector}); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("vector-only search with a failing embedder: %v", err)
	}
	s.Close()
	e.fail.Store(false)
	s2 := openStore(t, dir, Options{Embedder: e})
	if must(s2.Stats(context.Background())).VectorCount != len(facts)+1 || must(s2.Stats(context.Background())).VectorsLagging {
		t.Fatalf("vectors did not catch up: %+v", must(s2.Stats(context.Background())))
	}
	res, _ = s2.Search(ctx, "staging log", SearchOptions{Mode: ModeVector})
	if len(res.Hits) == 0 || res.Hits[0].Record.ID != "late" {
		t.Fatalf("vector search after catch-up: %v", hitIDs(res))
	}
}

func TestSecondOpenIsRefused(t *testing.T) {
	dir := t.TempDir()
	openStore(t, dir, Options{})
	_, err := Open(context.Background(), dir, Options{Logger: discardLogger()})
	if err == nil || !strings.Contains(err.Error(), "open in another process") || !strings.Contains(err.Error(), fmt.Sprintf("process %d", os.Getpid())) {
		t.Fatalf("second Open: %v", err)
	}
}

func TestHistoryAndMerge(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{})
	putFacts(t, s)
	if err := s.Merge(ctx, MergeEvent{Into: "theme", From: []string{"coffee"}, Text: "The user prefers a dark theme and black coffee", Reason: "sleep: same user preferences", Source: Source{Source: "sleep"}}); err != nil {
		t.Fatal(err)
	}
	coffee, _ := must2(s.Get(context.Background(), "coffee"))
	theme, _ := must2(s.Get(context.Background(), "theme"))
	if coffee.Status != StatusArchived || coffee.SupersededBy != "theme" || fmt.Sprint(theme.Tags) != "[habit pref]" {
		t.Fatalf("merge: %+v %+v", coffee, theme)
	}
	h, err := s.History(ctx, "coffee")
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[0].Kind != KindUpsert || h[1].Kind != KindMerge || !strings.Contains(h[1].Summary(), "sleep: same user preferences") {
		t.Fatalf("history: %+v", h)
	}
	if coffee.Provenance.Session != "s1" || coffee.Provenance.Source != "test" || coffee.Provenance.Seq != h[0].Seq || coffee.Provenance.UpdatedSeq != h[1].Seq {
		t.Fatalf("provenance: %+v", coffee.Provenance)
	}
	// An event kind from a later version shows up in history and is counted.
	if _, err := s.journal.Append(ctx, "memory.pin.v1", "", map[string]string{"id": "theme"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := openStore(t, s.Dir(), Options{})
	if h, _ := s2.History(ctx, "theme"); h[len(h)-1].Kind != "memory.pin.v1" {
		t.Fatalf("unknown event missing from history: %+v", h)
	}
	if must(s2.Stats(context.Background())).UnknownEvents["memory.pin.v1"] != 1 {
		t.Fatalf("unknown events: %+v", must(s2.Stats(context.Background())).UnknownEvents)
	}
	if err := s2.Delete(ctx, "nope", "", Source{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete of a missing id: %v", err)
	}
}

func TestImportReportsBadLinesAndExportRoundTrips(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{BatchSize: 2})
	in := `{"area":"main","text":"first fact","key":"f1","tags":["a"]}
not json
{"area":"main","text":""}
{"text":"no area"}

{"area":"Main Area","text":"bad area"}
{"id":"fixed","area":"solutions","text":"second fact","metadata":{"src":"x"},"created":"2020-01-02T03:04:05Z"}
{"area":"main","text":"unknown field","colour":"red"}
{"area":"main","text":"third fact","key":"f1"}
{"id":"other","area":"main","text":"takes a key that is not free","key":"f1"}
`
	var progress []ImportProgress
	rep, err := s.Import(ctx, strings.NewReader(in), Source{Source: "import"}, func(p ImportProgress) { progress = append(progress, p) })
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, b := range rep.Bad {
		bad = append(bad, fmt.Sprint(b.Line))
	}
	// A record without an area goes to main, as Put puts it.
	if rep.Lines != 10 || rep.Imported != 4 || strings.Join(bad, ",") != "2,3,6,8,10" || !strings.Contains(rep.Bad[4].Reason, "belongs to record") {
		t.Fatalf("report %+v", rep)
	}
	if len(progress) == 0 || progress[len(progress)-1].Imported != 4 {
		t.Fatalf("progress %+v", progress)
	}
	if hits := must(s.List(context.Background(), Filter{Areas: []string{AreaMain}})); !slices.ContainsFunc(hits, func(r *Record) bool { return r.Text == "no area" }) {
		t.Fatalf("the record without an area is not in main: %+v", hits)
	}
	if r, _ := must2(s.GetByKey(context.Background(), AreaMain, "f1")); r.Text != "third fact" {
		t.Fatalf("key f1 = %+v", r)
	}
	if r, _ := must2(s.Get(context.Background(), "fixed")); !r.Created.Equal(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)) || r.Metadata["src"] != "x" {
		t.Fatalf("fixed = %+v", r)
	}
	var out bytes.Buffer
	n, err := s.Export(ctx, &out)
	if err != nil || n != 3 {
		t.Fatalf("export %d %v", n, err)
	}
	s2 := openStore(t, t.TempDir(), Options{})
	if rep, err := s2.Import(ctx, &out, Source{}, nil); err != nil || rep.Imported != 3 || len(rep.Bad) != 0 {
		t.Fatalf("re-import %+v %v", rep, err)
	}
	a, _ := must2(s.Get(context.Background(), "fixed"))
	b, _ := must2(s2.Get(context.Background(), "fixed"))
	if a.Text != b.Text || !a.Created.Equal(b.Created) || a.Area != b.Area {
		t.Fatalf("round trip: %+v vs %+v", a, b)
	}
}

func TestConcurrentSearchWhileWriting(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{Embedder: newHashEmbedder()})
	putFacts(t, s)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := s.Search(ctx, "user deploy terminal", SearchOptions{MMRLambda: 0.5})
				if err != nil || len(res.Hits) == 0 {
					t.Errorf("search: %v %v", hitIDs(res), err)
					return
				}
				s.Stats(context.Background())
			}
		}()
	}
	for i := 0; i < 60; i++ {
		if _, err := s.Put(ctx, Input{Text: fmt.Sprintf("note %d about the user terminal", i)}, Source{}); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			s.Archive(ctx, "coffee", "", "", Source{})
			s.Restore(ctx, "coffee", "", Source{})
		}
	}
	close(stop)
	wg.Wait()
}
