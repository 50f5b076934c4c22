package a0port

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPortWritesTheWiring ports a tree drawn after the seed's diagram (a
// classifier writing a key, two prompt files reading it and another key, the
// orchestration gate at before_main_llm_call of seam 7) and checks its wiring:
// per hook in firing order, each file with its order, its keys and what of it
// reaches the model, in port.json, in PORT.md and in the WIRING.md written beside
// it by package wiring's generator, with the too-late injection visible in each.
func TestPortWritesTheWiring(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	r, err := Port(t.Context(), "testdata/wired", out, "a0-wired")
	if err != nil {
		t.Fatal(err)
	}
	const base = "usr/extensions/python/"
	type ext struct {
		order         int32
		name, source  string
		reads, writes []string
		model         string
	}
	want := []struct {
		hook string
		exts []ext
	}{
		{"message_loop_start", []ext{{11, "a0_classify", base + "message_loop_start/_11_classify.py",
			[]string{"a0_wired_domain"}, []string{"a0_wired_domain"}, ""}}},
		{"message_loop_prompts_after", []ext{
			{16, "a0_tool_registry", base + "message_loop_prompts_after/_16_tool_registry.py", []string{"a0_wired_error_diagnosis"}, nil, "prompt text"},
			{57, "a0_orchestration_mode", base + "message_loop_prompts_after/_57_orchestration_mode.py", []string{"a0_wired_domain"}, nil, "prompt text"},
		}},
		{"before_main_llm_call", []ext{{17, "a0_orchestration_gate", base + "before_main_llm_call/_17_orchestration_gate.py",
			[]string{"a0_wired_domain"}, nil, "never (seam 7)"}}},
		{"tool_execute_after", []ext{{20, "a0_error_comprehension", base + "tool_execute_after/_20_error_comprehension.py",
			[]string{"a0_wired_error_diagnosis"}, []string{"a0_wired_error_diagnosis"}, ""}}},
	}
	if len(r.Wiring) != len(want) {
		t.Fatalf("wiring has %d hooks, want %d: %+v", len(r.Wiring), len(want), r.Wiring)
	}
	for i, w := range want {
		h := r.Wiring[i]
		if h.Hook != w.hook {
			t.Errorf("hook %d is %s, want %s (firing order)", i, h.Hook, w.hook)
			continue
		}
		if i > 0 && h.Position <= r.Wiring[i-1].Position {
			t.Errorf("%s at position %d after %s at %d: not in firing order", h.Hook, h.Position, r.Wiring[i-1].Hook, r.Wiring[i-1].Position)
		}
		if len(h.Extensions) != len(w.exts) {
			t.Errorf("%s: %d extensions, want %d: %+v", h.Hook, len(h.Extensions), len(w.exts), h.Extensions)
			continue
		}
		for j, we := range w.exts {
			got := h.Extensions[j]
			if got.Order != we.order || got.Extension != we.name || got.Source != we.source || !got.Runs ||
				!slices.Equal(got.Reads, we.reads) || !slices.Equal(got.Writes, we.writes) || got.Model != we.model {
				t.Errorf("%s #%d: got %+v, want %+v", h.Hook, j, got, we)
			}
		}
	}
	gate := r.Wiring[2].Extensions[0]
	if !strings.Contains(strings.Join(gate.Notes, "\n"), "seam 7") {
		t.Errorf("the gate's notes do not name seam 7: %v", gate.Notes)
	}

	doc, err := os.ReadFile(filepath.Join(out, wiringName))
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, reportMarkdownName))
	var js Report
	raw, _ := os.ReadFile(filepath.Join(out, reportJSONName))
	if err := json.Unmarshal(raw, &js); err != nil {
		t.Fatal(err)
	}
	if js.WiringDoc != string(doc) || len(js.Wiring) != len(r.Wiring) {
		t.Error("port.json does not carry the wiring written to WIRING.md")
	}
	// The pipeline of WIRING.md lists the hooks in firing order, each file's row
	// with its order, name, keys and injection.
	tests := []struct {
		name, in, want string
	}{
		{"title", string(doc), "# Wiring of the ported Agent Zero tree: a0-wired"},
		{"classifier row", string(doc), "| 11 | `a0_classify` | `a0-wired` | `a0_wired_domain` | `a0_wired_domain` | no |"},
		{"prompt file row", string(doc), "| 57 | `a0_orchestration_mode` | `a0-wired` | `a0_wired_domain`, history, prompt so far | – | yes |"},
		{"seam 7 row", string(doc), "| 17 | `a0_orchestration_gate` | `a0-wired` | `a0_wired_domain`, prompt | – | too late: never reaches the model | Agent Zero extension _17_orchestration_gate.py, ported. seam 7: "},
		{"key table", string(doc), "| `a0_wired_domain` | `google.protobuf.Value` | session | – | plugin `a0-wired` | `a0_classify` at message_loop_start |"},
		{"model edge", string(doc), " ==> model\n"},
		{"seam 7 edge", string(doc), " -. too late, never sent .-x model\n"},
		{"PORT.md links it", string(md), "[WIRING.md](WIRING.md)"},
		{"PORT.md lists the gate", string(md), "17 `a0_orchestration_gate` (" + base + "before_main_llm_call/_17_orchestration_gate.py) <- a0_wired_domain; reaches the model: never (seam 7)"},
	}
	for _, tt := range tests {
		if !strings.Contains(tt.in, tt.want) {
			t.Errorf("%s: %q not found in\n%s", tt.name, tt.want, tt.in)
		}
	}
	var sections []string
	for _, m := range regexp.MustCompile("(?m)^### \\d+\\. `(\\w+)`").FindAllStringSubmatch(string(doc), -1) {
		sections = append(sections, m[1])
	}
	if wantSections := []string{"message_loop_start", "message_loop_prompts_after", "before_main_llm_call", "tool_execute_after"}; !slices.Equal(sections, wantSections) {
		t.Errorf("WIRING.md's hook sections are %v, want %v (firing order, only hooks with a file)", sections, wantSections)
	}
	if strings.Contains(string(doc), "No extension.") {
		t.Error("WIRING.md of a ported tree lists hooks without a ported file")
	}
}
