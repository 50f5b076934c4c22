package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/prompts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/signals"
)

// fixtureBin is core/host's misbehaving test plugin, built once.
var fixtureBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "exocortex-loop-test")
	if err != nil {
		panic(err)
	}
	fixtureBin = filepath.Join(dir, "fixture")
	if out, err := exec.Command("go", "build", "-o", fixtureBin, "../host/testdata/fixture").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the fixture plugin: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// plugin describes a fixture plugin: its manifest and its behaviours.
type plugin struct {
	name   string
	exts   []*exocortexv1.ExtensionSpec
	tools  []string
	behave map[string]string
}

func writePlugin(t *testing.T, dir string, p plugin) {
	t.Helper()
	m := &exocortexv1.ManifestResponse{Plugin: p.name, Version: "test", Extensions: p.exts}
	for _, tl := range p.tools {
		m.Tools = append(m.Tools, &exocortexv1.ToolSpec{Name: tl, Description: "a fixture tool", Implemented: true})
	}
	pdir := filepath.Join(dir, p.name)
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	mb, _ := protojson.Marshal(m)
	mf := filepath.Join(pdir, "manifest.json")
	if err := os.WriteFile(mf, mb, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := []string{fixtureBin, "-manifest", mf}
	for ext, act := range p.behave {
		cmd = append(cmd, "-behave", ext+"="+act)
	}
	pj, _ := json.Marshal(discover.Manifest{Command: cmd})
	if err := os.WriteFile(filepath.Join(pdir, "plugin.json"), pj, 0o644); err != nil {
		t.Fatal(err)
	}
}

func ext(name string, hook exocortexv1.Hook, order int32) *exocortexv1.ExtensionSpec {
	return &exocortexv1.ExtensionSpec{Name: name, Hook: hook, Order: order}
}

// recorder collects events.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) observe(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) hook(name string) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, e := range r.events {
		if e.Type == EventHook && e.Extension == name {
			out = append(out, e)
		}
	}
	return out
}

func (r *recorder) signals() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Type == EventSignal {
			out = append(out, e.Signal)
		}
	}
	return out
}

type setup struct {
	plugins []plugin
	replies []scripted.Reply
	opts    Options
}

func newAgent(t *testing.T, s setup) (*Agent, *recorder, *scripted.Server) {
	t.Helper()
	return newAgentScript(t, s, scripted.Script{Replies: s.replies})
}

