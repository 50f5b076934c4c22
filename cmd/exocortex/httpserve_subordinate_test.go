package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nestedScript: the session's agent asks a subordinate, which asks its own;
// the innermost runs shell_echo (held by the gate plugin), and the answers
// come back up.
const nestedScript = `model: scripted
replies:
  - content: '{"thoughts":["delegate"],"tool_name":"call_subordinate","tool_args":{"message":"MIDDLE-TASK find the files"}}'
  - content: '{"thoughts":["delegate again"],"tool_name":"call_subordinate","tool_args":{"message":"DEEP-TASK list them"}}'
  - content: '{"thoughts":["list"],"tool_name":"shell_echo","tool_args":{"cmd":"ls deep"}}'
  - content: '{"thoughts":["done"],"tool_name":"response","tool_args":{"text":"DEEP-ANSWER two files"}}'
  - content: '{"thoughts":["done"],"tool_name":"response","tool_args":{"text":"MIDDLE-ANSWER two files found"}}'
  - content: '{"thoughts":["done"],"tool_name":"response","tool_args":{"text":"top answer: two files"}}'
`

// TestServeNestedSubordinates: call_subordinate inside a served session, two
// deep: the subordinates run in that session (their held call is listed
// under the session's name and waits for its approval in the session's
// mode, granted over the API), and the session's history holds its own
// messages, with the subordinates' answer as a tool result and none of the
// subordinates' own messages.
func TestServeNestedSubordinates(t *testing.T) {
	gate := serveBuild(t, "github.com/exocortex/exocortex/tui/testdata/gate")
	s := startServe(t, serveBinary(t), nestedScript, "approval: default\nserve:\n  approval_timeout: 120s\n", map[string]string{"gate": gate},
		"EXOCORTEX_API_KEY=admin-key")
	admin := []string{"X-API-KEY", "admin-key"}
	mkSession(t, s, "nest")
	mkSession(t, s, "other")
	done := make(chan map[string]any, 1)
	go func() {
		_, body := s.do(t, "POST", "/api/api_message", `{"message":"how many files","context_id":"nest"}`, admin...)
		done <- body
	}()
	var held map[string]any
	waitFor(t, "the innermost subordinate's held call", func() bool {
		_, body := s.do(t, "GET", "/api/v1/approvals", "", admin...)
		if list, _ := body["approvals"].([]any); len(list) == 1 {
			held = list[0].(map[string]any)
			return true
		}
		return false
	})
	if held["session"] != "nest" || held["tool"] != "shell_echo" || held["action"] != "ls deep" {
		t.Fatalf("the held call %v: want the innermost subordinate's shell_echo, in session nest", held)
	}
	if _, body := s.do(t, "GET", "/api/v1/approvals?session=other", "", admin...); len(body["approvals"].([]any)) != 0 {
		t.Errorf("session other sees nest's approval: %v", body)
	}
	if st, body := s.do(t, "POST", "/api/v1/approvals/"+held["id"].(string), `{"decision":"allow_once"}`, admin...); st != 200 {
		t.Fatalf("granting: %d %v", st, body)
	}
	select {
	case body := <-done:
		if body["response"] != "top answer: two files" {
			t.Fatalf("api_message: %v\nstderr:\n%s", body, s.log())
		}
	case <-time.After(180 * time.Second):
		t.Fatalf("the monologue did not end; stderr:\n%s", s.log())
	}
	hist, err := os.ReadFile(filepath.Join(s.home, "sessions", "nest.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	h := string(hist)
	for _, want := range []string{"how many files", "MIDDLE-TASK", "MIDDLE-ANSWER", "top answer"} {
		if !strings.Contains(h, want) {
			t.Errorf("nest's history lacks %q", want)
		}
	}
	// The subordinates' own messages (their tasks, tool calls and results)
	// are theirs: the innermost's task, its shell_echo and its answer stay out.
	for _, not := range []string{"DEEP-TASK", "ran: ls deep", "DEEP-ANSWER"} {
		if strings.Contains(h, not) {
			t.Errorf("nest's history holds the subordinates' %q", not)
		}
	}
	// The session's log shows every agent's work, each with its agentno
	// (its depth), as Agent Zero's does.
	var byAgent [3][]string
	for _, it := range logItems(t, s, "nest") {
		if h, _ := it["heading"].(string); it["type"] == "tool" && strings.HasSuffix(h, " result") {
			if no := int(it["agentno"].(float64)); no < len(byAgent) {
				byAgent[no] = append(byAgent[no], firstLine(it["content"].(string)))
			}
		}
	}
	if got := strings.Join(byAgent[0], "|") + " / " + strings.Join(byAgent[1], "|") + " / " + strings.Join(byAgent[2], "|"); got != "MIDDLE-ANSWER two files found / DEEP-ANSWER two files / ran: ls deep" {
		t.Errorf("nest's log, tool results by agentno: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(s.home, "sessions", "other.jsonl")); len(b) != 0 {
		t.Errorf("session other was written: %q", b)
	}
}
