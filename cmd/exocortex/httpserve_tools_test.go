package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// weatherToken is the secret the registered tool's endpoint hands back.
const weatherToken = "wx-Tok3n-5ecret-9f2c"

// TestServeHTTPToolCalled: a tool registered over POST /tools with an HTTP
// endpoint (a real server beside the test) is the agent's: it is in the
// prompt's tool list, a scripted model calls it in a served session, and
// the call goes the way a plugin tool's does. The watching plugin's
// tool_execute_before and tool_execute_after fire around it (its log), its
// guard holds weather.lookup until an admin grants it over
// /api/v1/approvals (the default approval mode asks), the secret in the
// endpoint's answer is masked in what the hooks, the model and the session
// get, and weather.slow, which answers after its deadline
// (timeouts.tools), is reported to the model as timed out.
func TestServeHTTPToolCalled(t *testing.T) {
	var mu sync.Mutex
	var got []string // what the endpoint received: path, tool header, body
	release := make(chan struct{})
	defer close(release)
	ep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.URL.Path+" "+r.Header.Get("X-Exocortex-Tool")+" "+string(b))
		mu.Unlock()
		switch r.URL.Path {
		case "/lookup":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"forecast": "sunny in Paris", "token": weatherToken})
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}
	}))
	defer ep.Close()

	watchLog := filepath.Join(t.TempDir(), "watch.log")
	watch := serveBuild(t, "github.com/exocortex/exocortex/cmd/exocortex/testdata/toolwatchlog")
	script := `model: scripted
replies:
  - content: '{"thoughts":["look"],"tool_name":"weather.lookup","tool_args":{"city":"Paris"}}'
  - content: '{"thoughts":["slow"],"tool_name":"weather.slow","tool_args":{"city":"Rome"}}'
  - content: '{"thoughts":["done"],"tool_name":"response","tool_args":{"text":"weather done"}}'
`
	config := "approval: default\nserve:\n  approval_timeout: 120s\ntimeouts:\n  tools:\n    weather.slow: 2s\n" +
		"secrets:\n  WEATHER_TOKEN: {env: EXO_TEST_WEATHER_TOKEN}\n"
	s := startServe(t, serveBinary(t), script, config, map[string]string{"toolwatchlog": watch},
		"EXOCORTEX_API_KEY=admin-key", "TOOLWATCH_LOG="+watchLog, "TOOLWATCH_HOLD=weather.lookup", "EXO_TEST_WEATHER_TOKEN="+weatherToken)
	admin := []string{"X-API-KEY", "admin-key"}

	for _, d := range []struct{ id, path, desc string }{
		{"weather.lookup", "/lookup", "Looks up the weather of a city."},
		{"weather.slow", "/slow", "Looks up the weather slowly."},
	} {
		def := `{"id":"` + d.id + `","name":"` + d.id + `","description":"` + d.desc + `","category":"retrieval",` +
			`"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},` +
			`"returns":{"type":"object"},"endpoint":"` + ep.URL + d.path + `","version":"1.0.0","agent":"weather"}`
		if st, body := s.do(t, "POST", "/tools", def, admin...); st != 201 {
			t.Fatalf("registering %s: %d %v", d.id, st, body)
		}
	}
	if st, body := s.do(t, "GET", "/tools?agent=weather", "", admin...); st != 200 || body["count"] != float64(2) {
		t.Fatalf("GET /tools?agent=weather: %d %v", st, body)
	}

	mkSession(t, s, "wx")
	done := make(chan map[string]any, 1)
	go func() {
		_, body := s.do(t, "POST", "/api/api_message", `{"message":"what is the weather","context_id":"wx"}`, admin...)
		done <- body
	}()
	var held map[string]any
	waitFor(t, "the held weather.lookup call", func() bool {
		_, body := s.do(t, "GET", "/api/v1/approvals?session=wx", "", admin...)
		if list, _ := body["approvals"].([]any); len(list) == 1 {
			held = list[0].(map[string]any)
			return true
		}
		return false
	})
	mu.Lock()
	calledEarly := len(got)
	mu.Unlock()
	if held["tool"] != "weather.lookup" || calledEarly != 0 {
		t.Fatalf("held %v with %d endpoint calls made: the call must wait for the approval", held, calledEarly)
	}
	if st, body := s.do(t, "POST", "/api/v1/approvals/"+held["id"].(string), `{"decision":"allow_once"}`, admin...); st != 200 {
		t.Fatalf("granting: %d %v", st, body)
	}
	select {
	case body := <-done:
		if body["response"] != "weather done" {
			t.Fatalf("api_message: %v\nstderr:\n%s", body, s.log())
		}
	case <-time.After(120 * time.Second):
		t.Fatalf("the monologue did not end; stderr:\n%s", s.log())
	}

	mu.Lock()
	calls := append([]string(nil), got...)
	mu.Unlock()
	if len(calls) != 2 || calls[0] != `/lookup weather.lookup {"city":"Paris"}` || !strings.HasPrefix(calls[1], "/slow weather.slow ") {
		t.Errorf("the endpoint's calls: %q", calls)
	}
	results := toolResults(t, s, "wx")
	if len(results) != 2 || !strings.Contains(results[0], "sunny in Paris") || !strings.Contains(results[0], "§§secret(WEATHER_TOKEN)") {
		t.Errorf("the model's tool results %q: want the forecast with the token masked", results)
	}
	if len(results) == 2 && !strings.Contains(results[1], "no answer within 2s") {
		t.Errorf("weather.slow's result %q: want the timeout, told to the model", results[1])
	}
	b, err := os.ReadFile(watchLog)
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, want := range []string{
		"before weather.lookup {\"city\":\"Paris\"}", "after weather.lookup {\"forecast\":\"sunny in Paris\",\"token\":\"§§secret(WEATHER_TOKEN)\"} | ",
		"before weather.slow {\"city\":\"Rome\"}", "after weather.slow  | ",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the watching plugin's log lacks %q:\n%s", want, log)
		}
	}
	if first, _, _ := strings.Cut(log, "\n"); !strings.Contains(first, "weather.lookup") || !strings.Contains(first, "weather.slow") {
		t.Errorf("the tools offered to the prompt (%q) lack the registered ones", first)
	}
	// Nothing the serve process kept holds the value.
	for _, dir := range []string{filepath.Join(s.home, "sessions")} {
		_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				if b, _ := os.ReadFile(p); strings.Contains(string(b), weatherToken) {
					t.Errorf("%s holds the secret", p)
				}
			}
			return nil
		})
	}
	if strings.Contains(log, weatherToken) || strings.Contains(s.log(), weatherToken) {
		t.Error("the hooks or serve's log saw the secret's value")
	}
	// The prompt the model was sent lists the registered tools, one line
	// each until used, like every tool (the recording keeps each request).
	var prompt strings.Builder
	_ = filepath.Walk(filepath.Join(s.home, "sessions"), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			prompt.Write(b)
		}
		return nil
	})
	if !strings.Contains(prompt.String(), "- weather.lookup(city): Looks up the weather of a city.") {
		t.Errorf("no request the model got lists weather.lookup in one line")
	}
}