// newAgentScript is newAgent with a whole script (its replies, not s's).
func newAgentScript(t *testing.T, s setup, script scripted.Script) (*Agent, *recorder, *scripted.Server) {
	t.Helper()
	dir := t.TempDir()
	for _, p := range s.plugins {
		writePlugin(t, dir, p)
	}
	h, err := host.New(context.Background(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	script.Source = t.Name()
	srv, err := scripted.NewServer(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, err := llm.New(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	o := s.opts
	o.Host, o.LLM, o.Prompts, o.Model, o.Observer = h, c, prompts.NewLoader(), srv.Model(), rec.observe
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return a, rec, srv
}

func toolReply(tool string) scripted.Reply {
	return scripted.Reply{Content: fmt.Sprintf(`{"thoughts":["t"],"headline":"h","tool_name":%q,"tool_args":{}}`, tool)}
}

// TestRejections: every response a hook or a declaration does not allow is
// refused with an error naming the extension, and changes nothing; the turn
// goes on without the extension.
func TestRejections(t *testing.T) {
	rogue := plugin{
		name: "rogue",
		exts: []*exocortexv1.ExtensionSpec{
			ext("undeclared_write", exocortexv1.Hook_HOOK_MESSAGE_LOOP_START, 10),
			{Name: "wrong_type", Hook: exocortexv1.Hook_HOOK_MESSAGE_LOOP_START, Order: 20, Writes: []string{"failure_tracker"}},
			ext("late_injector", exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL, 17),
			{Name: "hung", Hook: exocortexv1.Hook_HOOK_MESSAGE_LOOP_START, Order: 30, TimeoutMs: 300},
			{Name: "narrow_reader", Hook: exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, Order: 40, Reads: []string{"failure_tracker"}},
		},
		tools: []string{"echo"},
		behave: map[string]string{
			"undeclared_write": "write:loop_active:exocortex.v1.LoopActive",
			"wrong_type":       "write:failure_tracker:exocortex.v1.LoopActive",
			"late_injector":    "inject",
			"hung":             "hang",
		},
	}
	a, rec, srv := newAgent(t, setup{plugins: []plugin{rogue}, replies: []scripted.Reply{toolReply("echo")}, opts: Options{MaxIterations: 1}})
	if err := a.State().Set("loop_active", &exocortexv1.LoopActive{Active: true}); err != nil {
		t.Fatal(err)
	}
	_, err := a.Monologue(context.Background(), "go")
	var stop *StopError
	if !errors.As(err, &stop) || stop.Reason != signals.MaxIterations {
		t.Fatalf("err = %v, want the max-iterations stop (the turn must go on past every rejected extension)", err)
	}
	tests := []struct {
		ext  string
		want string
	}{
		{"undeclared_write", `extension undeclared_write, state key "loop_active": wrote a key it did not declare`},
		{"wrong_type", `wrote a value of type "exocortex.v1.LoopActive", but the key holds exocortex.v1.FailureTracker`},
		{"late_injector", "extension late_injector at before_main_llm_call: returned prompt blocks, but before_main_llm_call fires after the prompt is built"},
		{"hung", "timed_out"},
	}
	for _, tt := range tests {
		evs := rec.hook(tt.ext)
		if len(evs) != 1 || !strings.Contains(evs[0].Error, tt.want) {
			t.Errorf("%s: events %+v\nwant one error containing %q", tt.ext, evs, tt.want)
		}
	}
	if v, ok := a.State().Get("failure_tracker"); ok {
		t.Errorf("a refused write changed failure_tracker to %v", v)
	}
	// The forged prompt block never reached the model.
	for _, req := range srv.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "FORGED") {
				t.Fatal("a block from before_main_llm_call reached the model")
			}
		}
	}
	// An extension is handed only the keys it declared it reads.
	if evs := rec.hook("narrow_reader"); len(evs) != 1 || len(evs[0].Reads) != 0 {
		t.Errorf("narrow_reader got %v; loop_active was set but not declared, failure_tracker was declared but unset", evs)
	}
}

func TestRequiredExtensionStopsTheTurn(t *testing.T) {
	p := plugin{
		name:   "strict",
		exts:   []*exocortexv1.ExtensionSpec{{Name: "must", Hook: exocortexv1.Hook_HOOK_MESSAGE_LOOP_START, Order: 1, Required: true}},
		behave: map[string]string{"must": "exit"},
	}
	a, _, _ := newAgent(t, setup{plugins: []plugin{p}, replies: []scripted.Reply{toolReply("x")}})
	_, err := a.Monologue(context.Background(), "go")
	if err == nil || !strings.Contains(err.Error(), "required extension must (plugin strict) failed at message_loop_start") {
		t.Fatalf("err = %v", err)
	}
	var re *RequiredError
	if !errors.As(err, &re) || re.Extension != "must" || re.Plugin != "strict" || re.Hook != "message_loop_start" || re.Err == nil {
		t.Fatalf("err = %#v, want a *RequiredError for must (plugin strict) at message_loop_start, wrapping its failure", err)
	}
}

func TestSignals(t *testing.T) {
	tests := []struct {
		name       string
		replies    []scripted.Reply
		wantSig    []string
		wantReason string
	}{
		{
			name:       "repeat then unusable limit",
			replies:    []scripted.Reply{toolReply("nope"), toolReply("nope"), toolReply("nope"), toolReply("nope")},
			wantSig:    []string{signals.ToolNotFound, signals.Repeat, signals.Repeat, signals.UnusableLimit},
			wantReason: signals.UnusableLimit,
		},
		{
			name:       "misformat",
			replies:    []scripted.Reply{{Content: "I think I should look around."}, {Content: "still prose"}, {Content: "and more prose"}},
			wantSig:    []string{signals.Misformat, signals.Misformat, signals.UnusableLimit},
			wantReason: signals.UnusableLimit,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, rec, _ := newAgent(t, setup{replies: tt.replies, opts: Options{UnusableLimit: 3}})
			res, err := a.Monologue(context.Background(), "go")
			var stop *StopError
			if !errors.As(err, &stop) || stop.Reason != tt.wantReason || res.StopReason != tt.wantReason {
				t.Fatalf("err = %v, result %+v", err, res)
			}
			if got := rec.signals(); strings.Join(got, ",") != strings.Join(tt.wantSig, ",") {
				t.Fatalf("signals = %v, want %v", got, tt.wantSig)
			}
			// The signal travels with the history message, for extensions.
			var onMessages []string
			for _, m := range a.History() {
				if m.GetSignal() != "" {
					onMessages = append(onMessages, m.GetSignal())
				}
			}
			if strings.Join(onMessages, ",") != strings.Join(tt.wantSig, ",") {
				t.Fatalf("history signals = %v", onMessages)
			}
		})
	}
}

