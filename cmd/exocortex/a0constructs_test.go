package main

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/scaffold/a0port"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// constructsTree holds one of each Agent Zero v1.7 construct the port must
// bring over (written for these tests): a guard at tool_execute_before that
// raises HandledException through its plugin's own helpers module (imported
// as usr.plugins.<name>.helpers...), a file with no numeric prefix that
// overrides the base tree's file of its name, _functions points with a
// counterpart (monologue start, handle_exception end, hist_add_ai_response
// start) and one without (get_chat_model), the tree's identity prompt, a
// prompt with {{ include }} and a .py variables file, a key only Agent Zero's
// UI sets, two tools of the tree, and a file that imports its plugin's module
// that cannot load inside a function (it loads, and needs a hand at the line).
const constructsTree = "testdata/a0constructs"

// TestPortedConstructsReport checks the report of the constructs tree: every
// extension file of the tree is in it, each with the status that says what it
// does when run.
func TestPortedConstructsReport(t *testing.T) {
	r, err := a0port.Port(t.Context(), constructsTree, filepath.Join(t.TempDir(), "a0-constructs"), "a0-constructs")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]a0port.File{}
	for _, f := range r.Files {
		got[f.Source] = f
	}
	var tree []string
	_ = filepath.WalkDir(constructsTree, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".py") && strings.Contains(p, "/extensions/") {
			rel, _ := filepath.Rel(constructsTree, p)
			tree = append(tree, filepath.ToSlash(rel))
		}
		return nil
	})
	for _, rel := range tree {
		if _, ok := got[rel]; !ok {
			t.Errorf("%s is missing from the report", rel)
		}
	}
	tests := []struct {
		file, status, hook, note string
	}{
		{"extensions/python/tool_execute_before/_10_rule_guard.py", "adapted by the layer", "tool_execute_before", "the plugin's own module"},
		{"extensions/python/monologue_start/greet.py", "overridden", "monologue_start", "overridden by plugins/guardplug/extensions/python/monologue_start/greet.py"},
		{"plugins/guardplug/extensions/python/monologue_start/greet.py", "adapted by the layer", "monologue_start", "no numeric prefix"},
		{"extensions/python/_functions/agent/Agent/monologue/start/_20_profile.py", "adapted by the layer", "monologue_start", "_functions point agent.Agent.monologue (start)"},
		{"extensions/python/_functions/agent/Agent/handle_exception/end/_50_swallow.py", "adapted by the layer", "message_loop_exception", "clearing data[\"exception\"] handles it"},
		{"extensions/python/_functions/agent/Agent/hist_add_ai_response/start/_10_tag.py", "ported as is", "hist_add_before", "the model's reply"},
		{"extensions/python/_functions/agent/Agent/get_chat_model/start/_10_pick.py", "not ported", "", "no counterpart: agent.Agent.get_chat_model (start)"},
		{"extensions/python/system_prompt/_10_main_prompt.py", "not ported", "system_prompt", "the tree's identity"},
		{"extensions/python/system_prompt/_20_house_rules.py", "adapted by the layer", "system_prompt", "house.rules.md"},
		{"extensions/python/message_loop_prompts_after/_30_chat_mode.py", "adapted by the layer", "message_loop_prompts_after", "no file of the tree that runs writes"},
		{"plugins/guardplug/extensions/python/tool_execute_after/_40_bridge_reply.py", "needs a hand", "tool_execute_after", "bridge.py inside a function, copied with the plugin, which cannot load: line 3 imports not_installed_bridge_sdk_xyz"},
	}
	for _, tt := range tests {
		f, ok := got[tt.file]
		if !ok {
			continue
		}
		if f.Status != tt.status || f.Hook != tt.hook || !strings.Contains(strings.Join(f.Notes, "\n"), tt.note) {
			t.Errorf("%s: %s at %q, notes %q\nwant %s at %q, a note with %q", tt.file, f.Status, f.Hook, f.Notes, tt.status, tt.hook, tt.note)
		}
	}
	// A file importing an own module that cannot load inside a function loads:
	// the wiring says it runs; one importing it at the top would not.
	for _, wh := range r.Wiring {
		for _, e := range wh.Extensions {
			if strings.HasSuffix(e.Source, "_40_bridge_reply.py") && !e.Runs {
				t.Errorf("the wiring says %s does not run; it loads (its failing import is inside a function)", e.Source)
			}
		}
	}
	if len(got) != len(tree) {
		t.Errorf("%d files in the report, the tree has %d extension files", len(got), len(tree))
	}
	var none []string
	for _, tm := range r.Tools {
		if tm.Counterpart == "" {
			none = append(none, tm.Tool)
		}
	}
	if !slices.Equal(none, []string{"fancy_tool"}) {
		t.Errorf("tools with no counterpart %v, want [fancy_tool] (search_engine is web_search)", none)
	}
	if len(r.Identity) != 1 || !strings.Contains(r.Identity[0], "identity: Exocortex's") {
		t.Errorf("identity choice %q", r.Identity)
	}
}

