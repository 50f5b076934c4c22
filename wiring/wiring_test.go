package wiring

import (
	"bytes"
	"flag"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/hooks"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func seed(t testing.TB) Model {
	t.Helper()
	data, err := os.ReadFile("testdata/seed.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := DecodeModel(data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRenderGolden pins WIRING.md for the seed's system ported to Exocortex.
func TestRenderGolden(t *testing.T) {
	m := seed(t)
	got := Render(&m)
	const path = "testdata/seed.WIRING.md"
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Render differs from %s (go test ./wiring -update rewrites it):\n%s", path, got)
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	m := seed(t)
	first := Render(&m)
	for i := range 5 {
		slices.Reverse(m.Plugins)
		for j := range m.Plugins {
			if mf := m.Plugins[j].Manifest; mf != nil && i%2 == 0 {
				slices.Reverse(mf.Extensions)
				slices.Reverse(mf.Files)
			}
		}
		if got := Render(&m); !bytes.Equal(got, first) {
			t.Fatalf("Render depends on declaration order")
		}
	}
}

// TestRenderContent checks what the document promises, independently of the
// golden file: the header, every hook in firing order, every running extension
// under its hook, every key, signal, file and tool, and a Mermaid graph.
func TestRenderContent(t *testing.T) {
	m := seed(t)
	doc := string(Render(&m))
	if !strings.HasPrefix(doc, Header+"\n") {
		t.Fatalf("the document does not start with the generated-file header")
	}
	last := -1
	for _, h := range hooks.All() {
		i := strings.Index(doc, "`"+h.Name+"`: ")
		if i < 0 || i < last {
			t.Fatalf("hook %s missing or out of firing order", h.Name)
		}
		last = i
	}
	g := Build(&m)
	for _, e := range g.Extensions {
		head := strings.Index(doc, "`"+e.Hook.Name+"`: ")
		row := strings.Index(doc[head:], "| "+itoa(e.Order())+" | `"+e.Name+"` | `"+e.Plugin.Name+"` |")
		if row < 0 {
			t.Errorf("extension %s has no row under %s", e.Name, e.Hook.Name)
		}
	}
	for _, want := range []string{"| `bst_store` | `exocortex.v1.BeliefState` | session |", "`signals.Repeat`", "| `staging` | `$EXOCORTEX_HOME/staging.jsonl` |", "| `memory_save` | `memory` | yes |", "```mermaid\nflowchart LR\n", "$OLLAMA_HOST"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the document lacks %q", want)
		}
	}
	if !strings.Contains(doc, "disabled; ") || !strings.Contains(doc, "once per session") {
		t.Errorf("the notes column does not mark disabled and once-per-session extensions")
	}
}

// TestShadowing follows the host: the first plugin by priority keeps an
// extension name at a hook, and the configuration enables and disables.
func TestShadowing(t *testing.T) {
	spec := func(name string, disabled bool) *exocortexv1.ExtensionSpec {
		return &exocortexv1.ExtensionSpec{Name: name, Hook: exocortexv1.Hook_HOOK_MONOLOGUE_END, Order: 1, Disabled: disabled}
	}
	m := Model{
		Plugins: []Plugin{
			{Name: "user_copy", Priority: 1, Manifest: &exocortexv1.ManifestResponse{Extensions: []*exocortexv1.ExtensionSpec{spec("x", false), spec("off", true)}}},
			{Name: "project_copy", Priority: 0, Manifest: &exocortexv1.ManifestResponse{Extensions: []*exocortexv1.ExtensionSpec{spec("x", false), spec("cfg_off", false)}}},
		},
		Enabled:  map[string]bool{"off": true},
		Disabled: map[string]bool{"cfg_off": true},
	}
	g := Build(&m)
	state := map[string]string{}
	for _, e := range g.Extensions {
		state[e.Plugin.Name+"/"+e.Name] = map[bool]string{true: "runs", false: "off"}[e.Runs()] + ":" + e.ShadowedBy
	}
	want := map[string]string{"project_copy/x": "runs:", "user_copy/x": "off:project_copy", "user_copy/off": "runs:", "project_copy/cfg_off": "off:"}
	for k, v := range want {
		if state[k] != v {
			t.Errorf("%s: got %q, want %q (all: %v)", k, state[k], v, state)
		}
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

// TestHistoryAndToolsDeclarations: an extension sent the whole conversation
// has history (or, at before_main_llm_call, prompt) among its reads, one sent
// the prompt so far (at system_prompt and message_loop_prompts_after) has prompt
// so far, and one limited to some tools says so in its notes. A declaration at
// a hook whose request carries nothing it governs shows nothing.
func TestHistoryAndToolsDeclarations(t *testing.T) {
	const history, prompt = 1, 2
	ext := func(name string, hook exocortexv1.Hook, reads []string, sent int, tools ...string) *exocortexv1.ExtensionSpec {
		return &exocortexv1.ExtensionSpec{Name: name, Hook: hook, Order: 1, Reads: reads,
			ReadsHistory: sent&history != 0, ReadsPrompt: sent&prompt != 0, ForTools: tools}
	}
	m := Model{Plugins: []Plugin{{Name: "p", Manifest: &exocortexv1.ManifestResponse{Extensions: []*exocortexv1.ExtensionSpec{
		ext("summariser", exocortexv1.Hook_HOOK_MONOLOGUE_END, nil, history),
		ext("tracker", exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL, []string{"completion"}, history),
		ext("profile", exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE, nil, 0),
		ext("guard", exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE, nil, 0, "text_editor"),
		ext("gate", exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER, nil, 0, "code_execution", "data_analyze"),
		ext("budget", exocortexv1.Hook_HOOK_SYSTEM_PROMPT, nil, prompt),
		ext("watchdog", exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER, []string{"fill"}, prompt),
		ext("dedup", exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER, nil, history|prompt),
		ext("counter", exocortexv1.Hook_HOOK_MONOLOGUE_START, nil, history|prompt),
	}}}}}
	doc := string(Render(&m))
	for _, want := range []string{
		"| 1 | `summariser` | `p` | history | – | no | – |",
		"| 1 | `tracker` | `p` | `completion`, prompt | – | no | – |",
		"| 1 | `profile` | `p` | – | – | no | – |",
		"| 1 | `guard` | `p` | – | – | no | only for `text_editor` |",
		"| 1 | `gate` | `p` | – | – | no | only for `code_execution`, `data_analyze` |",
		"| 1 | `budget` | `p` | prompt so far | – | no | – |",
		"| 1 | `watchdog` | `p` | `fill`, prompt so far | – | no | – |",
		"| 1 | `dedup` | `p` | history, prompt so far | – | no | – |",
		"| 1 | `counter` | `p` | – | – | no | – |",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the document lacks the row %q", want)
		}
	}
}

// TestUtilityModelUse checks that the plugin table says which plugins call
// the utility model (uses_utility_model), whose calls fire the util hooks.
func TestUtilityModelUse(t *testing.T) {
	tests := []struct {
		uses bool
		want string
	}{
		{true, "| `p` | 1 | 1 | 0 | 0 | loaded; calls the utility model |"},
		{false, "| `p` | 1 | 1 | 0 | 0 | loaded |"},
	}
	for _, tt := range tests {
		m := Model{Plugins: []Plugin{{Name: "p", Manifest: &exocortexv1.ManifestResponse{Version: "1", UsesUtilityModel: tt.uses,
			Extensions: []*exocortexv1.ExtensionSpec{{Name: "x", Hook: exocortexv1.Hook_HOOK_MONOLOGUE_END, Order: 1}}}}}}
		if got := string(Render(&m)); !strings.Contains(got, tt.want) {
			t.Errorf("uses_utility_model %v: the plugin table lacks %q:\n%s", tt.uses, tt.want, got)
		}
	}
}

// TestMemoryUse checks that the document says which plugins use the memory
// service (uses_memory) and which areas each may write.
func TestMemoryUse(t *testing.T) {
	tests := []struct {
		name   string
		uses   bool
		areas  []string
		want   string
		absent bool
	}{
		{"areas", true, []string{"notes", "main"}, "| `p` | notes, main |", false},
		{"every area", true, []string{"*"}, "| `p` | every area (`*`) |", false},
		{"reads only", true, nil, "| `p` | none (reads only) |", false},
		{"no memory", false, nil, "## Memory", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Model{Plugins: []Plugin{{Name: "p", Manifest: &exocortexv1.ManifestResponse{Version: "1", UsesMemory: tt.uses, MemoryWriteAreas: tt.areas,
				Extensions: []*exocortexv1.ExtensionSpec{{Name: "x", Hook: exocortexv1.Hook_HOOK_MONOLOGUE_END, Order: 1}}}}}}
			got := string(Render(&m))
			if strings.Contains(got, tt.want) == tt.absent {
				t.Errorf("uses_memory %v, areas %v: contains %q is %v, want %v:\n%s", tt.uses, tt.areas, tt.want, !tt.absent, tt.absent, got)
			}
		})
	}
}
