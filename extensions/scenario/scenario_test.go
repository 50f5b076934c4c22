package scenario

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/extensions/builtin"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/sdk/sdktest"
	"github.com/exocortex/exocortex/signals"
)

// env is a home directory and a project directory for one scenario, with a
// config.yaml that confines the tools to the project.
type env struct {
	exe, home, proj string
}

func newEnv(t *testing.T) env {
	t.Helper()
	e := env{exe: sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex"), home: t.TempDir(), proj: t.TempDir()}
	cfg := fmt.Sprintf("unusable_limit: 10\ntools:\n  editor:\n    roots: [%q]\n  code_execution:\n    work_dir: %q\n", e.proj, e.proj)
	if err := os.WriteFile(filepath.Join(e.home, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// pluginSettings is the plugin settings entry the host sends the built-ins
// for home's config.yaml and proj, as exocortex does (app.hostOptions): the
// tools read their settings from it, never from config.yaml.
func pluginSettings(tb testing.TB, home, proj string) []string {
	tb.Helper()
	cfg, err := config.Load(home)
	if err != nil {
		tb.Fatal(err)
	}
	entry, err := cfg.PluginSettingsEnv(home, proj)
	if err != nil {
		tb.Fatal(err)
	}
	return []string{entry}
}

func (e env) write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(e.proj, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs `exocortex run --json` with a script of replies (YAML content
// strings) and returns its events; the run's own error is returned, not fatal.
func (e env) run(t *testing.T, prompt string, replies ...string) ([]loop.Event, error) {
	t.Helper()
	var script strings.Builder
	script.WriteString("model: scenario\nreplies:\n")
	for _, r := range replies {
		script.WriteString("  - " + r + "\n")
	}
	sp := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(sp, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(e.exe, "run", "-p", prompt, "--json", "--model", "script:"+sp)
	cmd.Dir = e.proj
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+e.home, "EXOCORTEX_PROJECT="+e.proj)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var evs []loop.Event
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev loop.Event
		if jerr := json.Unmarshal(sc.Bytes(), &ev); jerr != nil {
			t.Fatalf("not an event: %q", sc.Text())
		}
		evs = append(evs, ev)
	}
	for _, ev := range evs {
		if ev.Type == loop.EventHook && ev.Error != "" {
			t.Errorf("extension %s failed at %s: %s", ev.Extension, ev.Hook, ev.Error)
		}
	}
	if err != nil {
		err = fmt.Errorf("%w\nstderr:\n%s", err, stderr.String())
	}
	return evs, err
}

func reply(tool string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"thoughts": []string{"next step"}, "headline": "working", "tool_name": tool, "tool_args": args})
	// A YAML mapping with the content as a single-quoted scalar.
	return "content: '" + strings.ReplaceAll(string(b), "'", "''") + "'"
}

func expecting(r, text string) string {
	return r + "\n    expect_contains: '" + strings.ReplaceAll(text, "'", "''") + "'"
}

func of(evs []loop.Event, typ string) []loop.Event {
	var out []loop.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// TestLoopIsEscalatedThenStopped: a model that repeats itself gets the tier 1,
// 2 and 3 interventions and is then stopped by the supervisor.
func TestLoopIsEscalatedThenStopped(t *testing.T) {
	e := newEnv(t)
	r := reply("code_execution", map[string]any{"runtime": "terminal", "code": "echo hi"})
	evs, err := e.run(t, "Say hi from the shell.", r, r, r, r, r, r)
	if err == nil {
		t.Fatal("the run ended normally; want the supervisor's stop")
	}
	var tiers []string
	repeats := 0
	for _, s := range of(evs, loop.EventSignal) {
		switch s.Signal {
		case signals.Intervention:
			tiers = append(tiers, s.Text)
		case signals.Repeat:
			repeats++
		}
	}
	if len(tiers) != 3 || repeats != 4 {
		t.Fatalf("interventions %q, %d repeats; want three tiers and four repeats", tiers, repeats)
	}
	for i, text := range tiers {
		if !strings.Contains(text, fmt.Sprintf("tier %d", i+1)) {
			t.Errorf("intervention %d: %q", i+1, text)
		}
	}
	ends := of(evs, loop.EventMonologueEnd)
	if len(ends) != 1 || !strings.HasPrefix(ends[0].StopReason, "extension:supervisor_loop:") || ends[0].Iteration != 5 {
		t.Fatalf("end %+v", ends)
	}
}

// TestFailureIsDiagnosedAndAdviceReachesThePrompt: a failing tool call is
// classified, and the next model call is shown the diagnosis and what to do.
func TestFailureIsDiagnosedAndAdviceReachesThePrompt(t *testing.T) {
	e := newEnv(t)
	evs, err := e.run(t, "Read missing.txt and tell me what it says.",
		reply("text_editor", map[string]any{"action": "read", "path": "missing.txt"}),
		expecting(reply("code_execution", map[string]any{"runtime": "terminal", "code": "ls"}), "Do: list the directory to find the right name"),
		reply("response", map[string]any{"text": "missing.txt does not exist."}))
	if err != nil {
		t.Fatal(err)
	}
	var diagnosed bool
	for _, ev := range of(evs, loop.EventHook) {
		if ev.Extension == "error_comprehension" && ev.Iteration == 1 && strings.Contains(strings.Join(ev.Writes, ","), "error_diagnosis") {
			diagnosed = true
		}
	}
	if !diagnosed {
		t.Fatal("error_comprehension did not write error_diagnosis in iteration 1")
	}
}

// TestDestructiveCommandIsDeniedWithoutOperator: `run` has no operator, so a
// tier-4 command is held and denied, and never runs.
func TestDestructiveCommandIsDeniedWithoutOperator(t *testing.T) {
	e := newEnv(t)
	marker := e.write(t, "keep.txt", "precious")
	evs, err := e.run(t, "Clean up this directory.",
		reply("code_execution", map[string]any{"runtime": "terminal", "code": "rm -rf *"}),
		reply("response", map[string]any{"text": "The cleanup needs your approval."}))
	if err != nil {
		t.Fatal(err)
	}
	ap := of(evs, loop.EventApproval)
	if len(ap) != 1 || ap[0].Text != "rm -rf *" || !strings.HasPrefix(ap[0].Result, "deny") || ap[0].Extension != "action_boundary" {
		t.Fatalf("approvals %+v", ap)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the held command ran: %v", err)
	}
	blocked := false
	for _, s := range of(evs, loop.EventSignal) {
		if s.Signal == signals.ToolBlocked {
			blocked = true
		}
	}
	if !blocked {
		t.Fatal("the model was not told the call was blocked")
	}
}

// TestDestructiveCommandRunsWhenAllowed drives the loop with an operator who
// allows the held call: it runs, and its success clears the action gate.
func TestDestructiveCommandRunsWhenAllowed(t *testing.T) {
	e := newEnv(t)
	marker := e.write(t, "junk.txt", "junk")
	t.Setenv("EXOCORTEX_HOME", e.home)
	t.Setenv("EXOCORTEX_PROJECT", e.proj)
	var cands []discover.Candidate
	for _, name := range builtin.Names() {
		cands = append(cands, discover.Candidate{Name: name, Path: e.exe + " plugin serve " + name, Command: []string{e.exe, "plugin", "serve", name},
			WorkDir: e.proj, Dir: discover.Dir{Path: "(built in)", Source: discover.Builtin}})
	}
	h, err := host.New(context.Background(), host.Options{Builtins: cands, PluginEnv: pluginSettings(t, e.home, e.proj)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv, err := scripted.NewServer(scripted.Script{Replies: []scripted.Reply{
		{Content: `{"tool_name":"code_execution","tool_args":{"runtime":"terminal","code":"rm -rf *"}}`},
		{Content: `{"tool_name":"response","tool_args":{"text":"Cleaned up."}}`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := llm.New(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	var asked []loop.Approval
	var evs []loop.Event
	a, err := loop.New(loop.Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(),
		Approver: loop.ApproverFunc(func(_ context.Context, req loop.Approval) (loop.Decision, error) {
			asked = append(asked, req)
			return loop.AllowOnce, nil
		}),
		Observer: func(ev loop.Event) { evs = append(evs, ev) },
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Monologue(context.Background(), "Clean up this directory.")
	if err != nil {
		t.Fatal(err)
	}
	if res.Response != "Cleaned up." || len(asked) != 1 || asked[0].Action != "rm -rf *" || !strings.Contains(asked[0].Reason, "tier 4") {
		t.Fatalf("response %q, asked %+v", res.Response, asked)
	}
	if ap := of(evs, loop.EventApproval); len(ap) != 1 || !strings.HasPrefix(ap[0].Result, "allow_once") {
		t.Fatalf("approval events %+v", ap)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the allowed command did not run: %v", err)
	}
	if _, ok := a.State().Get("action_gate_active"); ok {
		t.Fatal("action_gate_active is still set after the allowed call succeeded")
	}
}

// TestClaimWithoutEvidenceIsFlagged: an answer stating a number no tool
// produced is reported to the operator.
func TestClaimWithoutEvidenceIsFlagged(t *testing.T) {
	e := newEnv(t)
	evs, err := e.run(t, "How many Go files are in the repository?",
		reply("response", map[string]any{"text": "The repository has 42 Go files."}))
	if err != nil {
		t.Fatal(err)
	}
	ns := of(evs, loop.EventNotice)
	if len(ns) != 1 || !strings.Contains(ns[0].Text, "epistemic_integrity") || !strings.Contains(ns[0].Text, "no tool output shows 42") {
		t.Fatalf("notices %+v", ns)
	}
}

// TestWriteIsBackedUpAndTruncationCaught: a text_editor write that cuts a JSON
// file short is caught, the model is told, and restore_backup brings the file
// back from the write guard's backup.
func TestWriteIsBackedUpAndTruncationCaught(t *testing.T) {
	e := newEnv(t)
	orig := "{\"name\": \"demo\", \"items\": [1, 2, 3]}\n"
	path := e.write(t, "config.json", orig)
	evs, err := e.run(t, "Add item 4 to config.json.",
		reply("text_editor", map[string]any{"action": "write", "path": "config.json", "content": `{"name": "demo", "items": [1, 2`}),
		expecting(reply("restore_backup", map[string]any{"path": "config.json"}), "truncated"),
		reply("response", map[string]any{"text": "I restored config.json after a bad write."}))
	if err != nil {
		t.Fatal(err)
	}
	caught := false
	for _, m := range of(evs, loop.EventMessage) {
		if m.Role == "tool" && m.Tool == "text_editor" && strings.Contains(m.Text, "write_validator") && strings.Contains(m.Text, "truncated") {
			caught = true
		}
	}
	if !caught {
		t.Fatal("the model was not told the write was truncated")
	}
	if b, _ := os.ReadFile(path); string(b) != orig {
		t.Fatalf("after restore_backup: %q", b)
	}
	backups, _ := filepath.Glob(filepath.Join(e.home, "backups", "*", "*config.json"))
	if len(backups) == 0 {
		t.Fatal("no backup was taken")
	}
}

// TestDeclarationsAreHonoured runs the suite through the host that sends the
// whole history only to extensions declaring reads_history and calls the tool
// hooks' extensions only for the tools they name in for_tools: the extensions
// that read the history get it (the memorize episode and the insight carry the
// operator's message), those that use the recent messages still find it (the
// profile folds it, recall searches with it), and the write guard, write
// validator and code-quality gate run only for their tools.
func TestDeclarationsAreHonoured(t *testing.T) {
	e := newEnv(t)
	const prompt = "Call me Sam. I want to know how many files are here, and keep a note of it."
	evs, err := e.run(t, prompt,
		reply("code_execution", map[string]any{"runtime": "terminal", "code": "ls | wc -l"}),
		reply("text_editor", map[string]any{"action": "write", "path": "note.txt", "content": "0 files\n"}),
		reply("response", map[string]any{"text": "There are no files; I wrote that to note.txt."}))
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string][]int{}
	wrote := map[string]bool{}
	for _, ev := range of(evs, loop.EventHook) {
		if ev.Skipped {
			continue
		}
		calls[ev.Extension+"@"+ev.Hook] = append(calls[ev.Extension+"@"+ev.Hook], ev.Iteration)
		for _, k := range ev.Writes {
			wrote[ev.Extension+":"+k] = true
		}
	}
	for ext, want := range map[string][]int{
		"write_guard@tool_execute_before":      {2},
		"write_validator@tool_execute_after":   {2},
		"code_quality_gate@tool_execute_after": {1},
		// Extensions without for_tools see every tool call, the response too.
		"evidence_ledger_recorder@tool_execute_after": {1, 2, 3},
	} {
		if got := calls[ext]; !slices.Equal(got, want) {
			t.Errorf("%s ran in iterations %v, want %v", ext, got, want)
		}
	}
	for _, w := range []string{"operator_profile:operator_profile", "recall_search:memory_candidates"} {
		if !wrote[w] {
			t.Errorf("%s was not written: the extension did not find the operator's message", w)
		}
	}
	data, err := os.ReadFile(filepath.Join(e.home, "staging.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var episode, insight bool
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct {
			Kind    string          `json:"kind"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("staging.jsonl: %v: %q", err, line)
		}
		switch p := string(rec.Payload); rec.Kind {
		case "memorize":
			episode = strings.Contains(p, `"user":"Call me Sam.`)
		case "insight":
			insight = insight || strings.Contains(p, `"source":"operator"`) && strings.Contains(p, "I want to know")
		}
	}
	if !episode || !insight {
		t.Fatalf("memorize episode with the operator's message: %v, operator insight: %v\n%s", episode, insight, data)
	}
}

// TestDeniedCommandLeavesNoGate: a destructive command the operator denies is
// not run, the model is told, and action_gate_active does not outlive the
// iteration (it used to stay set until the next passing call).
func TestDeniedCommandLeavesNoGate(t *testing.T) {
	e := newEnv(t)
	marker := e.write(t, "keep.txt", "keep")
	t.Setenv("EXOCORTEX_HOME", e.home)
	t.Setenv("EXOCORTEX_PROJECT", e.proj)
	var cands []discover.Candidate
	for _, name := range builtin.Names() {
		cands = append(cands, discover.Candidate{Name: name, Path: e.exe + " plugin serve " + name, Command: []string{e.exe, "plugin", "serve", name},
			WorkDir: e.proj, Dir: discover.Dir{Path: "(built in)", Source: discover.Builtin}})
	}
	h, err := host.New(context.Background(), host.Options{Builtins: cands, PluginEnv: pluginSettings(t, e.home, e.proj)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv, err := scripted.NewServer(scripted.Script{Replies: []scripted.Reply{
		{Content: `{"tool_name":"code_execution","tool_args":{"runtime":"terminal","code":"rm -rf *"}}`},
		{Content: `{"tool_name":"response","tool_args":{"text":"I left the files alone."}}`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := llm.New(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	var evs []loop.Event
	a, err := loop.New(loop.Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(),
		Approver: loop.ApproverFunc(func(context.Context, loop.Approval) (loop.Decision, error) { return loop.Deny, nil }),
		Observer: func(ev loop.Event) { evs = append(evs, ev) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Monologue(context.Background(), "Clean up this directory."); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the denied command ran: %v", err)
	}
	var told bool
	for _, ev := range of(evs, loop.EventSignal) {
		told = told || ev.Signal == signals.ToolBlocked
	}
	if !told {
		t.Error("the model was not told the call was blocked")
	}
	if _, ok := a.State().Get("action_gate_active"); ok {
		t.Fatal("action_gate_active is still set after the denied call's iteration")
	}
}
