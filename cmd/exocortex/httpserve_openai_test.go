package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// openaiScript answers the npm client's two completions; the second calls
// the hello example plugin's tool first, so the stream shows progress.
const openaiScript = `model: scripted
replies:
  - content: '{"thoughts":["answer"],"tool_name":"response","tool_args":{"text":"whole answer"}}'
  - content: '{"thoughts":["greet"],"tool_name":"hello_time","tool_args":{"name":"npm"}}'
  - content: '{"thoughts":["answer"],"tool_name":"response","tool_args":{"text":"streamed answer"}}'
`

// TestServeOpenAIWithTheNpmClient runs the official openai npm client
// (installed by make openai-client) against /v1/chat/completions, streamed
// and not, in one session named by the user field.
func TestServeOpenAIWithTheNpmClient(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: `make openai-client` installs nodejs, npm and the openai client")
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "openaiclient"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai")); err != nil {
		t.Skip("the openai npm client is not installed: run `make openai-client` (make test does)")
	}
	hello := serveBuild(t, "github.com/exocortex/exocortex/examples/hello")
	s := startServe(t, serveBinary(t), openaiScript, "", map[string]string{"hello": hello}, "EXOCORTEX_API_KEY=admin-key")
	cmd := exec.Command("node", "client.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+s.url+"/v1", "OPENAI_API_KEY=admin-key")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node client.mjs: %v\n%s\nserve's stderr:\n%s", err, out, s.log())
	}
	var got struct {
		Models []string `json:"models"`
		Whole  struct {
			Content, Finish, Object string
		} `json:"whole"`
		Stream struct {
			Content, Progress, Finish string
			Chunks                    int
		} `json:"stream"`
		WrongKey any `json:"wrongKey"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the client's output %q: %v", out, err)
	}
	if len(got.Models) != 1 || got.Models[0] != "exocortex" {
		t.Errorf("models %v, want [exocortex]", got.Models)
	}
	if got.Whole.Content != "whole answer" || got.Whole.Finish != "stop" || got.Whole.Object != "chat.completion" {
		t.Errorf("the completion not streamed: %+v", got.Whole)
	}
	if got.Stream.Content != "streamed answer" || got.Stream.Finish != "stop" || got.Stream.Chunks < 4 {
		t.Errorf("the streamed completion: %+v", got.Stream)
	}
	if !strings.Contains(got.Stream.Progress, "using hello_time") || !strings.Contains(got.Stream.Progress, "hello_time done") {
		t.Errorf("the stream's progress %q, want the hello_time call and its result", got.Stream.Progress)
	}
	if got.WrongKey != float64(401) {
		t.Errorf("a wrong key: %v, want 401", got.WrongKey)
	}
	// Both completions went to the session the user field named, one after the other.
	st, body := s.do(t, "GET", "/api/api_log_get?context_id=npm-client", "", "X-API-KEY", "admin-key")
	log, _ := body["log"].(map[string]any)
	var kinds []string
	items, _ := log["items"].([]any)
	for _, it := range items {
		kinds = append(kinds, it.(map[string]any)["type"].(string))
	}
	if st != 200 || strings.Join(kinds, " ") != "user response user tool tool response" {
		t.Errorf("session npm-client's log: %d %v", st, kinds)
	}
}

// TestServeOpenAIErrors: a request without a user message, or with content
// of the wrong type, is refused naming the field; X-Session-Id names the session.
func TestServeOpenAIErrors(t *testing.T) {
	s := startServe(t, serveBinary(t), `model: scripted
replies:
  - content: '{"thoughts":["answer"],"tool_name":"response","tool_args":{"text":"ok"}}'
`, "", nil)
	for _, tc := range []struct{ body, field string }{
		{`{"model":"exocortex","messages":[{"role":"system","content":"be brief"}]}`, "messages"},
		{`{"model":"exocortex","messages":[{"role":"user","content":7}]}`, "messages[0].content"},
		{`{"model":"exocortex","messages":"hello"}`, "messages"},
		{`{"model":"exocortex","user":"me@example.com/x","messages":[{"role":"user","content":"hi"}]}`, "user"},
	} {
		st, body := s.do(t, "POST", "/v1/chat/completions", tc.body)
		e, _ := body["error"].(map[string]any)
		if st != 400 || e["field"] != tc.field {
			t.Errorf("%s: %d %v, want 400 naming %s", tc.body, st, body, tc.field)
		}
	}
	req, _ := http.NewRequest("POST", s.url+"/v1/chat/completions", strings.NewReader(`{"model":"exocortex","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Session-Id", "header-named")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("X-Session-Id") != "header-named" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("stream headers %v", resp.Header)
	}
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "data: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 || lines[len(lines)-1] != "data: [DONE]" || !strings.Contains(strings.Join(lines, "\n"), `"content":"ok"`) {
		t.Errorf("the stream: %v", lines)
	}
	if _, err := os.Stat(filepath.Join(s.home, "sessions", "header-named.jsonl")); err != nil {
		t.Errorf("the session named by X-Session-Id: %v", err)
	}
}
