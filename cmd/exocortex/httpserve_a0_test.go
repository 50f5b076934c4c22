package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/session"
)

// a0Script answers the Agent Zero test's three messages; the second proves
// the first is in its history (a continuation), the third that the agent was
// told where the attachment is.
const a0Script = `model: scripted
replies:
  - content: '{"thoughts":["greet"],"tool_name":"response","tool_args":{"text":"first answer"}}'
  - content: '{"thoughts":["go on"],"tool_name":"response","tool_args":{"text":"second answer"}}'
  - content: '{"thoughts":["read"],"tool_name":"response","tool_args":{"text":"got the notes"}}'
`

// TestServeAgentZeroAPIWithCurl drives the Agent Zero API as its clients do,
// with curl: a message, its continuation, an attachment, the log, the files,
// a reset and the end of the chat, with the errors Agent Zero answers.
func TestServeAgentZeroAPIWithCurl(t *testing.T) {
	s := startServe(t, serveBinary(t), a0Script, "serve:\n  max_body_bytes: 4096\n", nil,
		"EXOCORTEX_API_KEY=admin-key", "EXOCORTEX_AGENT_KEY=agent-key")
	post := func(path, body string, hdr ...string) (int, map[string]any) {
		args := []string{"-X", "POST", s.url + path, "-H", "Content-Type: application/json", "-d", body}
		for i := 0; i+1 < len(hdr); i += 2 {
			args = append(args, "-H", hdr[i]+": "+hdr[i+1])
		}
		return curl(t, args...)
	}
	agent := []string{"X-API-KEY", "agent-key"}
	admin := []string{"X-API-KEY", "admin-key"}
	wantErr := func(what string, status int, body map[string]any, wantStatus int, msg string) {
		t.Helper()
		got, _ := body["error"].(string)
		if status != wantStatus || !strings.Contains(got, msg) {
			t.Errorf("%s: %d %v, want %d with error %q", what, status, body, wantStatus, msg)
		}
	}

	st, body := post("/api/api_message", `{"message":"hi"}`)
	wantErr("no key", st, body, 401, "API key required")
	st, body = post("/api/api_message", `{"message":"hi"}`, "X-API-KEY", "wrong")
	wantErr("wrong key", st, body, 401, "Invalid API key")
	st, body = post("/api/api_message", `{"context_id":""}`, agent...)
	wantErr("no message", st, body, 400, "Message is required")
	st, body = post("/api/api_message", `{"message":5}`, agent...)
	wantErr("message a number", st, body, 400, `field "message"`)
	st, body = post("/api/api_message", `{"message":`, agent...)
	wantErr("malformed body", st, body, 400, "not valid JSON")
	st, body = post("/api/api_message", `{"message":"`+strings.Repeat("x", 5000)+`"}`, agent...)
	wantErr("oversized body", st, body, 413, "over 4096 bytes")
	st, body = post("/api/api_message", `{"message":"hi","context_id":"no-such-chat"}`, agent...)
	wantErr("unknown context", st, body, 404, "Context not found")

	// A message, and its continuation with the key in the body.
	st, body = post("/api/api_message", `{"message":"first question","lifetime_hours":1}`, agent...)
	ctxID, _ := body["context_id"].(string)
	if st != 200 || body["response"] != "first answer" || ctxID == "" {
		t.Fatalf("api_message: %d %v\nstderr:\n%s", st, body, s.log())
	}
	st, body = post("/api/api_message", `{"message":"and then?","context_id":"`+ctxID+`","api_key":"agent-key"}`)
	if st != 200 || body["response"] != "second answer" || body["context_id"] != ctxID {
		t.Fatalf("continuation: %d %v", st, body)
	}
	// An attachment lands in the session's files, and comes back from api_files_get.
	notes := "remember the milk\n"
	st, body = post("/api/api_message", `{"message":"read my notes","context_id":"`+ctxID+`","attachments":[{"filename":"notes.txt","base64":"`+
		base64.StdEncoding.EncodeToString([]byte(notes))+`"}]}`, agent...)
	if st != 200 || body["response"] != "got the notes" {
		t.Fatalf("attachment: %d %v", st, body)
	}
	saved := filepath.Join(s.home, "sessions", ctxID+".files", "notes.txt")
	if b, err := os.ReadFile(saved); err != nil || string(b) != notes {
		t.Fatalf("the attachment in %s: %q, %v", saved, b, err)
	}
	// The agent was told where it is: the message in the session's history says so.
	if hist, err := os.ReadFile(filepath.Join(s.home, "sessions", ctxID+".jsonl")); err != nil || !strings.Contains(string(hist), saved) {
		t.Errorf("the session's history does not name the attachment %s (%v)", saved, err)
	}
	st, body = post("/api/api_files_get", `{"paths":["`+saved+`"]}`, agent...)
	if got, _ := body["notes.txt"].(string); st != 200 || got != base64.StdEncoding.EncodeToString([]byte(notes)) {
		t.Errorf("api_files_get of the attachment: %d %v", st, body)
	}
	st, body = post("/api/api_files_get", `{"paths":["notes.txt"],"context_id":"`+ctxID+`"}`, agent...)
	if st != 200 || body["notes.txt"] == nil {
		t.Errorf("api_files_get of a relative path: %d %v", st, body)
	}
	for _, p := range []string{"/etc/passwd", "../" + ctxID + ".jsonl", filepath.Join(s.home, "config.yaml")} {
		st, body = post("/api/api_files_get", `{"paths":["`+p+`"],"context_id":"`+ctxID+`"}`, agent...)
		wantErr("api_files_get "+p, st, body, 403, `path "`+p+`" is refused`)
	}
	st, body = post("/api/api_files_get", `{"paths":"notes.txt"}`, agent...)
	wantErr("paths not an array", st, body, 400, "paths must be an array")

	// The session is the terminal's: listed under the home's sessions.
	infos, err := session.List(filepath.Join(s.home, "sessions"))
	if err != nil || len(infos) != 1 || infos[0].Name != ctxID {
		t.Errorf("the terminal's sessions: %v, %v; want %s", infos, err, ctxID)
	}

	// The log, by GET and by POST, at /api/NAME and the older /NAME.
	st, body = curl(t, s.url+"/api/api_log_get?context_id="+ctxID+"&length=2", "-H", "X-API-KEY: agent-key")
	log, _ := body["log"].(map[string]any)
	items, _ := log["items"].([]any)
	if st != 200 || log["total_items"] != float64(6) || log["returned_items"] != float64(2) || log["start_position"] != float64(4) || len(items) != 2 {
		t.Fatalf("api_log_get: %d %v", st, body)
	}
	last, _ := items[1].(map[string]any)
	if last["type"] != "response" || last["content"] != "got the notes" || last["no"] != float64(5) {
		t.Errorf("the last log item: %v", last)
	}
	st, body = post("/api_log_get", `{"context_id":"`+ctxID+`"}`, agent...)
	if log, _ := body["log"].(map[string]any); st != 200 || log["total_items"] != float64(6) || log["progress_active"] != false {
		t.Errorf("POST /api_log_get: %d %v", st, body)
	}
	st, body = post("/api/api_log_get", `{}`, agent...)
	wantErr("api_log_get without context_id", st, body, 400, "context_id is required")

	// Reset and terminate delete: the agent key may not.
	st, body = post("/api/api_reset_chat", `{"context_id":"`+ctxID+`"}`, agent...)
	wantErr("reset with the agent key", st, body, 403, "needs the admin role")
	st, body = post("/api/api_reset_chat", `{"context_id":"`+ctxID+`"}`, admin...)
	if st != 200 || body["success"] != true || body["message"] != "Chat reset successfully" || body["context_id"] != ctxID {
		t.Fatalf("reset: %d %v", st, body)
	}
	st, body = post("/api/api_log_get", `{"context_id":"`+ctxID+`"}`, agent...)
	if log, _ := body["log"].(map[string]any); st != 200 || log["total_items"] != float64(0) {
		t.Errorf("the log after a reset: %d %v", st, body)
	}
	st, body = post("/api_terminate_chat", `{"context_id":"`+ctxID+`"}`, admin...)
	if st != 200 || body["success"] != true || body["message"] != "Chat deleted successfully" {
		t.Fatalf("terminate: %d %v", st, body)
	}
	st, body = post("/api/api_log_get", `{"context_id":"`+ctxID+`"}`, agent...)
	wantErr("the log after terminate", st, body, 404, "Context not found")
	st, body = post("/api/api_terminate_chat", `{"context_id":"`+ctxID+`"}`, admin...)
	wantErr("terminate twice", st, body, 404, "Chat context not found")
}
