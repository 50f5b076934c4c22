package main

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeFinishesARunningTurnOnSIGTERM: a turn under way when serve is
// told to stop still gets its answer; then the process ends cleanly.
func TestServeFinishesARunningTurnOnSIGTERM(t *testing.T) {
	s := startServe(t, serveBinary(t), `model: scripted
replies:
  - content: '{"thoughts":["slow"],"tool_name":"response","tool_args":{"text":"finished despite the stop"}}'
    chunk_size: 4
    delay: 40ms
`, "", nil)
	type answer struct {
		status int
		body   map[string]any
	}
	mkSession(t, s, "slow")
	got := make(chan answer, 1)
	go func() {
		st, b := s.do(t, "POST", "/api/api_message", `{"message":"take your time","context_id":"slow"}`)
		got <- answer{st, b}
	}()
	waitFor(t, "the turn to start", func() bool {
		_, body := s.do(t, "GET", "/api/api_log_get?context_id=slow", "")
		log, _ := body["log"].(map[string]any)
		return log != nil && log["progress_active"] == true
	})
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-got:
		if a.status != 200 || a.body["response"] != "finished despite the stop" {
			t.Fatalf("the running turn after SIGTERM: %d %v\nstderr:\n%s", a.status, a.body, s.log())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("no answer within 60s of SIGTERM; stderr:\n%s", s.log())
	}
}

// TestServeSessionLifetime: a session idle past its lifetime_hours ends.
func TestServeSessionLifetime(t *testing.T) {
	s := startServe(t, serveBinary(t), `model: scripted
replies:
  - content: '{"thoughts":["a"],"tool_name":"response","tool_args":{"text":"short-lived"}}'
`, "", nil)
	// 0.0003 hours is about a second.
	st, body := s.do(t, "POST", "/api/api_message", `{"message":"hi","lifetime_hours":0.0003}`)
	ctxID, _ := body["context_id"].(string)
	if st != 200 || body["response"] != "short-lived" {
		t.Fatalf("api_message: %d %v", st, body)
	}
	if st, _ := s.do(t, "GET", "/api/api_log_get?context_id="+ctxID, ""); st != 200 {
		t.Fatalf("the log within the lifetime: %d", st)
	}
	waitFor(t, "the session to expire", func() bool {
		st, body := s.do(t, "GET", "/api/api_log_get?context_id="+ctxID, "")
		return st == 404 && strings.Contains(body["error"].(string), "Context not found")
	})
	if st, body := s.do(t, "POST", "/api/api_message", `{"message":"bad","lifetime_hours":-1}`); st != 400 || !strings.Contains(body["error"].(string), "lifetime_hours") {
		t.Errorf("a negative lifetime: %d %v", st, body)
	}
}
