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
