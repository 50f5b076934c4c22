package websearch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exocortex/exocortex/config"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// fakeClock advances when slept on and counts the waits.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// fakeSearXNG answers like a SearXNG instance with json enabled.
func fakeSearXNG(t *testing.T, requests *int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*requests++
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "want /search?format=json", http.StatusBadRequest)
			return
		}
		q := r.URL.Query().Get("q")
		if q == "forbidden" {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		if q == "garbage" {
			fmt.Fprint(w, "<html>not json</html>")
			return
		}
		var res []Result
		if q != "nothing" {
			for i := 1; i <= 8; i++ {
				res = append(res, Result{Title: fmt.Sprintf("%s result %d", q, i), URL: fmt.Sprintf("https://example.org/%d", i),
					Content: fmt.Sprintf("Snippet %d about\n %s.", i, q)})
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"query": q, "number_of_results": len(res), "results": res, "answers": []string{}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func call(t *testing.T, client exocortexv1.PluginClient, args string) *exocortexv1.ToolResult {
	t.Helper()
	resp, err := client.ExecuteTool(t.Context(), &exocortexv1.ExecuteToolRequest{
		Call: sdktest.Call(ToolName), ToolCall: &exocortexv1.ToolCall{Name: ToolName, ArgsJson: args}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetResult()
}

func serve(t *testing.T, cfg config.WebSearch, clock Clock) exocortexv1.PluginClient {
	t.Helper()
	s := New(Fixed(cfg), clock)
	return sdktest.Serve(t, sdk.Plugin{Name: "search", Version: "test", Tools: []sdk.Tool{s.Tool()}})
}

func TestSearXNG(t *testing.T) {
	var n int
	srv := fakeSearXNG(t, &n)
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("the fake provider is not on 127.0.0.1: %s", srv.URL)
	}
	client := serve(t, config.WebSearch{URL: srv.URL + "/", Rate: 1000, Burst: 100}, newFakeClock())
	res := call(t, client, `{"query":"go plugins","max_results":"3"}`)
	want := "Results for \"go plugins\" (searxng):\n\n" +
		"1. go plugins result 1\n   https://example.org/1\n   Snippet 1 about go plugins.\n\n" +
		"2. go plugins result 2\n   https://example.org/2\n   Snippet 2 about go plugins.\n\n" +
		"3. go plugins result 3\n   https://example.org/3\n   Snippet 3 about go plugins."
	if res.GetError() != "" || res.GetContent() != want {
		t.Fatalf("search:\n%s\nerror %q", res.GetContent(), res.GetError())
	}
	if res := call(t, client, `{"query":"go plugins"}`); strings.Count(res.GetContent(), "https://example.org/") != 5 {
		t.Errorf("default max_results is not 5:\n%s", res.GetContent())
	}
	if res := call(t, client, `{"query":"nothing"}`); res.GetContent() != `No results for "nothing".` {
		t.Errorf("no results: %q", res.GetContent())
	}
	for q, want := range map[string]string{
		"forbidden": "add json to search.formats in its settings.yml",
		"garbage":   "answered something that is not its JSON",
		"":          `"query" is empty`,
	} {
		if res := call(t, client, fmt.Sprintf(`{"query":%q}`, q)); !strings.Contains(res.GetError(), want) {
			t.Errorf("%q: error %q, want %q", q, res.GetError(), want)
		}
	}
}

func TestTavily(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/search" {
			http.Error(w, "want POST /search", http.StatusNotFound)
			return
		}
		if r.Header.Get("Authorization") != "Bearer tvly-good" {
			http.Error(w, `{"detail":{"error":"Unauthorized"}}`, http.StatusUnauthorized)
			return
		}
		var body struct {
			Query      string `json:"query"`
			MaxResults int    `json:"max_results"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.MaxResults != 2 {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"query": body.Query, "answer": "Forty-two.",
			"results": []map[string]any{{"title": "The answer", "url": "https://example.com/a", "content": "It is 42.", "score": 0.9}}})
	}))
	defer srv.Close()
	client := serve(t, config.WebSearch{Provider: "tavily", URL: srv.URL, APIKey: "tvly-good"}, newFakeClock())
	res := call(t, client, `{"query":"meaning of life","max_results":2}`)
	want := "Results for \"meaning of life\" (tavily):\n\nAnswer: Forty-two.\n\n1. The answer\n   https://example.com/a\n   It is 42."
	if res.GetError() != "" || res.GetContent() != want {
		t.Fatalf("tavily:\n%s\nerror %q", res.GetContent(), res.GetError())
	}
	client = serve(t, config.WebSearch{URL: srv.URL, APIKey: "tvly-bad", Provider: "tavily"}, newFakeClock())
	if res := call(t, client, `{"query":"x","max_results":2}`); !strings.Contains(res.GetError(), "401 Unauthorized: the API key was refused; check tools.web_search.api_key") {
		t.Errorf("bad key: %q", res.GetError())
	}
}

func TestUnconfigured(t *testing.T) {
	for _, tt := range []struct {
		cfg  config.WebSearch
		want []string
	}{
		{config.WebSearch{}, []string{"no search provider is configured", "tools.web_search.url", "tools.web_search.api_key", config.EnvSearchURL, config.EnvSearchKey}},
		{config.WebSearch{Provider: "tavily"}, []string{"provider tavily needs an API key", config.EnvSearchKey}},
		{config.WebSearch{Provider: "searxng"}, []string{"provider searxng needs the instance's address", config.EnvSearchURL}},
		{config.WebSearch{Provider: "bing", URL: "http://x"}, []string{`unknown provider "bing"`}},
		{config.WebSearch{URL: "ftp://x"}, []string{"is not an http(s) address"}},
	} {
		res := call(t, serve(t, tt.cfg, newFakeClock()), `{"query":"x"}`)
		for _, w := range tt.want {
			if !strings.Contains(res.GetError(), w) {
				t.Errorf("%+v: error %q lacks %q", tt.cfg, res.GetError(), w)
			}
		}
	}
}

// TestRateLimit counts the waits through the injected clock: no timing.
func TestRateLimit(t *testing.T) {
	var n int
	srv := fakeSearXNG(t, &n)
	clock := newFakeClock()
	client := serve(t, config.WebSearch{URL: srv.URL, Rate: 1, Burst: 1}, clock)
	for range 3 {
		if res := call(t, client, `{"query":"q"}`); res.GetError() != "" {
			t.Fatal(res.GetError())
		}
	}
	if w := clock.waits(); len(w) != 2 || w[0] != time.Second || w[1] != time.Second {
		t.Fatalf("waits = %v, want two of 1s", w)
	}
	if n != 3 {
		t.Errorf("%d requests reached the provider, want 3", n)
	}
	// After a quiet spell the bucket holds one token again, not more.
	clock.advance(time.Minute)
	res := call(t, client, `{"query":"q"}`)
	if strings.Contains(res.GetContent(), "waited") {
		t.Errorf("waited after a quiet spell: %q", res.GetContent())
	}
	res = call(t, client, `{"query":"q"}`)
	if !strings.HasSuffix(res.GetContent(), "[waited 1s for the search rate limit]") {
		t.Errorf("the second call after the quiet spell did not wait: %q", res.GetContent())
	}
}

func TestLimiter(t *testing.T) {
	clock := newFakeClock()
	l := NewLimiter(2, 3, clock) // 2 per second, 3 at once
	for i := range 3 {
		if w, err := l.Wait(t.Context()); err != nil || w != 0 {
			t.Fatalf("request %d of the burst waited %v (%v)", i, w, err)
		}
	}
	if w, _ := l.Wait(t.Context()); w != 500*time.Millisecond {
		t.Errorf("fourth request waited %v, want 500ms", w)
	}
	// Concurrent callers each reserve the next token: 500ms apart.
	clock.advance(10 * time.Second) // refills to 3 only
	var got []time.Duration
	for range 5 {
		w, _ := l.Wait(t.Context())
		got = append(got, w)
	}
	if fmt.Sprint(got) != "[0s 0s 0s 500ms 500ms]" {
		t.Errorf("waits after refill = %v", got)
	}
	// A cancelled wait gives its reservation back.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := l.Wait(ctx); err == nil {
		t.Fatal("a cancelled wait succeeded")
	}
	if w, _ := l.Wait(t.Context()); w != 500*time.Millisecond {
		t.Errorf("after a cancelled wait the next waits %v, want 500ms", w)
	}
}
