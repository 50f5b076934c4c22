package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// sessionsScript is the shared scripted model of TestServeSessionsAndApprovals;
// the test sends its requests in this order.
const sessionsScript = `model: scripted
replies:
  - content: '{"thoughts":["list"],"tool_name":"shell_echo","tool_args":{"cmd":"ls"}}'
  - content: '{"thoughts":["b"],"tool_name":"response","tool_args":{"text":"beta answer"}}'
  - content: '{"thoughts":["a"],"tool_name":"response","tool_args":{"text":"alpha answer"}}'
  - content: '{"thoughts":["wipe"],"tool_name":"shell_echo","tool_args":{"cmd":"rm -rf /"}}'
  - content: '{"thoughts":["ok"],"tool_name":"response","tool_args":{"text":"refused"}}'
  - content: '{"thoughts":["wait"],"tool_name":"shell_echo","tool_args":{"cmd":"sleep 1"}}'
  - content: '{"thoughts":["ok"],"tool_name":"response","tool_args":{"text":"timed out"}}'
  - content: '{"thoughts":["c"],"tool_name":"response","tool_args":{"text":"c answer"}}'
    delay: 50ms
  - content: '{"thoughts":["c"],"tool_name":"response","tool_args":{"text":"c answer"}}'
    delay: 50ms
  - content: '{"thoughts":["n"],"tool_name":"note","tool_args":{"set":"alpha secret"}}'
  - content: '{"thoughts":["n"],"tool_name":"response","tool_args":{"text":"noted"}}'
  - content: '{"thoughts":["n"],"tool_name":"note","tool_args":{}}'
  - content: '{"thoughts":["n"],"tool_name":"response","tool_args":{"text":"read"}}'
  - content: '{"thoughts":["n"],"tool_name":"note","tool_args":{}}'
  - content: '{"thoughts":["n"],"tool_name":"response","tool_args":{"text":"read"}}'
  - content: '{"thoughts":["n"],"tool_name":"note","tool_args":{}}'
  - content: '{"thoughts":["n"],"tool_name":"response","tool_args":{"text":"read"}}'
`

