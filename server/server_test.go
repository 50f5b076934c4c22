package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exocortex/exocortex/server/route"
)

// start serves routes on a loopback port until the test ends.
func start(t *testing.T, opts Options, routes ...route.Route) *Server {
	t.Helper()
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Mount(routes...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

// whoami answers the caller the server found.
var whoami = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	c, _ := route.CallerFrom(r.Context())
	route.JSON(w, http.StatusOK, map[string]string{"key": c.Key, "role": c.Role.String()})
})

var keys = []Key{{Name: "ops", Secret: "admin-secret", Role: route.Admin}, {Name: "bot", Secret: "agent-secret", Role: route.Agent}}

func call(t *testing.T, method, url, body string, hdr ...string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s %s: answer %q is not JSON: %v", method, url, b, err)
		}
	}
	return resp.StatusCode, out
}

func TestAuthenticationAndRoles(t *testing.T) {
	s := start(t, Options{Keys: keys, MaxBodyBytes: 256},
		route.Route{Method: "GET", Pattern: "/chat", Role: route.Agent, Handler: whoami},
		route.Route{Method: "POST", Pattern: "/admin", Role: route.Admin, Handler: whoami},
		route.Route{Method: "GET", Pattern: "/health", Role: route.Public, Handler: whoami},
	)
	u := s.URL()
	for _, tc := range []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		key, msg                 string
	}{
		{"no key", "GET", "/chat", "", nil, 401, "", MsgKeyRequired},
		{"wrong key", "GET", "/chat", "", []string{"X-API-KEY", "nope"}, 401, "", MsgKeyInvalid},
		{"agent key, X-API-KEY", "GET", "/chat", "", []string{"X-API-KEY", "agent-secret"}, 200, "bot", ""},
		{"admin key, bearer", "GET", "/chat", "", []string{"Authorization", "Bearer admin-secret"}, 200, "ops", ""},
		{"agent key on an admin route", "POST", "/admin", `{}`, []string{"X-API-KEY", "agent-secret"}, 403, "", "needs the admin role"},
		{"admin key on an admin route", "POST", "/admin", `{}`, []string{"X-API-KEY", "admin-secret"}, 200, "ops", ""},
		{"no key on an admin route", "POST", "/admin", `{}`, nil, 401, "", MsgKeyRequired},
		{"api_key in the body", "POST", "/admin", `{"api_key":"admin-secret"}`, nil, 200, "ops", ""},
		{"wrong api_key in the body", "POST", "/admin", `{"api_key":"x"}`, nil, 401, "", MsgKeyInvalid},
		{"public route, no key", "GET", "/health", "", nil, 200, "", ""},
		{"unknown route", "GET", "/nothing", "", []string{"X-API-KEY", "admin-secret"}, 404, "", "no route"},
		{"oversized body, key in it", "POST", "/admin", `{"api_key":"admin-secret","x":"` + strings.Repeat("x", 300) + `"}`, nil, 413, "", "over 256 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := call(t, tc.method, u+tc.path, tc.body, tc.hdr...)
			if status != tc.status {
				t.Fatalf("status %d, want %d (%v)", status, tc.status, out)
			}
			if tc.key != "" && out["key"] != tc.key {
				t.Errorf("caller %v, want key %s", out, tc.key)
			}
			if tc.msg != "" {
				e, _ := out["error"].(map[string]any)
				if msg, _ := e["message"].(string); !strings.Contains(msg, tc.msg) {
					t.Errorf("error %v, want %q", out, tc.msg)
				}
			}
		})
	}
}

func TestNonLoopbackNeedsAKey(t *testing.T) {
	_, err := New(context.Background(), Options{Addr: "0.0.0.0:0"})
	if !errors.Is(err, ErrNeedsKey) || !strings.Contains(err.Error(), "EXOCORTEX_API_KEY") {
		t.Fatalf("New on 0.0.0.0 without keys: %v, want ErrNeedsKey naming EXOCORTEX_API_KEY", err)
	}
	s, err := New(context.Background(), Options{Addr: "0.0.0.0:0", Keys: keys})
	if err != nil {
		t.Fatalf("New on 0.0.0.0 with keys: %v", err)
	}
	s.ln.Close()
	s2 := start(t, Options{}, route.Route{Method: "GET", Pattern: "/chat", Handler: whoami})
	if status, out := call(t, "GET", s2.URL()+"/chat", ""); status != 200 || out["key"] != "local" || out["role"] != "admin" {
		t.Fatalf("loopback without keys: %d %v, want the local admin", status, out)
	}
}

