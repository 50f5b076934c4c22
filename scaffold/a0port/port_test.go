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
