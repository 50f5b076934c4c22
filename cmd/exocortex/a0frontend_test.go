package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/scaffold/a0port"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// frontendTree holds Agent Zero v1.7's hooks around the loop and the
// stand-ins they need (written for these tests): a startup migration, a
// banner (reading the process cache the migration wrote, the front end's
// context and a usr/.env value), a user_message_ui file that rewrites the
// message, a job_loop tick counting in helpers.cache, an agent_init file that
// opens the history with the agent's greeting (hist_add_ai_response), and a
// plugin guard whose own helper asks the utility model through
// get_utility_model().unified_call with langchain_core.messages and raises
// HandledException on its verdict.
const frontendTree = "testdata/a0frontend"

// TestPortedFrontendHooks ports the tree and runs it as the terminal runs a
// session, on the real host with its wiring check: the report serves every
// file (none needs a hand); startup_migration runs once, before the banners;
// the banners come back highest priority first, as text; the operator's
// message reaches the model rewritten; the greeting is the history's first
// message; a job tick shows in the next monologue's prompt; the guard's
// utility-model calls carry the system and human messages, and the second
// verdict stops the text_editor write. Any extension error fails it.
func TestPortedFrontendHooks(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	plugin := filepath.Join(home, "plugins", "a0-frontend")
	r, err := a0port.Port(t.Context(), frontendTree, plugin, "a0-frontend")
	if err != nil {
		t.Fatal(err)
	}
	wantHooks := map[string]string{"_10_migrate.py": "startup_migration", "_10_welcome.py": "banners", "_10_tag.py": "user_message_ui",
		"_10_tick.py": "job_loop", "_10_initial_message.py": "agent_init", "_20_audit.py": "tool_execute_before", "_20_ticks.py": "message_loop_prompts_after"}
	for _, f := range r.Files {
		if f.Status != "adapted by the layer" && f.Status != "ported as is" || f.Hook != wantHooks[filepath.Base(f.Source)] {
			t.Errorf("%s: %s at %q, want served at %s: %v", f.Source, f.Status, f.Hook, wantHooks[filepath.Base(f.Source)], f.Notes)
		}
	}
	if len(r.Files) != len(wantHooks) {
		t.Errorf("%d files in the report, want %d", len(r.Files), len(wantHooks))
	}
	if err := os.MkdirAll(filepath.Join(plugin, "usr"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plugin, "usr", ".env"), []byte("FIXTURE_BANNER_NOTE=\"note from usr/.env\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var plog sdktest.Buffer
	h := portedHostChecked(t, home, project, "a0-frontend", &plog)
	var mu sync.Mutex
	var errs, order []string
	observe := func(e loop.Event) {
		if e.Plugin != "a0-frontend" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if e.Error != "" {
			errs = append(errs, e.Extension+" at "+e.Hook+": "+e.Error)
		}
		if e.Type == loop.EventHook {
			order = append(order, e.Hook)
		}
	}
	srv, usrv, a := agentWithUtility(t, h, observe, []scripted.Reply{
		{Content: "looks fine <ok/>", ExpectContains: "FIXTURE-AUDITOR judge the call"},
		{Content: "credential write <terminate/>", ExpectContains: "tool text_editor"},
		{Content: "<ok/>"},
		{Content: "<ok/>"},
	}, []scripted.Reply{
		{Content: `{"thoughts":["r"],"headline":"running","tool_name":"code_execution","tool_args":{"runtime":"terminal","code":"echo hi"}}`},
		{Content: `{"thoughts":["w"],"headline":"writing","tool_name":"text_editor","tool_args":{"action":"write","path":"creds.txt","content":"x"}}`},
		{Content: `{"thoughts":["d"],"headline":"done","tool_name":"response","tool_args":{"text":"done"}}`},
		{Content: `{"thoughts":["d"],"headline":"done","tool_name":"response","tool_args":{"text":"again"}}`,
			ExpectContains: "FIXTURE job ticks so far: 1"},
	})
	ctx := context.Background()
	banners, err := a.Banners(ctx, &exocortexv1.FrontendContext{Client: "terminal", Hostname: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range banners {
		got = append(got, b.GetId()+": "+b.GetText())
	}
	if want := []string{"fixture-welcome: Migrated 1 time(s) & served to terminal@localhost\nnote from usr/.env", "fixture-low: last"}; !slices.Equal(got, want) {
		t.Errorf("banners %q, want %q", got, want)
	}
	text, err := a.UserMessageUI(ctx, "hello there")
	if err != nil || text != "hello there [typed in the UI]" {
		t.Errorf("user_message_ui gave %q (%v)", text, err)
	}
	res, err := a.Monologue(ctx, text)
	if err != nil || res.Response != "done" {
		t.Fatalf("monologue: %v (%+v)\nplugin log:\n%s", err, res, plog.String())
	}
	if err := a.JobTick(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if res, err := a.Monologue(ctx, "and again"); err != nil || res.Response != "again" {
		t.Fatalf("second monologue: %v\nplugin log:\n%s", err, plog.String())
	}
	if _, err := os.Stat(filepath.Join(project, "creds.txt")); !os.IsNotExist(err) {
		t.Errorf("creds.txt was written although the auditor's verdict was terminate (%v)", err)
	}
	hist := a.History()
	if len(hist) == 0 || hist[0].GetRole() != "assistant" || !strings.Contains(hist[0].GetContent(), "Hello from the fixture tree") {
		t.Errorf("the history does not open with the greeting: %v", hist[:min(1, len(hist))])
	}
	stopped := slices.ContainsFunc(hist, func(m *exocortexv1.Message) bool {
		return strings.Contains(m.GetContent(), "the auditor stopped it: credential write")
	})
	if !stopped {
		t.Errorf("the model was not told the auditor stopped the write")
	}
	if n := len(usrv.Requests()); n != 4 {
		t.Errorf("%d utility-model calls, want 4 (one per tool call)", n)
	}
	for i, req := range usrv.Requests() {
		if len(req.Messages) < 2 || req.Messages[0].Role != "system" || !strings.Contains(req.Messages[0].Content, "FIXTURE-AUDITOR") {
			t.Errorf("utility request %d lacks the auditor's system message: %+v", i+1, req.Messages)
		}
	}
	if reqs := srv.Requests(); len(reqs) != 4 {
		t.Errorf("%d model requests, want 4", len(reqs))
	} else if !slices.ContainsFunc(reqs[0].Messages, func(m api.Message) bool { return m.Content == "hello there [typed in the UI]" }) {
		t.Errorf("the first request lacks the operator's message as user_message_ui left it: %+v", reqs[0].Messages)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) > 0 {
		t.Errorf("extension errors:\n%s\nplugin log:\n%s", strings.Join(errs, "\n"), plog.String())
	}
	if i, j := slices.Index(order, "startup_migration"), slices.Index(order, "agent_init"); i < 0 || j < i || slices.Index(order[i+1:], "startup_migration") >= 0 {
		t.Errorf("startup_migration did not run once before agent_init: %v", order)
	}
}
