package discover

import (
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path string, mode os.FileMode, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

func TestScan(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "project")
	user := filepath.Join(root, "user")
	write(t, filepath.Join(proj, "recall"), 0o755, "#!/bin/sh\n")
	write(t, filepath.Join(proj, "notes.md"), 0o755, "docs")
	write(t, filepath.Join(proj, ".hidden"), 0o755, "")
	write(t, filepath.Join(proj, "recall-go-tmp-umask"), 0o755, "")
	write(t, filepath.Join(user, "recall"), 0o755, "#!/bin/sh\n")
	write(t, filepath.Join(user, "readonly.py"), 0o644, "")
	write(t, filepath.Join(user, "py", "plugin.json"), 0o644, `{"command": ["python3", "./main.py"]}`)
	write(t, filepath.Join(user, "gobin", "gobin"), 0o755, "")
	write(t, filepath.Join(user, "nested", "deeper", "deeper"), 0o755, "")
	write(t, filepath.Join(user, "broken", "plugin.json"), 0o644, `{"cmd": 1}`)

	res := Scan([]Dir{{proj, Project}, {user, User}, {filepath.Join(root, "missing"), Builtin}})
	var names []string
	for _, c := range res.Plugins {
		names = append(names, c.Name+"@"+c.Dir.Source.String())
	}
	want := []string{"recall@project", "gobin@user", "py@user"}
	if len(names) != len(want) {
		t.Fatalf("plugins = %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("plugins = %v, want %v", names, want)
		}
	}
	if len(res.Shadowed) != 1 || res.Shadowed[0].Hidden.Dir.Source != User || res.Shadowed[0].By.Dir.Source != Project {
		t.Fatalf("shadowed = %+v", res.Shadowed)
	}
	py := res.Plugins[2]
	if py.Command[0] != "python3" || py.Command[1] != "./main.py" || py.WorkDir != filepath.Join(user, "py") {
		t.Fatalf("python plugin command = %v in %s", py.Command, py.WorkDir)
	}
	if len(res.Problems) != 1 || res.Problems[0].Path != filepath.Join(user, "broken") {
		t.Fatalf("problems = %+v", res.Problems)
	}
}

// TestScanReportsSkips: what looks meant to load but does not is listed in
// Skipped, each with a fix: a file without its execute bit (a script, a
// numbered file, a binary or #! file, a plugin directory's file of its own
// name), and a configured directory that does not exist. A missing project or
// user directory and ordinary files are not.
func TestScanReportsSkips(t *testing.T) {
	root := t.TempDir()
	user := filepath.Join(root, "user")
	write(t, filepath.Join(user, "recall.py"), 0o644, "print(1)\n")
	write(t, filepath.Join(user, "_50_gate"), 0o644, "")
	write(t, filepath.Join(user, "gobin"), 0o644, "\x7fELF\x02\x01")
	write(t, filepath.Join(user, "shscript"), 0o644, "#!/bin/sh\n")
	write(t, filepath.Join(user, "sub", "sub"), 0o644, "#!/bin/sh\n")
	write(t, filepath.Join(user, "notes"), 0o644, "just text")
	write(t, filepath.Join(user, "ok"), 0o755, "#!/bin/sh\n")
	missing := filepath.Join(root, "configured-but-missing")

	res := Scan([]Dir{{filepath.Join(root, "no-project"), Project}, {user, User}, {missing, Extra}})
	got := map[string]SkipKind{}
	for _, s := range res.Skipped {
		got[s.Path] = s.Kind
		if s.Message == "" || s.Fix == "" {
			t.Errorf("skip %s has no message or fix: %+v", s.Path, s)
		}
	}
	want := map[string]SkipKind{
		filepath.Join(user, "recall.py"):  NotExecutable,
		filepath.Join(user, "_50_gate"):   NotExecutable,
		filepath.Join(user, "gobin"):      NotExecutable,
		filepath.Join(user, "shscript"):   NotExecutable,
		filepath.Join(user, "sub", "sub"): NotExecutable,
		missing:                           MissingDir,
	}
	if len(got) != len(want) {
		t.Errorf("skipped = %v\nwant %v", got, want)
	}
	for p, k := range want {
		if got[p] != k {
			t.Errorf("skipped[%s] = %q, want %q", p, got[p], k)
		}
	}
	if len(res.Plugins) != 1 || res.Plugins[0].Name != "ok" {
		t.Errorf("plugins = %+v", res.Plugins)
	}
}
