package writeguard

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func setup(t *testing.T) (Paths, exocortexv1.PluginClient) {
	t.Helper()
	p := Paths{Home: t.TempDir(), Roots: []string{t.TempDir()}}
	load := func() (Paths, error) { return p, nil }
	client := sdktest.Serve(t, sdk.Plugin{Name: "safety",
		Extensions: []sdk.Extension{Guard{Paths: load}, Validator{Paths: load}},
		Tools:      []sdk.Tool{RestoreTool(load)}})
	return p, client
}

func editorCall(action, path, content string) *exocortexv1.ToolCall {
	b, _ := json.Marshal(map[string]string{"action": action, "path": path, "content": content})
	return &exocortexv1.ToolCall{Name: "text_editor", ArgsJson: string(b)}
}

func TestGuardValidatorRestore(t *testing.T) {
	p, client := setup(t)
	file := filepath.Join(p.Roots[0], "main.go")
	orig := "package main\n\nfunc main() {}\n"
	if err := os.WriteFile(file, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := "package main\n\nfunc main() {\n\tprintln(\"hi\")\n"
	tc := editorCall("write", "main.go", broken)
	resp, err := client.ToolExecuteBefore(t.Context(), &exocortexv1.ToolExecuteBeforeRequest{Call: sdktest.Call("write_guard"), ToolCall: tc})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetBlock() != nil {
		t.Fatal("the guard blocked a write")
	}
	wl, ok := sdktest.Written(t, resp.GetChanges(), logKey())
	if !ok || len(wl.GetWrites()) != 1 || wl.GetWrites()[0].GetBackup() == "" || wl.GetWrites()[0].GetSizeBefore() != int64(len(orig)) {
		t.Fatalf("write_log %v", wl)
	}
	if b, err := os.ReadFile(wl.GetWrites()[0].GetBackup()); err != nil || string(b) != orig {
		t.Fatalf("backup holds %q (%v)", b, err)
	}
	// The tool writes the truncated file; the validator catches it.
	if err := os.WriteFile(file, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	aresp, err := client.ToolExecuteAfter(t.Context(), &exocortexv1.ToolExecuteAfterRequest{
		Call: sdktest.Call("write_validator", sdktest.State(logKey(), wl)), ToolCall: tc, Result: &exocortexv1.ToolResult{Content: "Wrote main.go"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if a := aresp.GetAnnotations(); len(a) != 1 || !strings.Contains(a[0], "truncated") || !strings.Contains(a[0], "restore_backup") {
		t.Fatalf("annotations %q", a)
	}
	if wl2, _ := sdktest.Written(t, aresp.GetChanges(), logKey()); !wl2.GetWrites()[0].GetValidated() || wl2.GetWrites()[0].GetProblem() == "" {
		t.Fatalf("write_log after validation: %v", wl2)
	}
	// restore_backup puts the original back.
	out, err := client.ExecuteTool(t.Context(), &exocortexv1.ExecuteToolRequest{Call: sdktest.Call("restore_backup"), ToolCall: &exocortexv1.ToolCall{Name: "restore_backup", ArgsJson: `{"path":"main.go"}`}})
	if err != nil || out.GetResult().GetError() != "" {
		t.Fatalf("restore: %v %v", out, err)
	}
	if b, _ := os.ReadFile(file); string(b) != orig {
		t.Fatalf("after restore: %q", b)
	}
	// A new file's restore removes it.
	newTC := editorCall("write", "new.txt", "x")
	if _, err := client.ToolExecuteBefore(t.Context(), &exocortexv1.ToolExecuteBeforeRequest{Call: sdktest.Call("write_guard"), ToolCall: newTC}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(p.Roots[0], "new.txt"), []byte("x"), 0o644)
	out, err = client.ExecuteTool(t.Context(), &exocortexv1.ExecuteToolRequest{Call: sdktest.Call("restore_backup"), ToolCall: &exocortexv1.ToolCall{Name: "restore_backup", ArgsJson: `{"path":"new.txt"}`}})
	if err != nil || !strings.Contains(out.GetResult().GetContent(), "removed") {
		t.Fatalf("restore of a new file: %v %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(p.Roots[0], "new.txt")); !os.IsNotExist(err) {
		t.Fatal("the new file is still there")
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, content, sent, want string
	}{
		{"ok.go", "package a\n", "", ""},
		{"bad.go", "package a\nfunc f() { x := }\n", "", "Go syntax error"},
		{"ok.json", `{"a": [1, 2]}`, "", ""},
		{"cut.json", `{"a": [1, 2`, "", "truncated"},
		{"bad.json", `{"a": 1,}`, "", "JSON syntax error"},
		{"ok.yaml", "a: 1\nb: [x, y]\n", "", ""},
		{"bad.yaml", "a: [1, 2\nb: 3\n", "", "YAML"},
		{"elided.go", "package a\n\n// ... rest of the code unchanged\n", "", "placeholder"},
		{"short.txt", "abc", "abcdef", "truncated: the file has 3 bytes, the write sent 6"},
		{"cut.js", "function f() {\n  return [1, 2\n", "", "never closed"},
	}
	for _, tt := range tests {
		got := Validate(write(tt.name, tt.content), tt.sent, tt.sent != "")
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if _, err := exec.LookPath("python3"); err == nil {
		if got := Validate(write("cut.py", "def f(:\n  return [1,\n"), "", false); got == "" {
			t.Error("python syntax error not found")
		}
		if got := Validate(write("ok.py", "def f():\n    return 1\n"), "", false); got != "" {
			t.Errorf("ok.py: %s", got)
		}
	}
}

// TestLinksToTheOutside: the guard and restore_backup resolve paths as the
// kernel does at the moment they touch the file. A write through a link that
// leads outside the roots is not backed up (nothing from outside is copied
// into backups/), and a restore through a directory that became a link to the
// outside fails and leaves the outside alone.
func TestLinksToTheOutside(t *testing.T) {
	for _, tt := range []struct {
		name string
		// prepare runs after the backup was taken and before the restore.
		prepare func(t *testing.T, root, outside string)
		path    string
	}{
		{"a directory replaced by a link", func(t *testing.T, root, outside string) {
			if err := os.RemoveAll(filepath.Join(root, "sub")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(root, "sub")); err != nil {
				t.Fatal(err)
			}
		}, "sub/notes.txt"},
		{"a climb through a link", func(t *testing.T, root, outside string) {
			if err := os.Symlink(outside, filepath.Join(root, "sub", "up")); err != nil {
				t.Fatal(err)
			}
		}, "sub/up/../notes.txt"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, client := setup(t)
			root, outside := p.Roots[0], t.TempDir()
			os.MkdirAll(filepath.Join(root, "sub"), 0o755)
			os.WriteFile(filepath.Join(root, "sub", "notes.txt"), []byte("inside v1"), 0o644)
			os.WriteFile(filepath.Join(outside, "notes.txt"), []byte("OUTSIDE SECRET"), 0o644)
			// A backup of the inside file, taken while sub is a directory.
			if _, err := client.ToolExecuteBefore(t.Context(), &exocortexv1.ToolExecuteBeforeRequest{
				Call: sdktest.Call("write_guard"), ToolCall: editorCall("write", "sub/notes.txt", "inside v2")}); err != nil {
				t.Fatal(err)
			}
			tt.prepare(t, root, outside)
			// A write now would land outside: the guard copies nothing.
			if _, err := client.ToolExecuteBefore(t.Context(), &exocortexv1.ToolExecuteBeforeRequest{
				Call: sdktest.Call("write_guard"), ToolCall: editorCall("write", tt.path, "x")}); err != nil {
				t.Fatal(err)
			}
			filepath.Walk(filepath.Join(p.Home, BackupDir), func(path string, info os.FileInfo, err error) error {
				if b, _ := os.ReadFile(path); info != nil && !info.IsDir() && strings.Contains(string(b), "OUTSIDE SECRET") {
					t.Errorf("the outside file was copied into the backups: %s", path)
				}
				return nil
			})
			// The restore goes through the link: it fails.
			b, _ := json.Marshal(map[string]string{"path": "sub/notes.txt"})
			resp, err := client.ExecuteTool(t.Context(), &exocortexv1.ExecuteToolRequest{
				Call: sdktest.Call("restore_backup"), ToolCall: &exocortexv1.ToolCall{Name: "restore_backup", ArgsJson: string(b)}})
			if err != nil {
				t.Fatal(err)
			}
			if tt.name == "a directory replaced by a link" && resp.GetResult().GetError() == "" {
				t.Errorf("the restore through a link to the outside succeeded: %q", resp.GetResult().GetContent())
			}
			if got, _ := os.ReadFile(filepath.Join(outside, "notes.txt")); string(got) != "OUTSIDE SECRET" {
				t.Errorf("the outside file now holds %q", got)
			}
		})
	}
}
