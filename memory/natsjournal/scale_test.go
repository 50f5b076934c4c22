package natsjournal

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/natsjournal/natstest"
	"github.com/exocortex/exocortex/staging"
)

// TestScaleSimulation is the scale run behind docs/PERFORMANCE.md ("Shared
// memory on NATS JetStream"): 8 hosts on one embedded server write and search
// at once, directly and through the promoter, against the raw JetStream
// publish rate of the same server in the same run; then a fresh host catches
// up. It takes about a minute, so it runs only with EXOCORTEX_NATS_SCALE=1
// (EXOCORTEX_NATS_SCALE_WRITES sets the writes per host, default 150).
func TestScaleSimulation(t *testing.T) {
	if os.Getenv("EXOCORTEX_NATS_SCALE") != "1" {
		t.Skip("the scale simulation runs with EXOCORTEX_NATS_SCALE=1 (about a minute)")
	}
	writes := 150
	if v, err := strconv.Atoi(os.Getenv("EXOCORTEX_NATS_SCALE_WRITES")); err == nil && v > 0 {
		writes = v
	}
	const hosts = 8
	srv := natstest.Start(t)
	ctx := context.Background()

	drain := 20_000
	if v, err := strconv.Atoi(os.Getenv("EXOCORTEX_NATS_SCALE_BACKLOG")); err == nil && v > 0 {
		drain = v
	}
	raw := promoterFigures(t, srv.URL(), drain).raw
	catchN := 100_000
	if v, err := strconv.Atoi(os.Getenv("EXOCORTEX_NATS_SCALE_CATCHUP")); err == nil && v > 0 {
		catchN = v
	}
	cd, cn := catchUp(t, srv.URL(), catchN)
	t.Logf("catch-up: a fresh host applied %d deltas in %s: %.0f deltas/s (state, journal copy, Bleve; no embedder)", cn, cd.Round(time.Millisecond), float64(cn)/cd.Seconds())

	for _, promoted := range []bool{false, true} {
		name := map[bool]string{false: "direct", true: "promoter"}[promoted]
		stream := "SIM_" + name
		url := srv.URL() + "?stream=" + stream + "&subject=sim." + name
		if promoted {
			stop := startPromoterCfg(t, PromoterConfig{Journal: config(t, url, false), Dir: filepath.Join(t.TempDir(), "p"), ID: "sim-promoter", Logger: quiet()}, nil)
			defer stop()
		}
		stores := make([]*memory.Store, hosts)
		for i := range stores {
			c := config(t, url, promoted)
			c.Name = fmt.Sprintf("host%d", i)
			j, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			s, err := memory.Open(ctx, t.TempDir(), memory.Options{Journal: j, Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			stores[i] = s
		}
		// Each host notes when it first holds each sequence.
		seen := make([]map[uint64]time.Time, hosts)
		var seenMu sync.Mutex
		stopWatch := make(chan struct{})
		var watchers sync.WaitGroup
		for i, s := range stores {
			seen[i] = map[uint64]time.Time{}
			watchers.Add(1)
			go func() {
				defer watchers.Done()
				var at uint64
				for {
					select {
					case <-stopWatch:
						return
					case <-time.After(time.Millisecond):
					}
					now, last := time.Now(), s.JournalSeq()
					seenMu.Lock()
					for q := at + 1; q <= last; q++ {
						seen[i][q] = now
					}
					seenMu.Unlock()
					at = last
				}
			}()
		}
		type write struct {
			host  int
			seq   uint64
			start time.Time
		}
		var wmu sync.Mutex
		var all []write
		var searches int
		var wg sync.WaitGroup
		start := time.Now()
		for h, s := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range writes {
					t0 := time.Now()
					rec, err := s.Put(ctx, memory.Input{Text: fmt.Sprintf("host %d note %d about topic%d-%d", h, i, h, i)}, memory.Source{})
					if err != nil {
						t.Errorf("host %d write %d: %v", h, i, err)
						return
					}
					if _, err := s.Search(ctx, fmt.Sprintf("topic%d-%d", (h+1)%hosts, i), memory.SearchOptions{}); err != nil {
						t.Errorf("search: %v", err)
					}
					wmu.Lock()
					all = append(all, write{h, rec.Provenance.Seq, t0})
					searches++
					wmu.Unlock()
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		total := hosts * writes
		// Wait for every host to hold everything, then stop watching.
		for _, s := range stores {
			wctx, cancel := context.WithTimeout(ctx, patience)
			if err := s.WaitApplied(wctx, uint64(total)); err != nil {
				t.Fatal(err)
			}
			cancel()
		}
		time.Sleep(5 * time.Millisecond)
		close(stopWatch)
		watchers.Wait()
		var lat []time.Duration
		for _, w := range all {
			for o := range hosts {
				if o != w.host {
					lat = append(lat, seen[o][w.seq].Sub(w.start))
				}
			}
		}
		slices.Sort(lat)
		p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))].Round(100 * time.Microsecond) }
		rate := float64(total) / elapsed.Seconds()
		t.Logf("%s: %d hosts, %d writes (+%d searches) in %s: %.0f deltas/s (%.1f%% of raw); write-to-visible-elsewhere p50 %s p99 %s max %s",
			name, hosts, total, searches, elapsed.Round(time.Millisecond), rate, 100*rate/raw, p(0.5), p(0.99), lat[len(lat)-1].Round(100*time.Microsecond))
		h0, _ := stores[0].Hash(ctx)
		for i, s := range stores[1:] {
			if h, _ := s.Hash(ctx); h != h0 {
				t.Fatalf("host %d's hash differs", i+1)
			}
		}
		if !promoted {
			// Catch-up: a fresh host replays the stream into its store.
			j, err := Open(ctx, config(t, url, false))
			if err != nil {
				t.Fatal(err)
			}
			c0 := time.Now()
			s, err := memory.Open(ctx, t.TempDir(), memory.Options{Journal: j, Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			d := time.Since(c0)
			t.Logf("catch-up: a fresh host applied %d deltas in %s: %.0f deltas/s (state, journal copy, Bleve; no embedder)", s.JournalSeq(), d.Round(time.Millisecond), float64(s.JournalSeq())/d.Seconds())
			s.Close()
		}
	}
}

// figures are the promoter's capacity against the raw publish rate.
type figures struct {
	raw    float64 // the comparison: nats bench's rate if it ran, else the in-process one (mean of before and after)
	deltas float64 // deltas/s through the promoter
}

// promoterFigures measures, on the server at url, in turns: nats bench's js
// pub async rate (n × 300 B, R1 file store; if .tools/bin/nats exists), the
// in-process async publish rate, the promoter draining a backlog of n
// proposals, then both raw rates again, and logs them. The comparison is the
// mean of the raw rates before and after (the machine's load moves between
// them).
func promoterFigures(t testing.TB, url string, n int) figures {
	t.Helper()
	bench := natstest.Tool("nats")
	if bench == "" {
		t.Log("nats bench: no .tools/bin/nats (make nats-cli): comparing with the in-process async publish rate (batches of 1000)")
	}
	round := 0
	raws := func() (nb, in float64) {
		round++
		if bench != "" {
			nb = natsBench(t, bench, url, fmt.Sprintf("BENCH%d", round), n)
		}
		return nb, rawPublishRate(t, url, fmt.Sprintf("RAW%d", round), n)
	}
	nb1, in1 := raws()
	d, got := promoterDrain(t, url, n)
	nb2, in2 := raws()
	f := figures{raw: (in1 + in2) / 2, deltas: float64(got) / d.Seconds()}
	t.Logf("raw in-process JetStream async publish (1 client, %d × 300 B, R1 file store): %.0f msgs/s before, %.0f after", n, in1, in2)
	if bench != "" {
		f.raw = (nb1 + nb2) / 2
		t.Logf("nats bench js pub async (%d × 300 B, R1 file store, batch 500): %.0f msgs/s before, %.0f after", n, nb1, nb2)
	}
	t.Logf("promoter throughput: a backlog of %d one-entry proposals decided and written in %s: %.0f deltas/s = %.1f%% of raw (%.0f msgs/s, the mean of %s before and after)",
		got, d.Round(time.Millisecond), f.deltas, 100*f.deltas/f.raw, f.raw, map[bool]string{true: "nats bench", false: "the in-process rate"}[bench != ""])
	return f
}

// natsBench runs `nats bench js pub async` against url (a stream of its
// own, R1 file store, n × 300 B) and returns its msgs/sec.
func natsBench(t testing.TB, bench, url, stream string, n int) float64 {
	t.Helper()
	out, err := exec.Command(bench, "bench", "js", "pub", "async", strings.ToLower(stream), "--create", "--stream="+stream,
		"--storage=file", "--replicas=1", fmt.Sprintf("--msgs=%d", n), "--size=300B", "--no-progress", "-s", url).CombinedOutput()
	if err != nil {
		t.Fatalf("nats bench: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		_, after, ok := strings.Cut(l, "stats: ")
		if !ok {
			continue
		}
		num, _, ok := strings.Cut(after, " msgs/sec")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(num, ",", ""), 64)
		if err == nil {
			return v
		}
	}
	t.Fatalf("nats bench: no msgs/sec in its output:\n%s", out)
	return 0
}

// rawPublishRate publishes n messages asynchronously to a stream of their
// own and returns the acknowledged messages per second.
func rawPublishRate(t testing.TB, url, stream string, n int) float64 {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	subj := strings.ToLower(stream)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{subj}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 300)
	start := time.Now()
	for i := range n {
		if _, err := js.PublishAsync(subj, body); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 999 {
			<-js.PublishAsyncComplete()
		}
	}
	<-js.PublishAsyncComplete()
	return float64(n) / time.Since(start).Seconds()
}

