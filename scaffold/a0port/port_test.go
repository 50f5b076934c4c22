package a0port

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/sdk/python"
)

// TestSeamsStatic checks the seams found by reading files alone, each at its
// file and line with its fix, and the Agent Zero internal that needs a hand.
func TestSeamsStatic(t *testing.T) {
	r, err := Port(t.Context(), "testdata/seams", filepath.Join(t.TempDir(), "out"), "seams")
	if err != nil {
		t.Fatal(err)
	}
	const base = "extensions/python/"
	tests := []struct {
		seam int
		file string
		line int
		fix  string
	}{
		{SeamKeyTwoFiles, base + "monologue_start/_10_gate_a.py", 6, "one file own the key"},
		{SeamKeyTwoFiles, base + "monologue_start/_10_gate_a.py", 9, "one file own the key"},
		{SeamAttrAsData, base + "message_loop_start/_10_gate_b.py", 8, `getattr(self.agent, "number", None)`},
		{SeamOnceTwoHooks, base + "message_loop_start/_10_gate_b.py", 7, "its own key"},
		{SeamCoreText, base + "tool_execute_after/_10_core_text.py", 6, "typed signal"},
	}
	for _, tt := range tests {
		found := false
		for _, f := range r.Findings {
			if f.Seam == tt.seam && f.File == tt.file && f.Line == tt.line && strings.Contains(f.Fix, tt.fix) {
				found = true
			}
		}
		if !found {
			t.Errorf("seam %d at %s:%d (fix %q) not reported; findings:\n%v", tt.seam, tt.file, tt.line, tt.fix, r.Findings)
		}
	}
	// call_utility_model is adapted (the host's utility model); call_chat_model
	// needs a hand, pointed at the utility model.
	for _, f := range r.Files {
		if !strings.HasSuffix(f.Source, "_10_core_text.py") {
			continue
		}
		notes := strings.Join(f.Notes, "\n")
		for _, want := range []string{"line 7: call_utility_model -> the host's utility model", "line 8: a chat-model call -> no chat-model service for plugins"} {
			if !strings.Contains(notes, want) {
				t.Errorf("%s: notes %v, want one with %q", f.Source, f.Notes, want)
			}
		}
		if f.Status != statusNeedsHand {
			t.Errorf("%s: status %q, want %q (the chat-model call)", f.Source, f.Status, statusNeedsHand)
		}
	}
}

// TestRealImportShapes checks the report on the shapes real Agent Zero v1.7
// files have (docs/porting.md, "Ported against Agent Zero v1.7's own
// extensions"): each helpers module of a package import and another plugin's
// helpers are named as what the layer cannot load, a history read is not
// called a mutation, and a prompt file without a copy in the tree needs a hand.
func TestRealImportShapes(t *testing.T) {
	r, err := Port(t.Context(), "testdata/seams", filepath.Join(t.TempDir(), "out"), "seams")
	if err != nil {
		t.Fatal(err)
	}
	var notes string
	var f File
	for _, x := range r.Files {
		if strings.HasSuffix(x.Source, "_20_real_imports.py") {
			f, notes = x, strings.Join(x.Notes, "\n")
		}
	}
	if f.Status != statusNeedsHand || !f.noLoad {
		t.Fatalf("status %q, cannot load %v; want needs a hand and left out (notes:\n%s)", f.Status, f.noLoad, notes)
	}
	tests := []struct {
		name, note string
		want       bool
	}{
		{"a helpers module the layer provides is adapted", "line 5: helpers.files -> files of the ported plugin's directory", true},
		{"a provided module needs no hand", "imports helpers.files", false},
		{"the shimmed module is fine", "helpers.extension", false},
		{"another plugin's helpers", "line 6: imports plugins._elsewhere.helpers.store", true},
		{"history read is no mutation", "history mutation", false},
		{"missing prompt file", "line 13: reads the prompt file missing.prompt.md", true},
		{"prompt file named on the next line", "line 15: reads the prompt file other.missing.md", true},
		{"no run-time name for it", "named at run time", false},
	}
	for _, tt := range tests {
		if got := strings.Contains(notes, tt.note); got != tt.want {
			t.Errorf("%s: note %q present %v, want %v; notes:\n%s", tt.name, tt.note, got, tt.want, notes)
		}
	}
}

