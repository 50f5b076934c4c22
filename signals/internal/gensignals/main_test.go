package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "signals_gen.go")
	py := filepath.Join(dir, "py", "exocortex", "signals.py")
	if err := run([]string{"-prompts", "../gen/testdata/prompts", "-out", out, "-py", py}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{out, py} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "DO NOT EDIT") || !strings.Contains(string(data), "loop_detected") {
			t.Errorf("%s:\n%s", f, data)
		}
	}
	// A second run with nothing changed leaves the file alone.
	before, _ := os.Stat(out)
	if err := run([]string{"-prompts", "../gen/testdata/prompts", "-out", out}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(out)
	if !before.ModTime().Equal(after.ModTime()) {
		t.Error("unchanged output was rewritten")
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	if err := run([]string{"-prompts", filepath.Join(dir, "missing"), "-out", filepath.Join(dir, "x.go")}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing prompt dir: %v", err)
	}
	bad := filepath.Join(dir, "prompts")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "a.md"), []byte("---\nsignal: same\n---\n"), 0o644)
	os.WriteFile(filepath.Join(bad, "b.md"), []byte("---\nsignal: same\n---\n"), 0o644)
	out := filepath.Join(dir, "x.go")
	err := run([]string{"-prompts", bad, "-out", out})
	if err == nil || !strings.Contains(err.Error(), "a.md") || !strings.Contains(err.Error(), "b.md") {
		t.Errorf("duplicate signal: %v", err)
	}
	if _, statErr := os.Stat(out); statErr == nil {
		t.Error("output written despite the error")
	}
}