// promoterDrain publishes n one-entry proposals to a fresh promoted stream,
// then starts a promoter and times it until every delta is stored.
func promoterDrain(t testing.TB, url string, n int) (time.Duration, int) {
	t.Helper()
	ctx := context.Background()
	u := url + "?stream=DRAIN&subject=drain"
	j, err := Open(ctx, config(t, u, true))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.ensurePromoted(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for i := range n {
		id := fmt.Sprintf("w-drain-%d", i)
		pl, _ := json.Marshal(memory.UpsertEvent{ID: fmt.Sprintf("r%d", i), Area: memory.AreaMain, Text: fmt.Sprintf("backlog note %d about topic %d", i, i%97)})
		body, _ := json.Marshal(proposal{ID: proposalID([]string{id}), MsgIDs: []string{id},
			Entries: []wire{{V: 1, TS: now, Kind: memory.KindUpsert, Payload: pl}}})
		m := nats.NewMsg(j.cfg.eventsSubject())
		m.Data = body
		m.Header.Set(jetstream.MsgIDHeader, proposalID([]string{id})) // as propose sends it
		if _, err := j.js.PublishMsgAsync(m); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 999 {
			<-j.js.PublishAsyncComplete()
		}
	}
	<-j.js.PublishAsyncComplete()
	start := time.Now()
	stop := startPromoterCfg(t, PromoterConfig{Journal: config(t, u, false), Dir: filepath.Join(t.TempDir(), "drain"), ID: "drain", Logger: quiet()}, nil)
	defer stop()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		last, err := j.LastSeq(ctx)
		if err == nil && last >= uint64(n) {
			return time.Since(start), int(last)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the promoter wrote %d of %d deltas in 10 minutes", last, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// catchUp writes n records to a fresh stream in batches, then times a fresh
// host's Open (its catch-up from sequence 1).
func catchUp(t *testing.T, url string, n int) (time.Duration, uint64) {
	t.Helper()
	ctx := context.Background()
	u := url + "?stream=CATCHUP&subject=catchup"
	j, err := Open(ctx, config(t, u, false))
	if err != nil {
		t.Fatal(err)
	}
	for b := 0; b < n; b += 1000 {
		var es []staging.Entry
		for i := b; i < min(b+1000, n); i++ {
			es = append(es, staging.Entry{Kind: memory.KindUpsert, Payload: memory.UpsertEvent{ID: fmt.Sprintf("c%d", i), Area: memory.AreaMain,
				Text: fmt.Sprintf("catch-up note %d about topic %d and subject %d", i, i%97, i%1013)}})
		}
		if _, err := j.Append(ctx, es, nil); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	j, err = Open(ctx, config(t, u, false))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s, err := memory.Open(ctx, t.TempDir(), memory.Options{Journal: j, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	d := time.Since(start)
	defer s.Close()
	return d, s.JournalSeq()
}