func TestBodiesAreCheckedAndNamed(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Message string `json:"message"`
			Count   int    `json:"count"`
		}
		if be := Decode(r, &body); be != nil {
			route.Error(w, be.Status, be.Problem)
			return
		}
		route.JSON(w, 200, body)
	})
	s := start(t, Options{MaxBodyBytes: 64}, route.Route{Method: "POST", Pattern: "/echo", Handler: echo})
	for _, tc := range []struct {
		name, body string
		status     int
		field, msg string
	}{
		{"good", `{"message":"hi","count":2}`, 200, "", ""},
		{"wrong type", `{"message":5}`, 400, "message", "must be a string"},
		{"malformed", `{"message":`, 400, "", "not valid JSON"},
		{"not an object", `[1]`, 400, "", "send a JSON object"},
		{"oversized", `{"message":"` + strings.Repeat("x", 100) + `"}`, 413, "", "over 64 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := call(t, "POST", s.URL()+"/echo", tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d (%v)", status, tc.status, out)
			}
			if tc.status == 200 {
				return
			}
			e, _ := out["error"].(map[string]any)
			if f, _ := e["field"].(string); f != tc.field {
				t.Errorf("field %q, want %q (%v)", f, tc.field, out)
			}
			if m, _ := e["message"].(string); !strings.Contains(m, tc.msg) {
				t.Errorf("message %q, want %q", m, tc.msg)
			}
		})
	}
}

func TestRateLimitPerKey(t *testing.T) {
	s := start(t, Options{Keys: keys, Rate: 0.001, Burst: 2}, route.Route{Method: "GET", Pattern: "/chat", Handler: whoami})
	for i := range 2 {
		if st, out := call(t, "GET", s.URL()+"/chat", "", "X-API-KEY", "agent-secret"); st != 200 {
			t.Fatalf("request %d: %d %v", i, st, out)
		}
	}
	if st, out := call(t, "GET", s.URL()+"/chat", "", "X-API-KEY", "agent-secret"); st != 429 {
		t.Fatalf("third request: %d %v, want 429", st, out)
	}
	// Another key has its own bucket.
	if st, out := call(t, "GET", s.URL()+"/chat", "", "X-API-KEY", "admin-secret"); st != 200 {
		t.Fatalf("other key: %d %v", st, out)
	}
}

func TestRequestTimeoutSparesStreams(t *testing.T) {
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(300 * time.Millisecond):
			route.JSON(w, 200, map[string]string{"done": "yes"})
		}
	})
	s := start(t, Options{RequestTimeout: 50 * time.Millisecond},
		route.Route{Method: "GET", Pattern: "/slow", Handler: slow},
		route.Route{Method: "GET", Pattern: "/stream", Stream: true, Handler: slow})
	if st, out := call(t, "GET", s.URL()+"/slow", ""); st != http.StatusGatewayTimeout {
		t.Fatalf("slow request: %d %v, want 504", st, out)
	}
	if st, out := call(t, "GET", s.URL()+"/stream", ""); st != 200 {
		t.Fatalf("stream route: %d %v, want 200 (no timeout)", st, out)
	}
}

func TestShutdownFinishesRunningWork(t *testing.T) {
	s, err := New(context.Background(), Options{Addr: "127.0.0.1:0", ShutdownTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var finished, task atomic.Bool
	started := make(chan struct{})
	s.Mount(route.Route{Method: "GET", Pattern: "/turn", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		finished.Store(true)
		route.JSON(w, 200, map[string]string{"response": "done"})
	})})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	got := make(chan int, 1)
	go func() {
		resp, err := http.Get(s.URL() + "/turn")
		if err != nil {
			got <- 0
			return
		}
		resp.Body.Close()
		got <- resp.StatusCode
	}()
	<-started
	s.Go(func(ctx context.Context) { <-release; task.Store(true) })
	cancel()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		s.mu.Lock()
		closing := s.closing
		s.mu.Unlock()
		if closing || time.Now().After(deadline) {
			break
		}
	}
	if s.Go(func(context.Context) {}) {
		t.Error("Go accepted work after the shutdown began")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := <-got; st != 200 || !finished.Load() || !task.Load() {
		t.Fatalf("after shutdown: status %d, turn finished %v, task finished %v", st, finished.Load(), task.Load())
	}
}