func TestHookOrderOfOneIteration(t *testing.T) {
	var exts []*exocortexv1.ExtensionSpec
	for _, h := range []exocortexv1.Hook{
		exocortexv1.Hook_HOOK_AGENT_INIT, exocortexv1.Hook_HOOK_MONOLOGUE_START, exocortexv1.Hook_HOOK_HIST_ADD_BEFORE,
		exocortexv1.Hook_HOOK_MESSAGE_LOOP_START, exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE,
		exocortexv1.Hook_HOOK_SYSTEM_PROMPT, exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER,
		exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL, exocortexv1.Hook_HOOK_RESPONSE_STREAM_CHUNK,
		exocortexv1.Hook_HOOK_RESPONSE_STREAM_END, exocortexv1.Hook_HOOK_ERROR_FORMAT,
		exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE, exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER,
		exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, exocortexv1.Hook_HOOK_MONOLOGUE_END,
	} {
		exts = append(exts, ext("x_"+strings.ToLower(strings.TrimPrefix(h.String(), "HOOK_")), h, 1))
	}
	p := plugin{name: "all", exts: exts, tools: []string{"echo"}}
	replies := []scripted.Reply{{Content: "not json", ChunkSize: 100}, {Content: `{"tool_name":"echo","tool_args":{}}`, ChunkSize: 100}}
	a, rec, _ := newAgent(t, setup{plugins: []plugin{p}, replies: replies, opts: Options{MaxIterations: 2}})
	_, _ = a.Monologue(context.Background(), "go")
	var got []string
	for _, e := range rec.events {
		if e.Type == EventHook {
			got = append(got, fmt.Sprintf("%d:%s", e.Iteration, e.Hook))
		}
	}
	want := []string{
		"0:agent_init", "0:hist_add_before", "0:monologue_start",
		"1:message_loop_start", "1:message_loop_prompts_before", "1:system_prompt", "1:message_loop_prompts_after",
		"1:before_main_llm_call", "1:response_stream_chunk", "1:response_stream_end", "1:hist_add_before",
		"1:error_format", "1:hist_add_before", "1:message_loop_end",
		"2:message_loop_start", "2:message_loop_prompts_before", "2:system_prompt", "2:message_loop_prompts_after",
		"2:before_main_llm_call", "2:response_stream_chunk", "2:response_stream_end", "2:hist_add_before",
		"2:tool_execute_before", "2:tool_execute_after", "2:hist_add_before", "2:message_loop_end",
		"2:hist_add_before", // the max-iterations message
		"2:monologue_end",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("hook order:\n got %v\nwant %v", got, want)
	}
}

func TestOncePerSession(t *testing.T) {
	p := plugin{name: "p", exts: []*exocortexv1.ExtensionSpec{{Name: "catalog", Hook: exocortexv1.Hook_HOOK_MESSAGE_LOOP_START, Order: 1, OncePerSession: true}}}
	a, rec, _ := newAgent(t, setup{plugins: []plugin{p}, replies: []scripted.Reply{toolReply("x"), toolReply("y"), toolReply("z")}, opts: Options{MaxIterations: 3}})
	_, _ = a.Monologue(context.Background(), "go")
	if n := len(rec.hook("catalog")); n != 1 {
		t.Fatalf("a once-per-session extension ran %d times", n)
	}
}

