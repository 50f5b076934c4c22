package natsjournal_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/embed"
	"github.com/exocortex/exocortex/memory/natsjournal"
	"github.com/exocortex/exocortex/memory/natsjournal/natstest"
	"github.com/exocortex/exocortex/staging"
)

// patience is how long a test waits for a condition: generous, for a loaded
// 2-core CI machine.
const patience = 60 * time.Second

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// openJournal connects a client ("a host") to the server's stream.
func openJournal(t testing.TB, url string, mut ...func(*natsjournal.Config)) *natsjournal.Journal {
	t.Helper()
	cfg, err := natsjournal.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = quiet()
	for _, m := range mut {
		m(&cfg)
	}
	j, err := natsjournal.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("natsjournal.Open(%s): %v", url, err)
	}
	return j
}

// openHost opens a store in dir that is a replica of the server's stream.
func openHost(t testing.TB, url, dir string, emb memory.Embedder) *memory.Store {
	t.Helper()
	j := openJournal(t, url)
	s, err := memory.Open(context.Background(), dir, memory.Options{Journal: j, Logger: quiet(), Embedder: emb})
	if err != nil {
		j.Close()
		t.Fatalf("memory.Open(%s) on %s: %v", dir, url, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func hasHit(res memory.Result, id string) bool {
	for _, h := range res.Hits {
		if h.Record.ID == id {
			return true
		}
	}
	return false
}

// waitFound searches s until the record id is a hit, and returns how long it
// took; it fails the test after patience.
func waitFound(t testing.TB, s *memory.Store, query, id string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		res, err := s.Search(context.Background(), query, memory.SearchOptions{Filter: memory.Filter{Areas: []string{memory.AreaMain, "fragments"}}})
		if err != nil {
			t.Fatalf("Search(%q): %v", query, err)
		}
		if hasHit(res, id) {
			return time.Since(start)
		}
		if time.Since(start) > patience {
			t.Fatalf("record %s not found by %q on the other host after %s", id, query, patience)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func hashOf(t testing.TB, s *memory.Store) string {
	t.Helper()
	h, err := s.Hash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// waitSeq waits until s has applied the stream up to seq.
func waitSeq(t testing.TB, s *memory.Store, seq uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := s.WaitApplied(ctx, seq); err != nil {
		t.Fatal(err)
	}
}

func TestTwoHostsShareOneStream(t *testing.T) {
	srv := natstest.Start(t)
	emb, err := embed.Open(context.Background(), embed.Spec("glove:compact"), t.TempDir())
	if err != nil {
		t.Fatalf("the compact GloVe embedder: %v", err)
	}
	a := openHost(t, srv.URL(), filepath.Join(t.TempDir(), "a"), emb)
	b := openHost(t, srv.URL(), filepath.Join(t.TempDir(), "b"), emb)
	ctx := context.Background()

	tests := []struct {
		name   string
		writer *memory.Store
		reader *memory.Store
		in     memory.Input
		query  string
	}{
		{"a to b", a, b, memory.Input{Text: "the staging server lives in the Frankfurt rack"}, "Frankfurt rack"},
		{"b to a", b, a, memory.Input{Text: "deploys happen on Tuesdays after the standup", Key: "deploy-day"}, "deploys Tuesdays"},
		{"a to b, another area", a, b, memory.Input{Area: "fragments", Text: "the cat is called Ziggy"}, "Ziggy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := tc.writer.Put(ctx, tc.in, memory.Source{Session: "s-" + tc.name})
			if err != nil {
				t.Fatalf("Put: %v", err)
			}
			// Visible on the writer as soon as Put returns.
			if res, _ := tc.writer.Search(ctx, tc.query, memory.SearchOptions{Filter: memory.Filter{Areas: []string{rec.Area}}}); !hasHit(res, rec.ID) {
				t.Fatalf("the writer does not find its own record %s", rec.ID)
			}
			took := waitFound(t, tc.reader, tc.query, rec.ID)
			t.Logf("write to visible on the other host: %s", took)
			if took > time.Second {
				t.Errorf("record %s became visible on the other host after %s, more than 1s", rec.ID, took)
			}
			got, ok, err := tc.reader.Get(ctx, rec.ID)
			if err != nil || !ok || got.Text != tc.in.Text || got.Provenance.Session != "s-"+tc.name {
				t.Fatalf("Get on the other host = %+v, %v, %v", got, ok, err)
			}
		})
	}
	// Archive on b, seen on a; the last record is what both hold.
	recs, _ := a.Records(ctx)
	if err := b.Archive(ctx, recs[0].ID, "stale", "", memory.Source{}); err != nil {
		t.Fatal(err)
	}
	waitSeq(t, a, b.JournalSeq())
	if ha, hb := hashOf(t, a), hashOf(t, b); ha != hb {
		t.Fatalf("state hashes differ: a %s, b %s", ha, hb)
	}
	// Replay: each host's journal file and the stream itself give the live hash.
	want := hashOf(t, a)
	for _, s := range []*memory.Store{a, b} {
		rep, err := memory.Replay(ctx, s.JournalPath(), t.TempDir(), memory.Options{Logger: quiet()})
		if err != nil || rep.StateHash != want {
			t.Fatalf("Replay(%s) = %s, %v; want %s", s.JournalPath(), rep.StateHash, err, want)
		}
	}
	j := openJournal(t, srv.URL())
	defer j.Close()
	rep, err := memory.ReplayJournal(ctx, j, t.TempDir(), memory.Options{Logger: quiet()})
	if err != nil || rep.StateHash != want {
		t.Fatalf("ReplayJournal(stream) = %s, %v; want %s", rep.StateHash, err, want)
	}
}

func TestHostOfflineCatchesUp(t *testing.T) {
	srv := natstest.Start(t)
	ctx := context.Background()
	a := openHost(t, srv.URL(), filepath.Join(t.TempDir(), "a"), nil)
	bdir := filepath.Join(t.TempDir(), "b")
	b := openHost(t, srv.URL(), bdir, nil)
	if _, err := b.Put(ctx, memory.Input{Text: "written before b went away"}, memory.Source{}); err != nil {
		t.Fatal(err)
	}
	waitSeq(t, a, 1)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	const n = 1000
	var ins []memory.Input
	for i := range n {
		ins = append(ins, memory.Input{Text: fmt.Sprintf("offline write number %d about topic%d", i, i)})
	}
	for i := 0; i < n; i += 100 {
		if _, err := a.PutBatch(ctx, ins[i:i+100], memory.Source{Session: "batch"}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	b = openHost(t, srv.URL(), bdir, nil)
	t.Logf("b caught up %d records on open in %s", n, time.Since(start))
	if got, want := b.JournalSeq(), a.JournalSeq(); got != want {
		t.Fatalf("b at seq %d after reopening, a at %d", got, want)
	}
	if ha, hb := hashOf(t, a), hashOf(t, b); ha != hb {
		t.Fatalf("state hashes differ after the catch-up: a %s, b %s", ha, hb)
	}
	res, err := b.Search(ctx, "topic777", memory.SearchOptions{})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Record.Text != ins[777].Text {
		t.Fatalf("b's search for topic777 = %+v, %v", res.Hits, err)
	}
}

func TestRedeliveryIsIdempotent(t *testing.T) {
	srv := natstest.Start(t)
	ctx := context.Background()
	j := openJournal(t, srv.URL())
	defer j.Close()
	e := staging.Entry{Kind: memory.KindUpsert, Payload: memory.UpsertEvent{ID: "r1", Area: memory.AreaMain, Text: "said once"}}
	tests := []struct {
		name    string
		ids     []string
		entries []staging.Entry
		wantSeq []uint64
	}{
		{"first", []string{"m1"}, []staging.Entry{e}, []uint64{1}},
		{"same id again", []string{"m1"}, []staging.Entry{e}, []uint64{1}},
		{"batch with a repeat", []string{"m2", "m1"}, []staging.Entry{
			{Kind: memory.KindUpsert, Payload: memory.UpsertEvent{ID: "r2", Area: memory.AreaMain, Text: "said twice"}}, e}, []uint64{2, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := j.Append(ctx, tc.entries, tc.ids)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range recs {
				if r.Seq != tc.wantSeq[i] {
					t.Errorf("record %d: seq %d, want %d", i, r.Seq, tc.wantSeq[i])
				}
			}
		})
	}
	if last, err := j.LastSeq(ctx); err != nil || last != 2 {
		t.Fatalf("LastSeq = %d, %v; want 2 (the repeats stored once)", last, err)
	}
	// A host replays the stream; a second delivery of records it holds changes nothing.
	s := openHost(t, srv.URL(), t.TempDir(), nil)
	if n, _ := s.Stats(ctx); n.Records != 2 {
		t.Fatalf("the host holds %d records, want 2", n.Records)
	}
	before := hashOf(t, s)
	if err := s.ApplyShared(ctx, []staging.Record{mustRead(t, j, 1), mustRead(t, j, 2)}); err != nil {
		t.Fatal(err)
	}
	if after := hashOf(t, s); after != before || s.JournalSeq() != 2 {
		t.Fatalf("re-delivered records changed the host: hash %s -> %s, seq %d", before, after, s.JournalSeq())
	}
}

func mustRead(t testing.TB, j memory.Journal, seq uint64) staging.Record {
	t.Helper()
	var out staging.Record
	err := j.Read(context.Background(), seq-1, func(r staging.Record) error {
		if r.Seq == seq {
			out = r
		}
		return nil
	})
	if err != nil || out.Seq != seq {
		t.Fatalf("reading record %d: %v", seq, err)
	}
	return out
}
