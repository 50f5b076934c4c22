package a0port

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNeedsPython(t *testing.T) {
	tests := []struct {
		code string
		have pyVersion
		want string // "" when the file runs on have
		line int
	}{
		{"from typing import override\n", pyVersion{3, 11}, "3.12", 1},
		{"from typing import override\n", pyVersion{3, 13}, "", 0},
		{"import os\nfrom typing import (Self, Any)\n", pyVersion{3, 10}, "3.11", 2},
		{"import tomllib\nfrom warnings import deprecated\n", pyVersion{3, 11}, "3.13", 2},
		{"from typing import Any\n", pyVersion{3, 9}, "", 0},
	}
	for _, tt := range tests {
		need, line, _ := needsPython([]byte(tt.code), tt.have)
		got := ""
		if line > 0 {
			got = need.String()
		}
		if got != tt.want || line != tt.line {
			t.Errorf("%q on %s: needs %q at line %d, want %q at %d", tt.code, tt.have, got, line, tt.want, tt.line)
		}
	}
}

// TestPortNamesThePythonAFileNeeds ports a file that imports typing.override
// for the SDK's interpreter (Debian's, 3.11 here): when it is older than 3.12,
// the file needs a hand and the report names the version and the fix.
func TestPortNamesThePythonAFileNeeds(t *testing.T) {
	tree := t.TempDir()
	p := filepath.Join(tree, "extensions", "python", "monologue_start", "_10_new.py")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	code := "from typing import override\nfrom helpers.extension import Extension\n\n\nclass New(Extension):\n    @override\n    async def execute(self, **kwargs):\n        return None\n"
	if err := os.WriteFile(p, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Analyze(t.Context(), tree, "a0-new")
	if err != nil {
		t.Fatal(err)
	}
	have, err := interpreterVersion(t.Context(), r.Python)
	if err != nil {
		t.Skip(err)
	}
	f := r.Files[0]
	notes := strings.Join(f.Notes, "\n")
	if have.less(pyVersion{3, 12}) {
		if f.Status != statusNeedsHand || !strings.Contains(notes, "typing.override needs Python 3.12") || !strings.Contains(notes, "python: in config.yaml or --python") {
			t.Errorf("on Python %s: %s %q, want it to need a hand for 3.12", have, f.Status, f.Notes)
		}
	} else if strings.Contains(notes, "needs Python") {
		t.Errorf("on Python %s: %q", have, f.Notes)
	}
	if r.PythonVersion != have.String() {
		t.Errorf("report's Python version %q, want %s", r.PythonVersion, have)
	}
}
