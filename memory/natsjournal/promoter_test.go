package natsjournal

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/natsjournal/natstest"
	"github.com/exocortex/exocortex/staging"
)

const patience = 60 * time.Second

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func config(t testing.TB, url string, promoted bool) Config {
	t.Helper()
	cfg, err := ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger, cfg.Promoted, cfg.PromoteTimeout = quiet(), promoted, patience
	return cfg
}

// startPromoter runs a promoter until the returned stop is called (or the
// test ends).
func startPromoter(t testing.TB, url, id string, hook func(context.CancelFunc, string)) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := PromoterConfig{Journal: config(t, url, false), Dir: filepath.Join(t.TempDir(), id), ID: id, Lease: time.Second, Logger: quiet()}
	if hook != nil {
		cfg.afterDeltas = func(p string) { hook(cancel, p) }
	}
	done := make(chan error, 1)
	go func() { done <- RunPromoter(ctx, cfg) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("promoter %s: %v", id, err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func promotedHost(t testing.TB, url, dir string) *memory.Store {
	t.Helper()
	j, err := Open(context.Background(), config(t, url, true))
	if err != nil {
		t.Fatal(err)
	}
	s, err := memory.Open(context.Background(), dir, memory.Options{Journal: j, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestPromoterDecides(t *testing.T) {
	srv := natstest.Start(t)
	startPromoter(t, srv.URL(), "p1", nil)
	ctx := context.Background()
	a := promotedHost(t, srv.URL(), t.TempDir())
	raw, err := Open(ctx, config(t, srv.URL(), true))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	first, err := a.Put(ctx, memory.Input{Key: "deploy", Text: "deploys run from the blue pipeline", Tags: []string{"ops"}}, memory.Source{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		entries  []staging.Entry
		decision string
		wantErr  string
		wantSeq  uint64 // the stream's last sequence afterwards
	}{
		{"a key another record holds goes to that record", []staging.Entry{{Kind: memory.KindUpsert, Payload: memory.UpsertEvent{
			ID: "other-host-id", Area: memory.AreaMain, Key: " deploy ", Text: "deploys run from the green pipeline", Tags: []string{"ops", "ops"}}}},
			DecisionOverride, "", 2},
		{"the same content again is a duplicate", []staging.Entry{{Kind: memory.KindUpsert, Payload: memory.UpsertEvent{
			ID: first.ID, Area: memory.AreaMain, Key: "deploy", Text: "deploys run from the green pipeline", Tags: []string{"ops"}}}},
			DecisionSkip, "", 2},
		{"an archive of a record that does not exist is refused", []staging.Entry{{Kind: memory.KindArchive, Payload: memory.ArchiveEvent{ID: "nope"}}},
			DecisionSkip, "refused the write", 2},
		{"a new record is promoted", []staging.Entry{{Kind: memory.KindUpsert, Payload: memory.UpsertEvent{
			ID: "fresh", Area: memory.AreaMain, Text: "the indexer restarts at midnight"}}},
			DecisionPromote, "", 3},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ids := []string{fmt.Sprintf("test-%d", i)}
			_, err := raw.Append(ctx, tc.entries, ids)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Append: %v, want an error saying %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			m, err := raw.lastAudit(ctx, raw.cfg.auditSubject(proposalID(ids)))
			if err != nil || !strings.Contains(string(m.Data), `"decision":"`+tc.decision+`"`) || !strings.Contains(string(m.Data), `"promoter":"p1"`) {
				t.Fatalf("audit of the proposal: %v %s; want decision %s by p1", err, m.Data, tc.decision)
			}
			if last, _ := raw.LastSeq(ctx); last != tc.wantSeq {
				t.Fatalf("stream at seq %d, want %d", last, tc.wantSeq)
			}
		})
	}
	// The promoter's batched lookup finds every decision, and none for a
	// proposal never made.
	var subjs []string
	for i := range tests {
		subjs = append(subjs, raw.cfg.auditSubject(proposalID([]string{fmt.Sprintf("test-%d", i)})))
	}
	found, err := raw.lastAudits(ctx, append(subjs, raw.cfg.auditSubject("pnever")))
	if err != nil || len(found) != len(tests) {
		t.Fatalf("lastAudits: %d decisions, %v; want %d", len(found), err, len(tests))
	}
	if found, err := raw.lastAudits(ctx, []string{raw.cfg.auditSubject("pnever")}); err != nil || len(found) != 0 {
		t.Fatalf("lastAudits of an undecided proposal: %v, %v", found, err)
	}
	if err := a.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	got, ok, _ := a.GetByKey(ctx, memory.AreaMain, "deploy")
	if !ok || got.ID != first.ID || got.Text != "deploys run from the green pipeline" {
		t.Fatalf("the record of key deploy: %+v", got)
	}
	if _, ok, _ := a.Get(ctx, "other-host-id"); ok {
		t.Fatal("the overridden id became a record of its own")
	}
	if who, err := raw.Promoter(ctx); err != nil || who != "p1" {
		t.Fatalf("Promoter() = %q, %v", who, err)
	}
}

// TestPromoterReplacedWithoutDoubleApply: the active promoter dies after
// writing a proposal's deltas and before recording its decision; the
// standby takes the lease, finds the proposal unacknowledged, and decides it
// again without writing its deltas twice. Every acknowledged write is in the
// stream exactly once and both replicas agree.
func TestPromoterReplacedWithoutDoubleApply(t *testing.T) {
	srv := natstest.Start(t)
	ctx := context.Background()
	var n int
	var mu sync.Mutex
	var killed string
	startPromoter(t, srv.URL(), "p1", func(die context.CancelFunc, p string) {
		mu.Lock()
		defer mu.Unlock()
		if n++; n == 3 {
			killed = p
			die()
		}
	})
	a := promotedHost(t, srv.URL(), t.TempDir())
	// Wait for p1 to take the lease before the standby starts.
	if _, err := a.Put(ctx, memory.Input{Key: "k0", Text: "record number 0"}, memory.Source{}); err != nil {
		t.Fatal(err)
	}
	startPromoter(t, srv.URL(), "p2", nil)
	const writes = 12
	start := time.Now()
	for i := 1; i < writes; i++ {
		if _, err := a.Put(ctx, memory.Input{Key: fmt.Sprintf("k%d", i), Text: fmt.Sprintf("record number %d", i)}, memory.Source{}); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	t.Logf("%d writes through a promoter failover in %s (p1 died after the deltas of %s)", writes, time.Since(start), killed)
	if killed == "" {
		t.Fatal("p1 was never killed")
	}
	raw, err := Open(ctx, config(t, srv.URL(), true))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	last, _ := raw.LastSeq(ctx)
	keys := map[string]int{}
	raw.Read(ctx, 0, func(r staging.Record) error {
		var u memory.UpsertEvent
		r.Decode(&u)
		keys[u.Key]++
		return nil
	})
	if last != writes || len(keys) != writes {
		t.Fatalf("stream holds %d records for %d keys, want %d each: %v", last, len(keys), writes, keys)
	}
	for k, c := range keys {
		if c != 1 {
			t.Errorf("key %s written %d times", k, c)
		}
	}
	if who, _ := raw.Promoter(ctx); who != "p2" {
		t.Errorf("the active promoter is %q, want p2", who)
	}
	b := promotedHost(t, srv.URL(), t.TempDir())
	ha, _ := a.Hash(ctx)
	hb, _ := b.Hash(ctx)
	if ha != hb {
		t.Fatalf("hashes differ: %s and %s", ha, hb)
	}
}
