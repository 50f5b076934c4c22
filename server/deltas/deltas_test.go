package deltas

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exocortex/exocortex/memory/service"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/server/internal/servertest"
	"github.com/exocortex/exocortex/server/openapi"
	"github.com/exocortex/exocortex/server/route"
)

func save(t *testing.T, mem exocortexv1.MemoryServiceClient, area, text string) string {
	t.Helper()
	res, err := mem.Save(context.Background(), &exocortexv1.MemorySaveRequest{Records: []*exocortexv1.MemoryInput{{Area: area, Text: text}},
		Source: &exocortexv1.MemorySource{Source: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetRecords()[0].GetId()
}

func get(t *testing.T, url string) SinceReply {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out SinceReply
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&out) != nil {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	return out
}

func setup(t *testing.T, opts Options) (*service.Client, *Service, string) {
	mem := servertest.Memory(t)
	s := New(mem, opts)
	t.Cleanup(func() { s.Close() })
	return mem, s, servertest.Serve(t, s.Routes()).URL
}

// TestSinceListsEveryChange: each write becomes a delta naming its area, the
// record and the kind of change, in journal order; limit pages through them.
func TestSinceListsEveryChange(t *testing.T) {
	mem, _, base := setup(t, Options{})
	ctx := context.Background()
	a := save(t, mem, "main", "the lighthouse")
	b := save(t, mem, "fragments", "the fog horn")
	if _, err := mem.Archive(ctx, &exocortexv1.MemoryArchiveRequest{Id: a}); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Delete(ctx, &exocortexv1.MemoryDeleteRequest{Id: b}); err != nil {
		t.Fatal(err)
	}
	got := get(t, base+"/api/v1/deltas?since=0")
	want := []struct{ ns, id, typ string }{{"main", a, "upsert"}, {"fragments", b, "upsert"}, {"main", a, "archive"}, {"fragments", b, "delete"}}
	if len(got.Deltas) != len(want) || got.More {
		t.Fatalf("deltas %+v; want %d", got, len(want))
	}
	for i, w := range want {
		d := got.Deltas[i]
		if d.NS != w.ns || d.ItemID != w.id || d.EventType != w.typ || d.Seq == 0 || d.Version != d.Seq || (i > 0 && d.Seq <= got.Deltas[i-1].Seq) {
			t.Errorf("delta %d: %+v; want %+v", i, d, w)
		}
	}
	if got.Next != got.Deltas[3].Seq {
		t.Errorf("next %d, want the last seq %d", got.Next, got.Deltas[3].Seq)
	}
	page := get(t, base+"/api/v1/deltas?since=0&limit=2")
	rest := get(t, fmt.Sprintf("%s/api/v1/deltas?since=%d", base, page.Next))
	if !page.More || len(page.Deltas) != 2 || len(rest.Deltas) != 2 || rest.Deltas[0] != got.Deltas[2] {
		t.Fatalf("paging: %+v then %+v", page, rest)
	}
	for _, q := range []string{"since=x", "since=-1", "", "since=0&limit=0", "since=0&limit=many"} {
		resp, err := http.Get(base + "/api/v1/deltas?" + q)
		if err != nil {
			t.Fatal(err)
		}
		var p struct{ Error route.Problem }
		json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if resp.StatusCode != 400 || p.Error.Field == "" {
			t.Errorf("?%s: %d %+v; want 400 naming the field", q, resp.StatusCode, p)
		}
	}
}

// event is one server-sent event.
type event struct{ id, name, data string }

// stream opens the delta stream (from lastID when set) and sends its events
// on the returned channel until the connection ends.
func stream(t *testing.T, ctx context.Context, base, lastID string) <-chan event {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/deltas/stream", nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ch := make(chan event, 100)
	go func() {
		defer resp.Body.Close()
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		var e event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if e.name != "" {
					ch <- e
				}
				e = event{}
			case strings.HasPrefix(line, "id: "):
				e.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				e.name = line[7:]
			case strings.HasPrefix(line, "data: "):
				e.data = line[6:]
			case strings.HasPrefix(line, ": "):
				ch <- event{name: "comment", data: line[2:]}
			}
		}
	}()
	return ch
}

// next returns the next event that is not a comment.
func next(t *testing.T, ch <-chan event) event {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				t.Fatal("the stream ended")
			}
			if e.name != "comment" {
				return e
			}
		case <-deadline:
			t.Fatal("no event within 60s")
		}
	}
}

func waitComment(t *testing.T, ch <-chan event, text string) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case e := <-ch:
			if e.name == "comment" && e.data == text {
				return
			}
		case <-deadline:
			t.Fatalf("no %q comment within 60s", text)
		}
	}
}

func deltaOf(t *testing.T, e event) Delta {
	t.Helper()
	var d Delta
	if e.name != "delta" || json.Unmarshal([]byte(e.data), &d) != nil {
		t.Fatalf("event %+v is no delta", e)
	}
	return d
}

