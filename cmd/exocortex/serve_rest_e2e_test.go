package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/sdk/sdktest"
)

// restServer starts the real exocortex binary's serve on a free loopback
// port with an admin key and an agent key, and returns its URL.
func restServer(t *testing.T) string {
	t.Helper()
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home := serviceHome(t)
	script, _ := filepath.Abs("../../examples/scripts/hello.yaml")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, exe, "serve", "--addr", "127.0.0.1:0", "--model", "script:"+script)
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home, "EXOCORTEX_API_KEY=admin-secret", "EXOCORTEX_AGENT_KEY=agent-secret")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(90 * time.Second)
	var seen []string
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve ended: %s", strings.Join(seen, "\n"))
			}
			seen = append(seen, l)
			if _, url, ok := strings.Cut(l, "listening on "); ok {
				go func() {
					for range lines {
					}
				}()
				return strings.Fields(url)[0]
			}
		case <-deadline:
			t.Fatalf("serve did not listen within 90s: %s", strings.Join(seen, "\n"))
		}
	}
}

func call(t *testing.T, key, method, url, body string, out any) int {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	if key != "" {
		req.Header.Set("X-API-KEY", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && json.Unmarshal(b, out) != nil {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	return resp.StatusCode
}

// TestServeRESTSurfaces drives the REST surfaces of a real `exocortex serve`
// (memory, state, deltas and their stream, the tool registry, the OpenAPI
// description) with each role's key, none and a wrong one.
func TestServeRESTSurfaces(t *testing.T) {
	base := restServer(t)
	const admin, agent = "admin-secret", "agent-secret"
	for _, tc := range []struct {
		name, key, method, path, body string
		status                        int
	}{
		{"save without a key", "", "POST", "/api/v1/memory", `{"text":"x"}`, 401},
		{"save with a wrong key", "nope", "POST", "/api/v1/memory", `{"text":"x"}`, 401},
		{"save with the agent key", agent, "POST", "/api/v1/memory", `{"text":"x"}`, 403},
		{"register with the agent key", agent, "POST", "/tools", `{}`, 403},
		{"search without a key", "", "GET", "/api/v1/memory/search?q=x", "", 401},
		{"search, k wrong", agent, "GET", "/api/v1/memory/search?q=x&k=lots", "", 400},
		{"health needs no key", "", "GET", "/health", "", 200},
		{"openapi needs no key", "", "GET", "/api/v1/openapi.json", "", 200},
	} {
		if s := call(t, tc.key, tc.method, base+tc.path, tc.body, nil); s != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, s, tc.status)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/deltas/stream", nil)
	req.Header.Set("Authorization", "Bearer "+agent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream: %v %v", err, resp)
	}
	defer resp.Body.Close()
	var saved struct {
		Record struct{ ID string }
		Seq    uint64
	}
	if s := call(t, admin, "POST", base+"/api/v1/memory", `{"text":"the deploy runbook lives in the ops wiki","tags":["ops"]}`, &saved); s != 201 {
		t.Fatalf("save: %d", s)
	}
	sc := bufio.NewScanner(resp.Body)
	var data string
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = v
			break
		}
	}
	var d struct {
		ItemID    string `json:"item_id"`
		EventType string `json:"event_type"`
		Seq       uint64
	}
	if json.Unmarshal([]byte(data), &d) != nil || d.ItemID != saved.Record.ID || d.Seq != saved.Seq || d.EventType != "upsert" {
		t.Fatalf("streamed delta %s; want the save of %s at seq %d", data, saved.Record.ID, saved.Seq)
	}
	var hits struct{ Hits []struct{ Why string } }
	if call(t, agent, "GET", base+"/api/v1/memory/search?q=deploy+runbook&tags=ops", "", &hits); len(hits.Hits) != 1 || hits.Hits[0].Why == "" {
		t.Fatalf("search: %+v", hits)
	}
	var st struct {
		StateHash string `json:"state_hash"`
		Seq       uint64
	}
	if call(t, agent, "GET", base+"/api/v1/state?ns=main", "", &st); st.StateHash == "" || st.Seq < saved.Seq {
		t.Fatalf("state: %+v", st)
	}
	var since struct{ Deltas []struct{ Seq uint64 } }
	if call(t, agent, "GET", fmt.Sprintf("%s/api/v1/deltas?since=%d", base, saved.Seq-1), "", &since); len(since.Deltas) != 1 || since.Deltas[0].Seq != saved.Seq {
		t.Fatalf("since: %+v", since)
	}
	var tools struct {
		Tools []struct{ ID, Agent, Source string }
	}
	call(t, agent, "GET", base+"/tools", "", &tools)
	if len(tools.Tools) == 0 || tools.Tools[0].Source != "plugin" || !strings.HasPrefix(tools.Tools[0].ID, tools.Tools[0].Agent+".") {
		t.Fatalf("tools: %+v", tools)
	}
	// The description is served only when openapi.Check finds every route
	// serve mounted described and every described route mounted (else 500).
	var doc struct{ Paths map[string]map[string]any }
	if s := call(t, "", "GET", base+"/api/v1/openapi.json", "", &doc); s != 200 {
		t.Fatalf("GET /api/v1/openapi.json: %d (a route without its Op, or an Op without its route)", s)
	}
	for p, methods := range map[string][]string{
		"/api/v1/memory/search": {"get"}, "/api/v1/deltas/stream": {"get"}, "/tools/{id}": {"get", "delete"},
		"/api/api_message": {"post"}, "/api_log_get": {"get", "post"}, "/v1/chat/completions": {"post"}, "/v1/models": {"get"},
		"/api/v1/approvals/{id}": {"post"}, "/api/v1/tasks/{id}": {"get", "delete"}, "/mcp": {"get", "post"},
	} {
		for _, m := range methods {
			op, _ := doc.Paths[p][m].(map[string]any)
			if op["responses"] == nil || (m == "post" && op["requestBody"] == nil) {
				t.Errorf("the served OpenAPI document lacks %s %s or its schemas: %v", m, p, op)
			}
		}
	}
	if bin, _ := filepath.Abs("../../.tools/node/node_modules/.bin/redocly"); fileExists(bin) {
		var raw bytes.Buffer
		r, _ := http.Get(base + "/api/v1/openapi.json")
		io.Copy(&raw, r.Body)
		r.Body.Close()
		file := filepath.Join(t.TempDir(), "openapi.json")
		os.WriteFile(file, raw.Bytes(), 0o600)
		// As server/openapi's TestDocumentValidates: the recommended rules,
		// but no-ambiguous-paths (GET /api/v1/memory/why/{id} and POST
		// /api/v1/memory/{id}/archive share a shape, not a method).
		cfg := filepath.Join(t.TempDir(), "redocly.yaml")
		os.WriteFile(cfg, []byte("extends:\n  - recommended\nrules:\n  no-ambiguous-paths: off\n"), 0o600)
		cmd := exec.Command(bin, "lint", "--config", cfg, file)
		cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		if err != nil || strings.Contains(string(out), "You have ") || !strings.Contains(string(out), "valid") {
			t.Fatalf("redocly lint of the served description (errors or warnings): %v\n%s", err, out)
		}
	} else {
		t.Logf("no Redocly CLI at %s: `make node-tools` installs it; the served description was not linted", bin)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
