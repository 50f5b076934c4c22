package main

import (
	"strings"
	"testing"

	"github.com/exocortex/exocortex/memory/natsjournal/natstest"
	"github.com/exocortex/exocortex/server/inspect"
)

// TestServeReplicasShareSessions: two `serve` processes on two homes whose
// memory journal is one JetStream stream serve one session, as replicas
// behind a load balancer would. A turn on a, the next on b (whose scripted
// model checks that a's turn is in the request: the history came along), the
// third on a again (a's open copy is stale: it reads b's turn first); both
// list the session and name the bucket, and the history is whole and in order
// on each. Each replica's dashboard inspector shows every turn, the other's
// too: what b's model saw (a's turn in its request) through a's
// /api/v1/saw, a's first turn through b's, the wiring of b's turn through a.
func TestServeReplicasShareSessions(t *testing.T) {
	srv := natstest.Start(t)
	exe := serveBinary(t)
	env := []string{"EXOCORTEX_NATS_URL=" + srv.URL(), "EXOCORTEX_EMBEDDER=none"}
	scriptA := `model: scripted
replies:
  - content: '{"thoughts":["a"],"tool_name":"response","tool_args":{"text":"noted on a"}}'
  - content: '{"thoughts":["a"],"tool_name":"response","tool_args":{"text":"a again, after b"}}'
    expect_in_request: "answered on b"
`
	scriptB := `model: scripted
replies:
  - content: '{"thoughts":["b"],"tool_name":"response","tool_args":{"text":"the code is 42, answered on b"}}'
    expect_in_request: "remember: the code is 42"
`
	a := startServe(t, exe, scriptA, "", nil, env...)
	b := startServe(t, exe, scriptB, "", nil, env...)
	message := func(s *served, text string) string {
		t.Helper()
		st, body := s.do(t, "POST", "/api/api_message", `{"message":"`+text+`","context_id":"ops"}`)
		if st != 200 {
			t.Fatalf("%s: api_message %q: %d %v\nstderr:\n%s", s.url, text, st, body, s.log())
		}
		r, _ := body["response"].(string)
		return r
	}
	if st, body := a.do(t, "POST", "/api/v1/sessions", `{"name":"ops"}`); st != 201 {
		t.Fatalf("creating ops on a: %d %v", st, body)
	}
	if st, body := b.do(t, "POST", "/api/v1/sessions", `{"name":"ops"}`); st != 409 {
		t.Fatalf("creating ops again on b: %d %v, want 409 (it exists in the shared store)", st, body)
	}
	if got := message(a, "remember: the code is 42"); got != "noted on a" {
		t.Fatalf("a's answer: %q", got)
	}
	if got := message(b, "what is the code?"); got != "the code is 42, answered on b" {
		t.Fatalf("b's answer: %q", got)
	}
	if got := message(a, "and now?"); got != "a again, after b" {
		t.Fatalf("a's answer after b's turn: %q", got)
	}
	want := []string{"remember: the code is 42", "noted on a", "what is the code?", "the code is 42, answered on b", "and now?", "a again, after b"}
	for _, s := range []*served{a, b} {
		if !strings.Contains(s.log(), "sessions in "+srv.URL()+" bucket EXO_MEMORY_SESSIONS") {
			t.Errorf("%s does not say where its sessions are:\n%s", s.url, s.log())
		}
		st, body := s.do(t, "GET", "/api/v1/sessions", "")
		if st != 200 || !strings.Contains(body["store"].(string), "EXO_MEMORY_SESSIONS") {
			t.Fatalf("%s: GET /api/v1/sessions: %d %v", s.url, st, body)
		}
		list, _ := body["sessions"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["name"] != "ops" {
			t.Fatalf("%s lists %v", s.url, list)
		}
		st, body = s.do(t, "GET", "/api/v1/sessions/ops/messages", "")
		if st != 200 {
			t.Fatalf("%s: messages: %d %v", s.url, st, body)
		}
		msgs, _ := body["messages"].([]any)
		var got []string
		for _, m := range msgs {
			m := m.(map[string]any)
			text, _ := m["text"].(string) // an assistant reply, read
			if text == "" {
				text, _ = m["content"].(string)
			}
			got = append(got, text)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: the history of ops:\n got %q\nwant %q", s.url, got, want)
		}
	}
	// The inspectors: every turn, whichever replica ran it.
	users := []string{"remember: the code is 42", "what is the code?", "and now?"}
	for _, s := range []*served{a, b} {
		var saw inspect.SawReply
		s.getJSON(t, "GET", "/api/v1/saw/ops?turn=2", 200, &saw)
		if len(saw.Turns) != 3 || saw.Turn.N != 2 || len(saw.Iterations) != 1 || !strings.Contains(saw.Iterations[0].Reply, "answered on b") {
			t.Fatalf("%s: what the model saw in turn 2 (run on b): turns %+v, turn %+v, %d iterations", s.url, saw.Turns, saw.Turn, len(saw.Iterations))
		}
		for i, tr := range saw.Turns {
			if tr.User != users[i] || !tr.Ended {
				t.Errorf("%s: turn %d is %+v, want %q, ended", s.url, i+1, tr, users[i])
			}
		}
		sent := false
		for _, m := range saw.Iterations[0].Messages {
			sent = sent || strings.Contains(m.Content, "remember: the code is 42")
		}
		if !sent {
			t.Errorf("%s: turn 2's request lacks a's turn: %+v", s.url, saw.Iterations[0].Messages)
		}
		s.getJSON(t, "GET", "/api/v1/saw/ops?turn=1", 200, &saw)
		if len(saw.Iterations) != 1 || !strings.Contains(saw.Iterations[0].Reply, "noted on a") {
			t.Fatalf("%s: turn 1 (run on a): %+v", s.url, saw.Iterations)
		}
		var w inspect.WiringReply
		s.getJSON(t, "GET", "/api/v1/wiring/ops?turn=2", 200, &w)
		if w.Turn.N != 2 || len(w.Hooks) == 0 {
			t.Fatalf("%s: the wiring of turn 2 (run on b): turn %+v, %d hook rows", s.url, w.Turn, len(w.Hooks))
		}
	}
	if st, _ := b.do(t, "GET", "/api/v1/saw/no-such-session", ""); st != 404 {
		t.Errorf("an unknown session through b's inspector: %d, want 404", st)
	}
}
