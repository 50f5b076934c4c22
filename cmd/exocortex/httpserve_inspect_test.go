package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/server/inspect"
)

const inspectScript = `model: scripted
replies:
  - content: '{"thoughts":["the runbook"],"tool_name":"response","tool_args":{"text":"in the ops wiki"}}'
  - content: '{"thoughts":["again"],"tool_name":"response","tool_args":{"text":"still the ops wiki"}}'
`

// getJSON GETs path with hdr and decodes the answer into out, failing on a
// status other than want.
func (s *served) getJSON(t *testing.T, method, path string, want int, out any, hdr ...string) {
	t.Helper()
	st, b := s.raw(t, method, path, "", hdr...)
	if st != want {
		t.Fatalf("%s %s: %d, want %d: %s\nstderr:\n%s", method, path, st, want, b, s.log())
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

// recordedFirings reads the hook_done events of the last monologue in a
// session's recording, straight from its events file: the hooks in the
// order they fired.
func recordedFirings(t *testing.T, home, session string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(home, "sessions", session+".replay", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var hooks []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var e loop.Event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Agent != "" {
			continue
		}
		switch e.Type {
		case loop.EventMonologueStart:
			hooks = nil
		case loop.EventHookDone:
			hooks = append(hooks, e.Hook)
		}
	}
	return hooks
}

// TestServeInspectSawWiringPlugins drives the dashboard's inspection routes
// of a real `exocortex serve` (built-in plugins, a plugin that crashes in
// its first call, the scripted model): a memory saved over REST is recalled
// in the turn, and "what the model saw" shows the recall block labelled
// with its extension and hook and the memory with why it was chosen; the
// wiring lists the turn's hooks in the order the recording has them, the
// recall pipeline's state key written and read, the crash as a failure,
// and a budget whose parts fill the window; the plugins show the crash and
// its last error; a reload by the admin key is applied and the agent key is
// refused; bad names and turns are answered 400 and 404.
func TestServeInspectSawWiringPlugins(t *testing.T) {
	crash := serveBuild(t, "github.com/exocortex/exocortex/cmd/exocortex/testdata/crashonce")
	s := startServe(t, serveBinary(t), inspectScript, "", map[string]string{"crashonce": crash},
		"EXOCORTEX_API_KEY=admin-key", "EXOCORTEX_AGENT_KEY=agent-key", "EXOCORTEX_TEST_CRASH_MARKER="+filepath.Join(t.TempDir(), "crashed"))
	agent := []string{"X-API-KEY", "agent-key"}
	admin := []string{"X-API-KEY", "admin-key"}

	const fact = "the deploy runbook lives in the ops wiki under blue-falcon-42"
	if st, body := s.do(t, "POST", "/api/v1/memory", `{"text":"`+fact+`","tags":["ops"]}`, admin...); st != 201 {
		t.Fatalf("saving the memory: %d %v", st, body)
	}
	st, body := s.do(t, "POST", "/api/api_message", `{"message":"where does the deploy runbook live?"}`, agent...)
	session, _ := body["context_id"].(string)
	if st != 200 || body["response"] != "in the ops wiki" || session == "" {
		t.Fatalf("api_message: %d %v\nstderr:\n%s", st, body, s.log())
	}

	// What the model saw.
	var saw inspect.SawReply
	s.getJSON(t, "GET", "/api/v1/saw/"+session, 200, &saw, agent...)
	if len(saw.Turns) != 1 || saw.Turn.N != 1 || !saw.Turn.Ended || len(saw.Iterations) != 1 {
		t.Fatalf("saw: turns %+v, turn %+v, %d iterations", saw.Turns, saw.Turn, len(saw.Iterations))
	}
	it := saw.Iterations[0]
	if it.System == "" || it.Reply == "" || len(it.Messages) == 0 || it.Messages[0].Part != loop.PartSystem {
		t.Fatalf("iteration 1: system %d bytes, reply %q, messages %+v", len(it.System), it.Reply, it.Messages)
	}
	i := slices.IndexFunc(it.Blocks, func(b inspect.Block) bool { return b.Recall })
	if i < 0 {
		t.Fatalf("no recall block among %+v", it.Blocks)
	}
	if b := it.Blocks[i]; b.Extension != "recall" || b.Hook != "message_loop_prompts_after" || b.Plugin == "" || !strings.Contains(b.Content, "blue-falcon-42") {
		t.Fatalf("the recall block is not labelled with its extension, plugin and hook: %+v", b)
	}
	for _, b := range it.Blocks {
		if b.Extension == "" || b.Hook == "" {
			t.Errorf("a block without its extension or hook: %+v", b)
		}
	}
	if len(saw.Recalled) == 0 || !strings.Contains(saw.Recalled[0].Text, "blue-falcon-42") || saw.Recalled[0].Why == "" ||
		saw.Recalled[0].Extension != "recall" || saw.Recalled[0].Hook != "message_loop_prompts_after" {
		t.Fatalf("the recalled memories: %+v", saw.Recalled)
	}

	// The wiring of the last turn.
	var w inspect.WiringReply
	s.getJSON(t, "GET", "/api/v1/wiring/"+session, 200, &w, agent...)
	var got []string
	for i, h := range w.Hooks {
		got = append(got, h.Hook)
		if h.EndUS < h.StartUS || (i > 0 && h.EndUS < w.Hooks[i-1].EndUS) {
			t.Errorf("hook row %d (%s) spans %d..%d after a row ending at %d", i, h.Hook, h.StartUS, h.EndUS, w.Hooks[max(i-1, 0)].EndUS)
		}
		for _, c := range h.Calls {
			if c.Hook != h.Hook || c.Extension == "" || c.Plugin == "" || c.EndUS-c.StartUS != c.DurationUS {
				t.Errorf("a call of row %s: %+v", h.Hook, c)
			}
		}
	}
	if want := recordedFirings(t, s.home, session); len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("the timeline's hooks\n%v\nare not the recorded firings, in order\n%v", got, want)
	}
	for _, h := range []string{"hist_add_before", "message_loop_prompts_after", "tool_execute_before", "message_loop_end", "monologue_end"} {
		if !slices.Contains(got, h) {
			t.Errorf("the timeline lacks %s: %v", h, got)
		}
	}
	k := slices.IndexFunc(w.Keys, func(k inspect.KeyUse) bool { return k.Key == "memory_candidates" })
	if k < 0 || !slices.ContainsFunc(w.Keys[k].WrittenBy, func(s string) bool { return strings.HasSuffix(s, "/recall_search") }) ||
		!slices.ContainsFunc(w.Keys[k].ReadBy, func(s string) bool { return strings.HasSuffix(s, "/recall") }) {
		t.Fatalf("memory_candidates written by recall_search and read by recall: %+v", w.Keys)
	}
	f := slices.IndexFunc(w.Failures, func(c inspect.Call) bool { return c.Plugin == "crashonce" })
	if f < 0 || w.Failures[f].Extension != "crash_once" || w.Failures[f].Error == "" || w.Failures[f].ErrorKind != "crashed" {
		t.Fatalf("the crash is not among the failures: %+v", w.Failures)
	}
	p := slices.IndexFunc(w.Plugins, func(p inspect.PluginHealth) bool { return p.Name == "crashonce" })
	if p < 0 || w.Plugins[p].Crashes < 1 || w.Plugins[p].LastError == "" {
		t.Fatalf("the turn's plugins: %+v", w.Plugins)
	}
	if len(w.Budgets) != 1 {
		t.Fatalf("budgets: %+v", w.Budgets)
	}
	b := w.Budgets[0]
	if b.Fixed <= 0 || b.Recall <= 0 || b.History <= 0 || b.Fixed+b.Blocks+b.Recall+b.History+b.Free+b.Reserve != b.Window ||
		b.Fixed+b.Blocks+b.Recall+b.History != b.Tokens {
		t.Fatalf("the budget's parts do not fill the window: %+v", b)
	}

	// The plugins: the crash and its last error; reload.
	var pl inspect.PluginsReply
	s.getJSON(t, "GET", "/api/v1/plugins", 200, &pl, agent...)
	c := slices.IndexFunc(pl.Plugins, func(p hostStatus) bool { return p.Name == "crashonce" })
	if c < 0 || pl.Plugins[c].Crashes < 1 || pl.Plugins[c].LastError == "" || len(pl.Plugins[c].Extensions) != 1 ||
		pl.Plugins[c].Extensions[0].Hook != "message_loop_end" || pl.Plugins[c].Extensions[0].Order != 900 {
		t.Fatalf("crashonce's status: %+v", pl.Plugins)
	}
	var one hostStatus
	s.getJSON(t, "GET", "/api/v1/plugins/crashonce", 200, &one, agent...)
	if one.LastError != pl.Plugins[c].LastError {
		t.Fatalf("GET /api/v1/plugins/crashonce: %+v", one)
	}
	s.getJSON(t, "POST", "/api/v1/plugins/crashonce/reload", 403, nil, agent...)
	var rl inspect.ReloadReply
	s.getJSON(t, "POST", "/api/v1/plugins/crashonce/reload", 200, &rl, admin...)
	if rl.Plugin != "crashonce" || !rl.Applied || rl.Status == nil || rl.Status.State != "running" {
		t.Fatalf("reload: %+v", rl)
	}

	// A second turn: turn=1 still answers the first, the default the last.
	if st, body := s.do(t, "POST", "/api/api_message", `{"message":"and now?","context_id":"`+session+`"}`, agent...); st != 200 {
		t.Fatalf("second message: %d %v", st, body)
	}
	s.getJSON(t, "GET", "/api/v1/saw/"+session, 200, &saw, agent...)
	if saw.Turn.N != 2 || len(saw.Turns) != 2 {
		t.Fatalf("after the second turn: turn %+v of %+v", saw.Turn, saw.Turns)
	}
	s.getJSON(t, "GET", "/api/v1/saw/"+session+"?turn=1", 200, &saw, agent...)
	if saw.Turn.N != 1 || saw.Turn.User != "where does the deploy runbook live?" {
		t.Fatalf("turn=1: %+v", saw.Turn)
	}

	// The description is served only when every route has its Op.
	var doc struct{ Paths map[string]map[string]any }
	s.getJSON(t, "GET", "/api/v1/openapi.json", 200, &doc)
	for p, m := range map[string]string{"/api/v1/saw/{session}": "get", "/api/v1/wiring/{session}": "get", "/api/v1/plugins": "get",
		"/api/v1/plugins/{name}": "get", "/api/v1/plugins/{name}/reload": "post"} {
		if doc.Paths[p][m] == nil {
			t.Errorf("the OpenAPI description lacks %s %s", m, p)
		}
	}

	for _, tc := range []struct {
		name, method, path string
		status             int
	}{
		{"no key", "GET", "/api/v1/saw/" + session, 401},
		{"a bad session name", "GET", "/api/v1/saw/..%2Fx", 400},
		{"an unknown session", "GET", "/api/v1/wiring/no-such-session", 404},
		{"a turn past the last", "GET", "/api/v1/saw/" + session + "?turn=9", 404},
		{"a turn that is no number", "GET", "/api/v1/wiring/" + session + "?turn=last", 400},
		{"an unknown plugin", "GET", "/api/v1/plugins/nope", 404},
		{"reloading an unknown plugin", "POST", "/api/v1/plugins/nope/reload", 404},
	} {
		hdr := agent
		if tc.method == "POST" {
			hdr = admin
		}
		if tc.status == 401 {
			hdr = nil
		}
		if st, b := s.raw(t, tc.method, tc.path, "", hdr...); st != tc.status {
			t.Errorf("%s: %d, want %d: %s", tc.name, st, tc.status, b)
		}
	}
}

type hostStatus = host.PluginStatus