func TestApproval(t *testing.T) {
	// The hold comes from an extension at tool_execute_before; the fixture cannot
	// block, so this exercises the decision rules directly.
	a := &Agent{opts: Options{ApprovalMode: ApprovalDefault}, sessionAllo: map[string]bool{}}
	asked := 0
	a.opts.Approver = ApproverFunc(func(context.Context, Approval) (Decision, error) { asked++; return AllowSession, nil })
	req := Approval{Tool: "code_execution", Action: "rm -rf build"}
	for i := 0; i < 2; i++ {
		if d, _ := a.decide(context.Background(), &turn{}, &exocortexv1.ToolCall{}, req); d == Deny {
			t.Fatal("denied")
		}
	}
	if asked != 1 {
		t.Fatalf("asked %d times; allow-for-session must be remembered", asked)
	}
	a.opts.Approver = nil
	if d, why := a.decide(context.Background(), &turn{}, &exocortexv1.ToolCall{}, Approval{Tool: "code_execution", Action: "other"}); d != Deny || !strings.Contains(why, "no operator") {
		t.Fatalf("without an approver: %v %q", d, why)
	}
	a.SetApprovalMode(ApprovalYolo)
	if d, _ := a.decide(context.Background(), &turn{}, &exocortexv1.ToolCall{}, Approval{Tool: "x"}); d == Deny {
		t.Fatal("yolo denied")
	}
	// Yolo lifts the approvals, not the sandbox: a call that would run
	// unconfined is asked for (here: nobody to ask, so denied).
	if d, why := a.decide(context.Background(), &turn{}, &exocortexv1.ToolCall{}, Approval{Tool: "code_execution", Action: "ls", AlwaysAsk: true}); d != Deny || !strings.Contains(why, "no operator") {
		t.Fatalf("always-ask in yolo: %v %q", d, why)
	}
	_ = time.Second
}

// TestReloadBeforeTheNextMessage: a plugin rebuilt while the session is idle
// serves the next user message's opening hooks already, not only from its
// first iteration.
func TestReloadBeforeTheNextMessage(t *testing.T) {
	dir := t.TempDir()
	v1 := plugin{name: "opener", exts: []*exocortexv1.ExtensionSpec{ext("opener_v1", exocortexv1.Hook_HOOK_MONOLOGUE_START, 10)}}
	writePlugin(t, dir, v1)
	staged := make(chan struct{}, 1)
	h, err := host.New(context.Background(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}},
		WatchDebounce: 20 * time.Millisecond,
		OnEvent: func(e host.Event) {
			if e.Kind == host.EventStaged {
				select {
				case staged <- struct{}{}:
				default:
				}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	if err := h.Watch(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv, err := scripted.NewServer(scripted.Script{Replies: []scripted.Reply{toolReply("nothing"), toolReply("nothing")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, _ := llm.New(srv.URL())
	rec := &recorder{}
	a, err := New(Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), MaxIterations: 1, Observer: rec.observe})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = a.Monologue(context.Background(), "first") // stops at the iteration limit
	if len(rec.hook("opener_v1")) != 1 {
		t.Fatalf("opener_v1 events: %+v", rec.hook("opener_v1"))
	}
	writePlugin(t, dir, plugin{name: "opener", exts: []*exocortexv1.ExtensionSpec{ext("opener_v2", exocortexv1.Hook_HOOK_MONOLOGUE_START, 10)}})
	select {
	case <-staged:
	case <-time.After(20 * time.Second):
		t.Fatal("the rebuilt plugin was not staged")
	}
	_, _ = a.Monologue(context.Background(), "second")
	if got := rec.hook("opener_v2"); len(got) != 1 || got[0].Error != "" {
		t.Errorf("the second message's monologue_start: opener_v2 events %+v, want the new version to serve it", got)
	}
	if got := rec.hook("opener_v1"); len(got) != 1 {
		t.Errorf("opener_v1 ran %d times, want once (before the rebuild)", len(got))
	}
}