// TestPortedConstructsRun ports the constructs tree and runs a session with
// it on the real host, with the wiring check the host applies at start (no
// --allow-wiring-errors), the built-in agent-tools and the scripted model:
// the guard stops a text_editor write and a shell command that touch the
// forbidden file and lets the harmless write through; a failing model call
// is handled by the handle_exception point's file and the monologue goes on;
// the model's reply is tagged by the hist_add_ai_response point's file; the
// overriding file runs and the overridden one does not. The session fails on
// any extension error of the ported plugin, an unexpanded {{ include }}, or
// two identities in one request.
func TestPortedConstructsRun(t *testing.T) {
	home := t.TempDir()
	project := t.TempDir()
	plugin := filepath.Join(home, "plugins", "a0-constructs")
	if _, err := a0port.Port(t.Context(), constructsTree, plugin, "a0-constructs"); err != nil {
		t.Fatal(err)
	}
	var plog sdktest.Buffer
	h := portedHostChecked(t, home, project, "a0-constructs", &plog)
	var mu sync.Mutex
	var errs []string
	ran := map[string][]string{}
	observe := func(e loop.Event) {
		if e.Plugin != "a0-constructs" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if e.Error != "" {
			errs = append(errs, e.Extension+" at "+e.Hook+": "+e.Error)
		}
		if e.Type == loop.EventHook && !slices.Contains(ran[e.Extension], e.Hook) {
			ran[e.Extension] = append(ran[e.Extension], e.Hook)
		}
	}
	srv, a := agentOn(t, h, observe, []scripted.Reply{
		{Content: `{"thoughts":["w"],"headline":"writing","tool_name":"text_editor","tool_args":{"action":"write","path":"secret.txt","content":"x"}}`},
		{Content: `{"thoughts":["r"],"headline":"running","tool_name":"code_execution","tool_args":{"runtime":"terminal","code":"echo x > secret.txt"}}`},
		{Error: "the model is overloaded", Status: 400},
		{Content: `{"thoughts":["w"],"headline":"writing","tool_name":"text_editor","tool_args":{"action":"write","path":"ok.txt","content":"fine"}}`},
		{Content: `{"thoughts":["d"],"headline":"done","tool_name":"response","tool_args":{"text":"done"}}`},
	})
	res, err := a.Monologue(context.Background(), "write the files")
	if err != nil {
		t.Fatalf("monologue: %v\nplugin log:\n%s", err, plog.String())
	}
	if res.Response != "done" {
		t.Errorf("response %q", res.Response)
	}
	if _, err := os.Stat(filepath.Join(project, "secret.txt")); !os.IsNotExist(err) {
		t.Errorf("secret.txt was written although the guard raised (%v)", err)
	}
	if b, err := os.ReadFile(filepath.Join(project, "ok.txt")); err != nil || string(b) != "fine" {
		t.Errorf("ok.txt holds %q (%v): the guard stopped a harmless write", b, err)
	}
	if len(errs) > 0 {
		t.Errorf("extension errors of the ported plugin:\n%s\nplugin log:\n%s", strings.Join(errs, "\n"), plog.String())
	}
	blocked, tagged := 0, false
	for _, m := range a.History() {
		if strings.Contains(m.GetContent(), "rule 7:") {
			blocked++
		}
		if m.GetRole() == "assistant" && strings.HasSuffix(m.GetContent(), " [tagged]") {
			tagged = true
		}
	}
	if blocked != 2 {
		t.Errorf("the model was told of %d blocked calls, want 2 (the write and the command)", blocked)
	}
	if !tagged {
		t.Errorf("no reply in the history was tagged by the hist_add_ai_response point")
	}
	for ext, hook := range map[string]string{"a0_greet": "monologue_start", "a0_swallow": "message_loop_exception", "a0_profile": "monologue_start",
		"a0_rule_guard": "tool_execute_before", "a0_house_rules": "system_prompt", "a0_chat_mode": "message_loop_prompts_after",
		"a0_bridge_reply": "tool_execute_after"} {
		if !slices.Contains(ran[ext], hook) {
			t.Errorf("%s did not run at %s (ran: %v)", ext, hook, ran)
		}
	}
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	for i, req := range reqs {
		var all strings.Builder
		for _, m := range req.Messages {
			all.WriteString(m.Content + "\n")
		}
		text := all.String()
		if strings.Contains(text, "{{ include") || strings.Contains(text, "{{include") {
			t.Errorf("request %d has an unexpanded include", i+1)
		}
		if n := strings.Count(text, "You are Exocortex"); n != 1 || strings.Contains(text, "Fixture Agent Manual") || strings.Contains(text, "You are the fixture agent") {
			t.Errorf("request %d: %d Exocortex identities and the tree's: %v; want exactly one", i+1, n, strings.Contains(text, "Fixture Agent Manual"))
		}
		if !strings.Contains(text, "Ask the operator before deleting anything.") || !strings.Contains(text, "Files go in /srv/work.") {
			t.Errorf("request %d lacks the house rules, included and with their variables filled", i+1)
		}
	}
}
