package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/scaffold/a0port"
	"github.com/exocortex/exocortex/sdk/sdktest"
	"github.com/ollama/ollama/api"
)

// taskHost is portedHost with the plugins' stderr (their log) written to log.
func taskHost(t *testing.T, home string, log *syncBuf) *host.Host {
	t.Helper()
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	h, err := host.New(context.Background(), host.Options{
		Dirs: []discover.Dir{{Path: filepath.Join(home, "plugins"), Source: discover.User}},
		Builtins: []discover.Candidate{{Name: "agent-tools", Path: exe + " plugin serve agent-tools",
			Command: []string{exe, "plugin", "serve", "agent-tools"}, WorkDir: filepath.Dir(exe),
			Dir: discover.Dir{Path: "(built in)", Source: discover.Builtin}}},
		PluginEnv:     pluginEnv(t, home, t.TempDir()),
		PluginLog:     log,
		WatchDebounce: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// newestBlock is the last message content of a model request holding marker
// (the blocks sent earlier stay pinned in the history, as sent).
func newestBlock(msgs []api.Message, marker string) string {
	var out string
	for _, m := range msgs {
		if i := strings.LastIndex(m.Content, marker); i >= 0 {
			out = strings.SplitN(m.Content[i:], "\n", 2)[0]
		}
	}
	return out
}

// TestPortedTasksLiveAcrossHookCalls ports testdata/a0tasks, Agent Zero files of
// our own that start asyncio tasks at monologue_start and keep them in agent
// data (a recall search that asks the utility model after its hook returned,
// a count, a sweep that never ends), then await one
// (message_loop_prompts_after/_50_await_recall.py) and poll the other's
// task.done() (_60_poll_count.py) at a later hook, and runs it in a real plugin
// process on the real host with the scripted model: the awaited result and the
// polled one reach the model, in both monologues of a session. Then a ported
// file is edited mid-task: hot reload stops the old process, whose log names
// the pending tasks it cancelled and has no "Task was destroyed but it is
// pending"; the new process starts the tasks again and the edited file's text
// reaches the model.
func TestPortedTasksLiveAcrossHookCalls(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "plugins", "a0-tasks")
	r, err := a0port.Port(t.Context(), "testdata/a0tasks", dir, "a0-tasks")
	if err != nil {
		t.Fatal(err)
	}
	log := &syncBuf{}
	h := taskHost(t, home, log)
	if err := h.Watch(t.Context()); err != nil {
		t.Fatal(err)
	}
	utility := []scripted.Reply{{Content: "q1", ExpectContains: "A0-TASK-QUERY"}, {Content: "q2", ExpectContains: "A0-TASK-QUERY"}, {Content: "q3", ExpectContains: "A0-TASK-QUERY"}}
	srv, usrv, a := agentWithUtility(t, h, nil, utility, []scripted.Reply{{Content: answer}, {Content: answer}, {Content: answer}})
	ctx := context.Background()
	for _, msg := range []string{"first", "second"} {
		if _, err := a.Monologue(ctx, msg); err != nil {
			st, _ := json.Marshal(h.Status())
			t.Fatalf("monologue %q: %v\nplugins: %s\nlog:\n%s", msg, err, st, log.String())
		}
	}
	file := filepath.Join(dir, "a0/extensions/python/message_loop_prompts_after/_60_poll_count.py")
	code, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(code), `"A0-POLL `, `"A0-POLL edited, `, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the edit's hot reload", func() bool {
		for _, st := range h.Status() {
			if st.Name == "a0-tasks" && (st.Pending != "" || st.Reloads > 0) {
				return true
			}
		}
		return false
	})
	if _, err := a.Monologue(ctx, "third"); err != nil {
		t.Fatalf("monologue after the reload: %v\nlog:\n%s", err, log.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	tests := []struct {
		req          int
		marker, want string
	}{
		{0, "A0-TASK", "A0-TASK-RECALLED by the task monologue_start started, query q1"},
		{0, "A0-POLL", "A0-POLL done, counted 42; sweep running=True"},
		{1, "A0-TASK", "A0-TASK-RECALLED by the task monologue_start started, query q1"},
		{1, "A0-POLL", "A0-POLL done, counted 42; sweep running=True"},
		{2, "A0-TASK", "A0-TASK-RECALLED by the task monologue_start started, query q2"},
		{2, "A0-POLL", "A0-POLL edited, done, counted 42; sweep running=True"},
	}
	for _, tt := range tests {
		if got := newestBlock(reqs[tt.req].Messages, tt.marker); got != tt.want {
			t.Errorf("request %d: %s block %q, want %q", tt.req+1, tt.marker, got, tt.want)
		}
	}
	// The task's utility calls ran after the hook that started it had returned:
	// one per process (the second monologue awaits the task the first one left).
	if f := usrv.Failures(); len(f) > 0 || usrv.Remaining() != 1 {
		t.Errorf("utility model: failures %v, %d replies left, want 1 (one call per plugin process)", f, usrv.Remaining())
	}
	logs := log.String()
	for _, want := range []string{"cancelled", "pending task(s)", "StartRecall.sweep_forever (started by extension \"a0_start_recall\" at monologue_start)"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the old process's log lacks %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "destroyed but it is pending") {
		t.Errorf("the log has asyncio's pending-task noise:\n%s", logs)
	}
	// The port says where a task is kept in agent data declared as shared state.
	var notes []string
	for _, f := range r.Files {
		notes = append(notes, f.Notes...)
	}
	for _, field := range []string{"recall_task", "sweep_task", "count_task"} {
		if !strings.Contains(strings.Join(notes, "\n"), `agent data "`+field+`" holds an asyncio task`) {
			t.Errorf("the porting report does not say %s holds a task:\n%s", field, strings.Join(notes, "\n"))
		}
	}
}
