package a0port

import (
	"path/filepath"
	"strings"
	"testing"
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
	for _, f := range r.Files {
		if strings.HasSuffix(f.Source, "_10_core_text.py") {
			if f.Status != statusNeedsHand || !strings.Contains(strings.Join(f.Notes, "\n"), "utility model") {
				t.Errorf("call_utility_model: status %q notes %v, want needs a hand mapped to the utility model", f.Status, f.Notes)
			}
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
