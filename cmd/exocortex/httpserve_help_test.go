package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestServeHelpCurlsWork runs every curl `serve --help` prints against a
// running server: each answers (200; the approval answer 404, since no call
// is held).
func TestServeHelpCurlsWork(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed (apt-get install curl)")
	}
	exe := serveBinary(t)
	help, _, code := runExo(t, exe, t.TempDir(), t.TempDir(), "serve", "--help")
	if code != 0 {
		t.Fatalf("serve --help: exit %d", code)
	}
	var curls []string
	lines := strings.Split(help, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "curl ") {
			continue
		}
		for strings.HasSuffix(l, `\`) && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, `\`) + " " + strings.TrimSpace(lines[i])
		}
		curls = append(curls, l)
	}
	for _, surface := range []string{"/api/api_message", "/api/api_log_get", "/api/api_reset_chat", "/api/api_terminate_chat", "/v1/models", "/v1/chat/completions", "/api/v1/approvals", "/api/v1/tasks"} {
		if !strings.Contains(strings.Join(curls, "\n"), surface) {
			t.Errorf("serve --help has no curl for %s:\n%s", surface, help)
		}
	}
	s := startServe(t, exe, `model: scripted
replies:
  - content: '{"thoughts":["a"],"tool_name":"response","tool_args":{"text":"hello from a0"}}'
  - content: '{"thoughts":["b"],"tool_name":"response","tool_args":{"text":"hello from openai"}}'
  - content: '{"thoughts":["c"],"tool_name":"response","tool_args":{"text":"the summary"}}'
`, "", nil, "EXOCORTEX_API_KEY=help-key")
	ctxID, taskID := "", ""
	for _, c := range curls {
		c = strings.ReplaceAll(c, "http://127.0.0.1:8765", s.url)
		if strings.Contains(c, "/stream") {
			// A live stream never ends: it must answer 200 and send the
			// deltas of the writes above within a few seconds.
			cmd := exec.Command("sh", "-c", c+` --max-time 3 -w '\n%{http_code}'`)
			cmd.Env = append(os.Environ(), "EXOCORTEX_API_KEY=help-key")
			out, _ := cmd.Output() // curl exits 28 at --max-time
			if !strings.HasSuffix(string(out), "\n200") || !strings.Contains(string(out), "event: delta") {
				t.Errorf("%s: %q, want 200 and the deltas so far", c, out)
			}
			continue
		}
		want := "200"
		switch {
		case strings.Contains(c, "approvals/ID"), strings.Contains(c, "plugins/PLUGIN"):
			want = "404"
		case strings.Contains(c, "/api/v1/saw/NAME"), strings.Contains(c, "/api/v1/wiring/NAME"):
			// api_terminate_chat above moved the session to the trash: the
			// route answers, with not_found (TestServeInspectSawWiringPlugins
			// reads a live session's).
			want = "404"
			c = strings.ReplaceAll(c, "NAME", ctxID)
		case strings.Contains(c, "/api/v1/tasks -H"):
			want = "202"
		case strings.Contains(c, "TASK"):
			c = strings.ReplaceAll(c, "TASK", taskID)
		case strings.Contains(c, "NAME"):
			if ctxID == "" {
				t.Fatalf("no context_id from api_message before %s", c)
			}
			c = strings.ReplaceAll(c, "NAME", ctxID)
		}
		cmd := exec.Command("sh", "-c", c+` --max-time 60 -w '\n%{http_code}'`)
		cmd.Env = append(os.Environ(), "EXOCORTEX_API_KEY=help-key")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		i := strings.LastIndex(string(out), "\n")
		body, status := string(out[:i]), string(out[i+1:])
		if status != want && !(want == "200" && strings.HasPrefix(status, "2")) {
			t.Errorf("%s: %s, want status %s", c, out, want)
			continue
		}
		if strings.Contains(c, "api_message") {
			var m struct {
				ContextID string `json:"context_id"`
				Response  string `json:"response"`
			}
			if err := json.Unmarshal([]byte(body), &m); err != nil || m.Response != "hello from a0" {
				t.Fatalf("%s: %q (%v)", c, body, err)
			}
			ctxID = m.ContextID
		}
		if want == "202" {
			var task struct {
				ID string `json:"task_id"`
			}
			if err := json.Unmarshal([]byte(body), &task); err != nil || task.ID == "" {
				t.Fatalf("%s: %q (%v)", c, body, err)
			}
			taskID = task.ID
		}
	}
}

// TestServeRefusesAnOpenAddressWithoutAKey: any address but loopback needs
// a key, and serve says so before it starts anything.
func TestServeRefusesAnOpenAddressWithoutAKey(t *testing.T) {
	_, stderr, code := runExo(t, serveBinary(t), t.TempDir(), t.TempDir(), "serve", "--addr", "0.0.0.0:0")
	if code != 2 || !strings.Contains(stderr, "needs at least one API key") || !strings.Contains(stderr, "EXOCORTEX_API_KEY") {
		t.Fatalf("serve --addr 0.0.0.0:0 without a key: exit %d, %q", code, stderr)
	}
}