// TestServeSessionsAndApprovals: a held tool call of one session waits for
// an admin's answer while another session runs to its end (their histories,
// approvals and files apart); a call granted runs, one refused and one timed
// out do not, and the model is told why; two turns of one session run one
// after the other; a session-scope state key one session writes is not
// visible in another (testdata/statenote).
func TestServeSessionsAndApprovals(t *testing.T) {
	gate := serveBuild(t, "github.com/exocortex/exocortex/tui/testdata/gate")
	statenote := serveBuild(t, "github.com/exocortex/exocortex/cmd/exocortex/testdata/statenote")
	s := startServe(t, serveBinary(t), sessionsScript, "serve:\n  approval_timeout: 2s\n", map[string]string{"gate": gate, "statenote": statenote},
		"EXOCORTEX_API_KEY=admin-key", "EXOCORTEX_AGENT_KEY=agent-key")
	agent := []string{"X-API-KEY", "agent-key"}
	admin := []string{"X-API-KEY", "admin-key"}
	message := func(ctxID, text string) (int, map[string]any) {
		return s.do(t, "POST", "/api/api_message", `{"message":"`+text+`","context_id":"`+ctxID+`"}`, agent...)
	}
	// The sessions exist before their first message, as the terminal made them.
	for _, name := range []string{"alpha", "beta", "gamma"} {
		if err := os.MkdirAll(filepath.Join(s.home, "sessions"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.home, "sessions", name+".jsonl"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pending := func(session string) []any {
		st, body := s.do(t, "GET", "/api/v1/approvals?session="+session, "", agent...)
		if st != 200 {
			t.Fatalf("GET approvals: %d %v", st, body)
		}
		list, _ := body["approvals"].([]any)
		return list
	}
	type answer struct {
		status int
		body   map[string]any
	}
	alpha := make(chan answer, 1)
	go func() { st, b := message("alpha", "alpha question"); alpha <- answer{st, b} }()
	waitFor(t, "alpha's held call", func() bool { return len(pending("alpha")) == 1 })
	held := pending("alpha")[0].(map[string]any)
	if held["tool"] != "shell_echo" || held["action"] != "ls" || held["session"] != "alpha" {
		t.Fatalf("the held call: %v", held)
	}
	// Beta runs to its end while alpha waits; it sees no approval of alpha's.
	if st, body := message("beta", "beta question"); st != 200 || body["response"] != "beta answer" {
		t.Fatalf("beta while alpha waits: %d %v", st, body)
	}
	if p := pending("beta"); len(p) != 0 {
		t.Errorf("beta's approvals: %v", p)
	}
	id := held["id"].(string)
	if st, body := s.do(t, "POST", "/api/v1/approvals/"+id, `{"decision":"allow_once"}`, agent...); st != 403 {
		t.Errorf("the agent key answering: %d %v, want 403", st, body)
	}
	if st, body := s.do(t, "POST", "/api/v1/approvals/"+id, `{"decision":"maybe"}`, admin...); st != 400 || body["error"].(map[string]any)["field"] != "decision" {
		t.Errorf("a bad decision: %d %v", st, body)
	}
	if st, body := s.do(t, "POST", "/api/v1/approvals/"+id, `{"decision":"allow_once"}`, admin...); st != 200 {
		t.Fatalf("granting: %d %v", st, body)
	}
	if a := <-alpha; a.status != 200 || a.body["response"] != "alpha answer" {
		t.Fatalf("alpha after the grant: %d %v", a.status, a.body)
	}
	if st, body := s.do(t, "POST", "/api/v1/approvals/"+id, `{"decision":"deny"}`, admin...); st != 404 {
		t.Errorf("answering twice: %d %v, want 404", st, body)
	}
	// Refused, with a reason the model is given.
	go func() { st, b := message("alpha", "wipe it"); alpha <- answer{st, b} }()
	waitFor(t, "the second held call", func() bool { return len(pending("alpha")) == 1 })
	id = pending("alpha")[0].(map[string]any)["id"].(string)
	if st, body := s.do(t, "POST", "/api/v1/approvals/"+id, `{"decision":"deny","reason":"not today"}`, admin...); st != 200 {
		t.Fatalf("refusing: %d %v", st, body)
	}
	if a := <-alpha; a.status != 200 || a.body["response"] != "refused" {
		t.Fatalf("alpha after the refusal: %d %v", a.status, a.body)
	}
	// Timed out: nobody answers within serve.approval_timeout.
	if st, body := message("alpha", "wait a bit"); st != 200 || body["response"] != "timed out" {
		t.Fatalf("alpha after the timeout: %d %v", st, body)
	}
	// The granted call ran; the answers are in the log, and the refusals'
	// reasons reached the model (the tool results in the history).
	if results := toolResults(t, s, "alpha"); len(results) != 1 || results[0] != "ran: ls\nsecond line\nthird line" {
		t.Errorf("alpha's tool results: %q, want the granted call's only", results)
	}
	var decisions []string
	for _, it := range logItems(t, s, "alpha") {
		if kv, _ := it["kvps"].(map[string]any); kv != nil && kv["decision"] != nil {
			decisions = append(decisions, kv["decision"].(string))
		}
	}
	if len(decisions) != 3 || !strings.HasPrefix(decisions[0], "allow_once") || !strings.Contains(decisions[1], "not today") ||
		!strings.Contains(decisions[2], "serve.approval_timeout") {
		t.Errorf("alpha's approvals in its log (granted, refused, timed out): %q", decisions)
	}
	hist, err := os.ReadFile(filepath.Join(s.home, "sessions", "alpha.jsonl"))
	if err != nil || !strings.Contains(string(hist), "not today") || !strings.Contains(string(hist), "serve.approval_timeout") {
		t.Errorf("alpha's history does not give the model the refusals' reasons (%v)", err)
	}
	// Two turns of one session at once run one after the other.
	var wg sync.WaitGroup
	for _, q := range []string{"gamma one", "gamma two"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st, body := message("gamma", q); st != 200 || body["response"] != "c answer" {
				t.Errorf("gamma %s: %d %v", q, st, body)
			}
		}()
	}
	wg.Wait()
	if kinds := logKinds(t, s, "gamma"); strings.Join(kinds, " ") != "user response user response" {
		t.Errorf("gamma's log %v: the turns interleaved", kinds)
	}
	// Each history holds its own messages only.
	for name, own := range map[string]string{"alpha": "alpha question", "beta": "beta question"} {
		b, err := os.ReadFile(filepath.Join(s.home, "sessions", name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, other := range []string{"alpha question", "beta question", "gamma one"} {
			if got := strings.Contains(string(b), other); got != (other == own) {
				t.Errorf("session %s's history holds %q: %v", name, other, got)
			}
		}
	}
	// State keys: alpha writes its session-scope note; beta (open already)
	// and delta (opened after the write), served by the same plugin process,
	// read none; alpha reads its own back.
	mkSession(t, s, "delta")
	for _, step := range []struct{ session, text, want string }{
		{"alpha", "note this", "noted"}, {"beta", "what is the note", "read"}, {"alpha", "what is the note", "read"},
		{"delta", "what is the note", "read"},
	} {
		if st, body := message(step.session, step.text); st != 200 || body["response"] != step.want {
			t.Fatalf("%s %q: %d %v", step.session, step.text, st, body)
		}
	}
	for _, other := range []string{"beta", "delta"} {
		if got := toolResults(t, s, other); strings.Join(got, "|") != "note: unset" {
			t.Errorf("%s's note results %q: want only %q (alpha's state key must not reach it)", other, got, "note: unset")
		}
	}
	if got := toolResults(t, s, "alpha"); len(got) != 3 || got[1] != "noted: alpha secret" || got[2] != "note: alpha secret" {
		t.Errorf("alpha's tool results %q: want its note written, then read back", got)
	}
}

func logItems(t *testing.T, s *served, ctxID string) []map[string]any {
	t.Helper()
	st, body := s.do(t, "GET", "/api/api_log_get?context_id="+ctxID, "", "X-API-KEY", "admin-key")
	if st != 200 {
		t.Fatalf("api_log_get %s: %d %v", ctxID, st, body)
	}
	var out []map[string]any
	for _, it := range body["log"].(map[string]any)["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

func logKinds(t *testing.T, s *served, ctxID string) []string {
	var kinds []string
	for _, it := range logItems(t, s, ctxID) {
		kinds = append(kinds, it["type"].(string))
	}
	return kinds
}

// toolResults are the contents of the session's tool results, in order.
func toolResults(t *testing.T, s *served, ctxID string) []string {
	var out []string
	for _, it := range logItems(t, s, ctxID) {
		if h, _ := it["heading"].(string); it["type"] == "tool" && strings.HasSuffix(h, " result") {
			out = append(out, it["content"].(string))
		}
	}
	return out
}
