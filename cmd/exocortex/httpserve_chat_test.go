package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/server/sessions"
)

const chatScript = `model: scripted
replies:
  - content: '{"thoughts":["greet"],"headline":"Answering","tool_name":"response","tool_args":{"text":"Hello, **operator**: a streamed answer in pieces."}}'
    chunk_size: 4
    delay: 5ms
`

// turnEvents POSTs a turn to session name and reads its server-sent events to the end.
func turnEvents(t *testing.T, s *served, name, body string, hdr ...string) []sessions.TurnEvent {
	t.Helper()
	req, err := http.NewRequest("POST", s.url+"/api/v1/sessions/"+name+"/turn", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("turn: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var out []sessions.TurnEvent
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
		} else if v, ok := strings.CutPrefix(line, "data: "); ok {
			var e sessions.TurnEvent
			if err := json.Unmarshal([]byte(v), &e); err != nil {
				t.Fatalf("event %s: %v in %s", event, err, v)
			}
			if e.Type != event {
				t.Errorf("event %q carries type %q", event, e.Type)
			}
			out = append(out, e)
		}
	}
	return out
}

// TestServeChatSessions drives the chat's REST routes of a real serve: a
// session made, a turn streamed as server-sent events (its reply grows, the
// answer read out of the reply format), its history read back, renamed (the
// terminal resumes it by the new name), refused to an agent key where an
// admin is needed, and deleted.
func TestServeChatSessions(t *testing.T) {
	s := startServe(t, serveBinary(t), chatScript, "", nil, "EXOCORTEX_API_KEY=admin-key", "EXOCORTEX_AGENT_KEY=agent-key")
	admin := []string{"X-API-KEY", "admin-key"}
	agent := []string{"X-API-KEY", "agent-key"}
	for _, tc := range []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
	}{
		{"new", "POST", "/api/v1/sessions", `{"name":"one"}`, agent, 201},
		{"new again", "POST", "/api/v1/sessions", `{"name":"one"}`, agent, 409},
		{"a bad name", "POST", "/api/v1/sessions", `{"name":"../x"}`, agent, 400},
		{"no key", "GET", "/api/v1/sessions", "", nil, 401},
		{"rename by an agent", "POST", "/api/v1/sessions/one/rename", `{"name":"two"}`, agent, 403},
		{"delete by an agent", "DELETE", "/api/v1/sessions/one", "", agent, 403},
		{"messages of none", "GET", "/api/v1/sessions/nope/messages", "", agent, 404},
		{"a bad limit", "GET", "/api/v1/sessions/one/messages?limit=x", "", agent, 400},
		{"stop with no turn", "POST", "/api/v1/sessions/one/stop", "", agent, 200},
		{"an empty message", "POST", "/api/v1/sessions/one/turn", `{"message":" "}`, agent, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if st, body := s.do(t, tc.method, tc.path, tc.body, tc.hdr...); st != tc.status {
				t.Errorf("%s %s: %d %v, want %d", tc.method, tc.path, st, body, tc.status)
			}
		})
	}

	evs := turnEvents(t, s, "one", `{"message":"hello"}`, agent...)
	if len(evs) < 3 || evs[0].Type != "session" || evs[0].Session != "one" || evs[len(evs)-1].Type != "done" {
		t.Fatalf("the turn's events: %+v", evs)
	}
	if d := evs[len(evs)-1]; d.Text != "Hello, **operator**: a streamed answer in pieces." {
		t.Errorf("done: %+v", d)
	}
	var replies []string
	for _, e := range evs {
		if e.Type == "reply" {
			replies = append(replies, e.Text)
		}
	}
	if len(replies) < 2 || replies[len(replies)-1] != "Hello, **operator**: a streamed answer in pieces." || len(replies[0]) >= len(replies[len(replies)-1]) {
		t.Errorf("the reply events should grow to the answer: %q", replies)
	}

	st, body := s.do(t, "GET", "/api/v1/sessions/one/messages", "", agent...)
	msgs, _ := body["messages"].([]any)
	if st != 200 || len(msgs) != 2 {
		t.Fatalf("messages: %d %v", st, body)
	}
	if m := msgs[1].(map[string]any); m["role"] != "assistant" || m["tool"] != "response" || m["text"] != "Hello, **operator**: a streamed answer in pieces." {
		t.Errorf("the assistant's message, read: %v", m)
	}

	if st, body := s.do(t, "POST", "/api/v1/sessions/one/rename", `{"name":"two"}`, admin...); st != 200 || body["name"] != "two" {
		t.Fatalf("rename: %d %v", st, body)
	}
	st, body = s.do(t, "GET", "/api/v1/sessions", "", agent...)
	names := []string{}
	for _, x := range body["sessions"].([]any) {
		names = append(names, x.(map[string]any)["name"].(string))
	}
	if st != 200 || strings.Join(names, ",") != "two" {
		t.Fatalf("sessions after the rename: %v", names)
	}
	if st, body := s.do(t, "GET", "/api/v1/sessions/two/messages", "", agent...); st != 200 || body["total"] != float64(2) {
		t.Errorf("the renamed session's history: %d %v", st, body)
	}
	if st, body := s.do(t, "DELETE", "/api/v1/sessions/two", "", admin...); st != 200 {
		t.Fatalf("delete: %d %v", st, body)
	}
	if st, _ := s.do(t, "GET", "/api/v1/sessions/two/messages", "", agent...); st != 404 {
		t.Errorf("a deleted session's messages: %d", st)
	}
}