// TestStandInImports ports a v1.7 plugin whose files import Agent Zero's helper
// modules: what the layer provides (Modules) is adapted, with what it maps to,
// and gets its shim; a module it has no stand-in for, a third-party module and
// an import of a file of the tree that cannot load each leave the file "needs
// a hand", and the plugin's interpreter loads exactly the adapted files.
func TestStandInImports(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	r, err := Port(t.Context(), "testdata/standins", out, "a0-standins")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]File{}
	for _, f := range r.Files {
		byName[path.Base(f.Source)] = f
	}
	tests := []struct {
		file, status string
		notes        []string // each must be among the file's notes
		notNotes     []string // none may be
	}{
		{"_20_rules.py", statusAdapted,
			[]string{"line 4: helpers.files -> files of the ported plugin's directory", "line 5: plugins._memory.helpers -> Memory on Exocortex's memory store"},
			[]string{"no stand-in"}},
		{"_30_quality.py", statusNeedsHand,
			[]string{"line 4: imports plugins._memory.helpers.memory_quality, an Agent Zero internal the compatibility layer has no stand-in for"}, nil},
		{"_50_search.py", statusNeedsHand,
			[]string{"line 3: imports not_installed_vectorlib_xyz, a third-party module", "line 5: helpers.plugins -> get_plugin_config(name) reads the ported plugin's config/<name>.json",
				"line 6: plugins._memory.helpers.memory -> Memory on Exocortex's memory store"},
			[]string{"helpers.errors, an Agent Zero internal"}},
		{"_60_wait.py", statusNeedsHand,
			[]string{"line 4: plugins.recall.extensions.python.message_loop_prompts_after._50_search -> the ported copy",
				"line 4: imports the tree's message_loop_prompts_after/_50_search.py, which cannot load (line 3 imports not_installed_vectorlib_xyz"}, nil},
	}
	for _, tt := range tests {
		f, ok := byName[tt.file]
		if !ok {
			t.Errorf("%s: not in the report", tt.file)
			continue
		}
		notes := strings.Join(f.Notes, "\n")
		if f.Status != tt.status {
			t.Errorf("%s: status %q, want %q; notes:\n%s", tt.file, f.Status, tt.status, notes)
		}
		for _, n := range tt.notes {
			if !strings.Contains(notes, n) {
				t.Errorf("%s: no note %q; notes:\n%s", tt.file, n, notes)
			}
		}
		for _, n := range tt.notNotes {
			if strings.Contains(notes, n) {
				t.Errorf("%s: note %q present; notes:\n%s", tt.file, n, notes)
			}
		}
	}
	for _, m := range Modules() {
		b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(m.Shim())))
		if err != nil || !strings.Contains(string(b), "from "+m.Impl+" import") {
			t.Errorf("shim of %s: %q, %v; want it to import from %s", m.Name, b, err, m.Impl)
		}
	}
	var cfg map[string]any
	if b, err := os.ReadFile(filepath.Join(out, "config", "recall.json")); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg["recall_limit"] != 9.0 || cfg["recall_enabled"] != true || cfg["nested"].(map[string]any)["a"] != 1.0 {
		t.Errorf("config/recall.json = %v, want default_config.yaml with config.json over it", cfg)
	}
	// The plugin's interpreter loads the adapted file and leaves out the others.
	cmd := exec.CommandContext(t.Context(), python.Interpreter, "-c",
		"import sys; sys.path.insert(0, '.'); from exocortex import a0compat; "+
			"print(' '.join(sorted(a.ext_name for a in a0compat.load_tree('a0', 'a0-standins'))))")
	cmd.Dir = out
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("loading the ported tree: %v", err)
	}
	if strings.TrimSpace(string(got)) != "a0_rules" {
		t.Errorf("loaded %q, want a0_rules only (the files the report calls adapted)", got)
	}
}