// TestStreamResumesAfterDrop: a stream gets each write live; dropped and
// reopened with Last-Event-ID it gets exactly what was written meanwhile;
// and GET since= answers the same deltas the stream sent; keep-alives flow.
func TestStreamResumesAfterDrop(t *testing.T) {
	mem, _, base := setup(t, Options{KeepAlive: 50 * time.Millisecond})
	before := save(t, mem, "main", "written before the stream")
	ctx, drop := context.WithCancel(context.Background())
	t.Cleanup(drop)
	ch := stream(t, ctx, base, "")
	waitComment(t, ch, "deltas")
	var sent []Delta
	var lastID string
	for i := range 3 {
		id := save(t, mem, "main", fmt.Sprintf("live record %d", i))
		e := next(t, ch)
		d := deltaOf(t, e)
		if d.ItemID != id || d.ItemID == before {
			t.Fatalf("live delta %d: %+v, want record %s", i, d, id)
		}
		sent = append(sent, d)
		lastID = e.id
	}
	waitComment(t, ch, "keep-alive")
	drop()
	for range ch { // the connection is gone
	}
	var missed []string
	for i := range 2 {
		missed = append(missed, save(t, mem, "fragments", fmt.Sprintf("written while away %d", i)))
	}
	ctx2, drop2 := context.WithCancel(context.Background())
	defer drop2()
	ch2 := stream(t, ctx2, base, lastID)
	for i, id := range missed {
		if d := deltaOf(t, next(t, ch2)); d.ItemID != id || d.NS != "fragments" {
			t.Fatalf("resumed delta %d: %+v, want %s", i, d, id)
		}
	}
	live := save(t, mem, "main", "live after resuming")
	if d := deltaOf(t, next(t, ch2)); d.ItemID != live {
		t.Fatalf("live after resuming: %+v, want %s", d, live)
	}
	since := get(t, fmt.Sprintf("%s/api/v1/deltas?since=%d", base, sent[0].Seq-1))
	if len(since.Deltas) < 3 {
		t.Fatalf("since: %+v", since)
	}
	for i, d := range sent {
		if since.Deltas[i] != d {
			t.Errorf("since delta %d: %+v, the stream sent %+v", i, since.Deltas[i], d)
		}
	}
}

// TestSlowStreamToldToCatchUp: a stream whose client does not keep up gets
// what was queued for it, then a catchup event naming the seq to fetch
// since, which holds exactly the rest: nothing is skipped.
func TestSlowStreamToldToCatchUp(t *testing.T) {
	mem := servertest.Memory(t)
	s := New(mem, Options{Buffer: 2})
	t.Cleanup(func() { s.Close() })
	gate := &gate{open: make(chan struct{})}
	srv := httptest.NewServer(gate.wrap(servertest.Mux(s.Routes())))
	t.Cleanup(srv.Close)
	ctx, drop := context.WithCancel(context.Background())
	t.Cleanup(drop)
	ch := stream(t, ctx, srv.URL, "")
	waitComment(t, ch, "deltas")
	gate.close() // the handler's next write blocks, as on a full connection
	var ids []string
	for i := range 5 {
		ids = append(ids, save(t, mem, "main", fmt.Sprintf("burst %d", i)))
	}
	for deadline := time.Now().Add(60 * time.Second); s.hub.droppedCount() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the slow stream was not dropped")
		}
	}
	close(gate.open)
	var got []string
	for {
		e := next(t, ch)
		if e.name == "catchup" {
			var c Catchup
			json.Unmarshal([]byte(e.data), &c)
			rest := get(t, fmt.Sprintf("%s/api/v1/deltas?since=%d", srv.URL, c.Since))
			for _, d := range rest.Deltas {
				got = append(got, d.ItemID)
			}
			break
		}
		got = append(got, deltaOf(t, e).ItemID)
	}
	if strings.Join(got, " ") != strings.Join(ids, " ") {
		t.Fatalf("stream then catch-up gave %v; want every write once, in order: %v", got, ids)
	}
}

// gate blocks the stream handler's writes while closed.
type gate struct {
	mu     sync.Mutex
	closed bool
	open   chan struct{}
}

func (g *gate) close() { g.mu.Lock(); g.closed = true; g.mu.Unlock() }

func (g *gate) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&gatedWriter{ResponseWriter: w, g: g}, r)
	})
}

type gatedWriter struct {
	http.ResponseWriter
	g *gate
}

func (w *gatedWriter) Write(b []byte) (int, error) {
	w.g.mu.Lock()
	closed := w.g.closed
	w.g.mu.Unlock()
	if closed {
		<-w.g.open
	}
	return w.ResponseWriter.Write(b)
}

func (w *gatedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func TestOpsDescribeEveryRoute(t *testing.T) {
	if err := openapi.Check(New(nil, Options{}).Routes(), Ops()); err != nil {
		t.Fatal(err)
	}
}
