package main

import (
	"strings"
	"testing"
)

const tasksScript = `model: scripted
replies:
  - content: '{"thoughts":["greet"],"tool_name":"hello_time","tool_args":{"name":"task"}}'
  - content: '{"thoughts":["answer"],"tool_name":"response","tool_args":{"text":"task result"}}'
  - content: '{"thoughts":["list"],"tool_name":"shell_echo","tool_args":{"cmd":"ls"}}'
  - content: '{"thoughts":["list"],"tool_name":"shell_echo","tool_args":{"cmd":"ls -l"}}'
`

// TestServeLongTasks: a task answers at once with its id and is polled to
// its result with its progress; one is cancelled while it waits for an
// approval; one running at a restart is interrupted; all three are found
// again by a new serve over the same home.
func TestServeLongTasks(t *testing.T) {
	exe := serveBinary(t)
	plugins := map[string]string{
		"hello": serveBuild(t, "github.com/exocortex/exocortex/examples/hello"),
		"gate":  serveBuild(t, "github.com/exocortex/exocortex/tui/testdata/gate"),
	}
	config := "serve:\n  shutdown_timeout: 1s\n"
	s := startServe(t, exe, tasksScript, config, plugins, "EXOCORTEX_API_KEY=admin-key")
	key := []string{"X-API-KEY", "admin-key"}
	start := func(body string) string {
		t.Helper()
		st, out := s.do(t, "POST", "/api/v1/tasks", body, key...)
		id, _ := out["task_id"].(string)
		if st != 202 || id == "" || out["status"] != "queued" {
			t.Fatalf("POST /api/v1/tasks %s: %d %v", body, st, out)
		}
		return id
	}
	task := func(s *served, id string) map[string]any {
		t.Helper()
		st, out := s.do(t, "GET", "/api/v1/tasks/"+id, "", key...)
		if st != 200 {
			t.Fatalf("GET task %s: %d %v", id, st, out)
		}
		return out
	}
	if st, out := s.do(t, "POST", "/api/v1/tasks", `{"session":"x"}`, key...); st != 400 || out["error"].(map[string]any)["field"] != "message" {
		t.Errorf("a task without a message: %d %v", st, out)
	}
	if st, _ := s.do(t, "GET", "/api/v1/tasks/nope", "", key...); st != 404 {
		t.Errorf("an unknown task: %d", st)
	}

	done := start(`{"message":"greet someone","session":"work"}`)
	waitFor(t, "the task to finish", func() bool { return task(s, done)["status"] == "done" })
	got := task(s, done)
	progress, _ := got["progress"].([]any)
	if got["result"] != "task result" || got["session"] != "work" || len(progress) != 2 || progress[0] != "using hello_time" {
		t.Errorf("the finished task: %v", got)
	}

	cancelled := start(`{"message":"list the files","session":"work2"}`)
	waitFor(t, "the task's held call", func() bool {
		_, out := s.do(t, "GET", "/api/v1/approvals?session=work2", "", key...)
		list, _ := out["approvals"].([]any)
		return len(list) == 1
	})
	if st, out := s.do(t, "DELETE", "/api/v1/tasks/"+cancelled, "", key...); st != 200 || out["status"] != "cancelled" {
		t.Fatalf("DELETE: %d %v", st, out)
	}
	waitFor(t, "the cancelled task's approval to go", func() bool {
		_, out := s.do(t, "GET", "/api/v1/approvals?session=work2", "", key...)
		list, _ := out["approvals"].([]any)
		return len(list) == 0
	})

	interrupted := start(`{"message":"list them again","session":"work3"}`)
	waitFor(t, "the third task's held call", func() bool {
		_, out := s.do(t, "GET", "/api/v1/approvals?session=work3", "", key...)
		list, _ := out["approvals"].([]any)
		return len(list) == 1
	})
	s.stop(t)

	s2 := startServeIn(t, s.home, exe, tasksScript, config, plugins, "EXOCORTEX_API_KEY=admin-key")
	for id, want := range map[string]string{done: "done", cancelled: "cancelled", interrupted: "interrupted"} {
		got := task(s2, id)
		if got["status"] != want {
			t.Errorf("task %s after the restart: %v, want %s", id, got, want)
		}
		if want == "interrupted" && !strings.Contains(got["error"].(string), "POST /api/v1/tasks") {
			t.Errorf("the interrupted task says %q", got["error"])
		}
	}
	if got := task(s2, done); got["result"] != "task result" {
		t.Errorf("the finished task's result after the restart: %v", got)
	}
	st, out := s2.do(t, "GET", "/api/v1/tasks?session=work", "", key...)
	if list, _ := out["tasks"].([]any); st != 200 || len(list) != 1 {
		t.Errorf("the tasks of session work: %d %v", st, out)
	}
}
