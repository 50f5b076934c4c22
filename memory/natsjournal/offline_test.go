package natsjournal_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/natsjournal"
	"github.com/exocortex/exocortex/memory/natsjournal/natstest"
	"github.com/exocortex/exocortex/staging"
)

// TestOfflineHost: with the server gone, a host keeps answering searches
// from its own indexes, refuses writes with ErrJournalUnavailable (nothing
// stored, nothing queued), and says so in its status; once the server is
// back it writes again and the other host catches up.
func TestOfflineHost(t *testing.T) {
	srv := natstest.Start(t)
	ctx := context.Background()
	a := openHost(t, srv.URL(), filepath.Join(t.TempDir(), "a"), nil)
	b := openHost(t, srv.URL(), filepath.Join(t.TempDir(), "b"), nil)
	rec, err := a.Put(ctx, memory.Input{Text: "the backup job runs at 02:00"}, memory.Source{})
	if err != nil {
		t.Fatal(err)
	}
	waitFound(t, b, "backup job", rec.ID)

	srv.Shutdown()
	if res, err := b.Search(ctx, "backup job", memory.SearchOptions{}); err != nil || !hasHit(res, rec.ID) {
		t.Fatalf("search while offline: %v, %v", res.Hits, err)
	}
	_, err = b.Put(ctx, memory.Input{Text: "written while offline"}, memory.Source{})
	if !errors.Is(err, memory.ErrJournalUnavailable) {
		t.Fatalf("a write while offline: %v, want ErrJournalUnavailable", err)
	}
	t.Logf("offline write refused: %v", err)
	if st, ok := b.Shared(ctx); !ok || st.Offline == "" {
		t.Fatalf("status while offline: %+v", st)
	}
	if n, _ := b.Stats(ctx); n.Records != 1 {
		t.Fatalf("the refused write left %d records", n.Records)
	}

	srv.Restart()
	deadline := time.Now().Add(patience)
	var later *memory.Record
	for {
		later, err = b.Put(ctx, memory.Input{Text: "written after the server came back"}, memory.Source{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writes still refused %s after the restart: %v", patience, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	waitFound(t, a, "server came back", later.ID)
	if ha, hb := hashOf(t, a), hashOf(t, b); ha != hb {
		t.Fatalf("hashes differ after the reconnect: %s %s", ha, hb)
	}
}

// TestServerRestartMidWrite: the server is stopped and started again while a
// host writes batches; every batch acknowledged is in the stream once, none
// twice, and the hosts agree.
func TestServerRestartMidWrite(t *testing.T) {
	srv := natstest.Start(t)
	ctx := context.Background()
	j := openJournal(t, srv.URL(), func(c *natsjournal.Config) { c.WriteTimeout = patience })
	a, err := memory.Open(ctx, t.TempDir(), memory.Options{Journal: j, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var mu sync.Mutex
	acked := map[string]bool{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for b := range 40 {
			var ins []memory.Input
			for i := range 25 {
				ins = append(ins, memory.Input{Key: fmt.Sprintf("k%d-%d", b, i), Text: fmt.Sprintf("record %d of batch %d", i, b)})
			}
			if _, err := a.PutBatch(ctx, ins, memory.Source{}); err != nil {
				continue
			}
			mu.Lock()
			for _, in := range ins {
				acked[in.Key] = true
			}
			mu.Unlock()
		}
	}()
	// Stop the server once some batches are in, start it again shortly after.
	for a.JournalSeq() < 200 {
		time.Sleep(5 * time.Millisecond)
	}
	srv.Shutdown()
	time.Sleep(500 * time.Millisecond)
	srv.Restart()
	<-done
	check := openJournal(t, srv.URL())
	defer check.Close()
	keys := map[string]int{}
	if err := check.Read(ctx, 0, func(r staging.Record) error {
		var u memory.UpsertEvent
		r.Decode(&u)
		keys[u.Key]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d records acknowledged, %d in the stream", len(acked), len(keys))
	for k := range acked {
		if keys[k] != 1 {
			t.Errorf("acknowledged %s is in the stream %d times", k, keys[k])
		}
	}
	for k, n := range keys {
		if n != 1 {
			t.Errorf("%s is in the stream %d times", k, n)
		}
	}
	last, _ := check.LastSeq(ctx)
	b := openHost(t, srv.URL(), t.TempDir(), nil)
	waitSeq(t, a, last)
	if ha, hb := hashOf(t, a), hashOf(t, b); ha != hb || b.JournalSeq() != last {
		t.Fatalf("after the restart: hashes %s %s, b at %d of %d", ha, hb, b.JournalSeq(), last)
	}
}
