package natsjournal

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/natsjournal/natstest"
	"github.com/exocortex/exocortex/staging"
)

// TestClusterFaults runs a real 3-node JetStream cluster of nats-server
// processes (built by `make nats-server` into .tools/bin), an R3 journal in
// the promoted mode and two promoters. While one host imports records in
// batches, one node is killed (SIGKILL) and restarted, and the active
// promoter is killed. Every import batch that was acknowledged must be in the
// stream exactly once, and on both hosts, with one state hash.
func TestClusterFaults(t *testing.T) {
	bin := natstest.Binary()
	if bin == "" {
		t.Skip("no nats-server binary: run `make nats-server` (it builds .tools/bin/nats-server from the module), or set EXOCORTEX_NATS_SERVER")
	}
	if testing.Short() {
		t.Skip("-short: the cluster fault test runs real servers for tens of seconds")
	}
	cl := natstest.StartCluster(t, bin, 3)
	url := cl.URL() + "?replicas=3"
	ctx := context.Background()
	cfg := func(promoted bool) Config {
		c := config(t, url, promoted)
		c.WriteTimeout = patience
		return c
	}
	// The cluster elects its meta leader after the nodes meet: wait for a
	// stream to be creatable.
	probe, err := Open(ctx, cfg(true))
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	deadline := time.Now().Add(patience)
	for probe.ensurePromoted(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the 3-node cluster did not accept an R3 stream within 60s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	var killP1 context.CancelFunc
	var mu sync.Mutex
	stopP1 := startPromoterCfg(t, PromoterConfig{Journal: cfg(false), Dir: filepath.Join(t.TempDir(), "p1"), ID: "p1", Lease: time.Second, Logger: quiet()},
		func(cancel context.CancelFunc) { mu.Lock(); killP1 = cancel; mu.Unlock() })
	defer stopP1()
	openHost := func() *memory.Store {
		j, err := Open(ctx, cfg(true))
		if err != nil {
			t.Fatal(err)
		}
		s, err := memory.Open(ctx, t.TempDir(), memory.Options{Journal: j, Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a := openHost()
	if _, err := a.Put(ctx, memory.Input{Key: "first", Text: "the first record, p1 active"}, memory.Source{}); err != nil {
		t.Fatal(err)
	}
	startPromoterCfg(t, PromoterConfig{Journal: cfg(false), Dir: filepath.Join(t.TempDir(), "p2"), ID: "p2", Lease: time.Second, Logger: quiet()}, nil)

	const batches, perBatch = 30, 20
	acked := map[string]bool{"first": true}
	start := time.Now()
	for b := range batches {
		switch b {
		case 5:
			cl.Kill(1)
			t.Logf("batch %d: node 2 killed", b)
		case 12:
			cl.Restart(1)
			t.Logf("batch %d: node 2 restarted", b)
		case 18:
			mu.Lock()
			killP1()
			mu.Unlock()
			t.Logf("batch %d: promoter p1 killed", b)
		}
		var ins []memory.Input
		for i := range perBatch {
			ins = append(ins, memory.Input{Key: fmt.Sprintf("b%d-%d", b, i), Text: fmt.Sprintf("imported record %d of batch %d", i, b)})
		}
		if _, err := a.PutBatch(ctx, ins, memory.Source{Session: "import"}); err != nil {
			t.Logf("batch %d not acknowledged: %v", b, err)
			continue
		}
		for _, in := range ins {
			acked[in.Key] = true
		}
	}
	t.Logf("%d of %d records acknowledged in %s through a node crash and a promoter failover", len(acked), batches*perBatch+1, time.Since(start))
	if len(acked) < batches*perBatch/2 {
		t.Fatalf("only %d records acknowledged", len(acked))
	}
	keys := map[string]int{}
	if err := probe.Read(ctx, 0, func(r staging.Record) error {
		var u memory.UpsertEvent
		if err := r.Decode(&u); err != nil {
			return err
		}
		keys[u.Key]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for k := range acked {
		if keys[k] != 1 {
			t.Errorf("acknowledged record %s is in the stream %d times", k, keys[k])
		}
	}
	for k, n := range keys {
		if n != 1 {
			t.Errorf("record %s is in the stream %d times", k, n)
		}
	}
	b := openHost()
	last, err := probe.LastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*memory.Store{a, b} {
		wctx, cancel := context.WithTimeout(ctx, patience)
		err := s.WaitApplied(wctx, last)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for k := range acked {
			if r, ok, _ := s.GetByKey(ctx, memory.AreaMain, k); !ok || r.Key != k {
				t.Fatalf("acknowledged record %s missing on a host", k)
			}
		}
	}
	ha, _ := a.Hash(ctx)
	hb, _ := b.Hash(ctx)
	if ha != hb {
		t.Fatalf("the hosts' state hashes differ: %s, %s", ha, hb)
	}
}

// startPromoterCfg runs a promoter with cfg; started, if set, receives its
// kill switch.
func startPromoterCfg(t testing.TB, cfg PromoterConfig, started func(context.CancelFunc)) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if started != nil {
		started(cancel)
	}
	done := make(chan error, 1)
	go func() { done <- RunPromoter(ctx, cfg) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(stop)
	return stop
}