// TestNoCounterpartCalls checks that a call of a provided module's function
// with no counterpart here (Module.NoCounterpart) leaves the file "needs a
// hand" at the call's line, whatever the import's shape, and that the calls
// with a counterpart do not; and that the stand-in of every such function
// raises an error naming it.
func TestNoCounterpartCalls(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	r, err := Port(t.Context(), "testdata/nocounterpart", out, "a0-calls")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Files) != 1 {
		t.Fatalf("%d files in the report, want 1", len(r.Files))
	}
	f := r.Files[0]
	notes := strings.Join(f.Notes, "\n")
	if f.Status != statusNeedsHand {
		t.Errorf("status %q, want needs a hand; notes:\n%s", f.Status, notes)
	}
	tests := []struct {
		name, note string
		want       bool
	}{
		{"import helpers.x, called by its dotted name", "line 13: helpers.persist_chat.export_json_chat has no counterpart here", true},
		{"from helpers import x", "line 14: helpers.subagents.load_agent_data has no counterpart here", true},
		{"from helpers.x import fn", "line 15: helpers.settings.set_settings_delta has no counterpart here", true},
		{"from a plugin's module import fn", "line 16: plugins._model_config.helpers.model_config.build_utility_model has no counterpart here", true},
		{"from a plugin's package import module", "line 17: plugins._model_config.helpers.model_config.get_presets has no counterpart here", true},
		{"the fix is named", "Exocortex has no model presets", true},
		{"a function with a counterpart", "get_paths has no counterpart", false},
		{"get_settings has one", "get_settings has no counterpart", false},
		{"an attribute of the same name is no call", "line 21:", false},
		{"save_tmp_chat has one", "save_tmp_chat has no counterpart", false},
	}
	for _, tt := range tests {
		if got := strings.Contains(notes, tt.note); got != tt.want {
			t.Errorf("%s: note %q present %v, want %v; notes:\n%s", tt.name, tt.note, got, tt.want, notes)
		}
	}
	// Every function Modules names as having no counterpart exists in the
	// stand-in, and raises naming itself.
	var b strings.Builder
	b.WriteString("import inspect, sys\nsys.path.insert(0, '.')\nfrom exocortex.a0 import _runtime\n_runtime.configure('.', 'a0-calls')\nbad = []\n")
	for _, m := range Modules() {
		for _, fn := range slices.Sorted(maps.Keys(m.NoCounterpart)) {
			fmt.Fprintf(&b, "import %s as mod\nf = getattr(mod, %q, None)\n", m.Impl, fn)
			fmt.Fprintf(&b, "if f is None:\n    bad.append('%s.%s: missing')\nelse:\n", m.Impl, fn)
			b.WriteString("    args = [None for p in inspect.signature(f).parameters.values() if p.default is p.empty and p.kind == p.POSITIONAL_OR_KEYWORD]\n")
			fmt.Fprintf(&b, "    try:\n        f(*args)\n        bad.append('%s.%s: ran')\n", m.Impl, fn)
			fmt.Fprintf(&b, "    except Exception as e:\n        if %q not in str(e):\n            bad.append('%s.%s: ' + str(e))\n", fn, m.Impl, fn)
		}
	}
	b.WriteString("print('\\n'.join(bad))\n")
	cmd := exec.CommandContext(t.Context(), python.Interpreter, "-c", b.String())
	cmd.Dir = out
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("running the stand-ins: %v\n%s", err, got)
	}
	if s := strings.TrimSpace(string(got)); s != "" {
		t.Errorf("stand-ins that do not raise naming the function:\n%s", s)
	}
}

// TestAgentCallsWithNoCounterpart: a file calling an Agent method the layer's
// Agent raises for (exocortex.a0._agent_calls) needs a hand, at the line, with
// what corresponds; the config getter of the same prefix is no such call.
func TestAgentCallsWithNoCounterpart(t *testing.T) {
	tests := []struct {
		name, call, note string
		needs            bool
	}{
		{"a model object", "m = self.agent.get_chat_model()", "line 7: a model object -> no counterpart: the host makes the model calls", true},
		{"the utility model object is the host's utility model", "m = self.agent.get_utility_model()", "", false},
		{"an intervention check", "await self.agent.handle_intervention()", "line 7: an intervention check -> no counterpart", true},
		{"a warning into the history", "self.agent.hist_add_warning(message='x')", "line 7: a history mutation", true},
		{"a model's config", "c = model_config.get_chat_model_config(self.agent)", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := t.TempDir()
			code := "from helpers.extension import Extension\nfrom plugins._model_config.helpers import model_config\n\n\nclass Calls(Extension):\n    async def execute(self, **kwargs):\n        " + tt.call + "\n"
			p := filepath.Join(tree, "extensions", "python", "message_loop_end", "_10_calls.py")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(code), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Port(t.Context(), tree, filepath.Join(t.TempDir(), "out"), "a0-calls")
			if err != nil {
				t.Fatal(err)
			}
			f := r.Files[0]
			notes := strings.Join(f.Notes, "\n")
			if got := f.Status == statusNeedsHand; got != tt.needs {
				t.Errorf("status %q, want needs a hand: %v; notes:\n%s", f.Status, tt.needs, notes)
			}
			if tt.note != "" && !strings.Contains(notes, tt.note) {
				t.Errorf("notes lack %q:\n%s", tt.note, notes)
			}
		})
	}
}
