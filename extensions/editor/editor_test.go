package editor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
	"github.com/exocortex/exocortex/toolsettings"
)

type harness struct {
	t       *testing.T
	client  exocortexv1.PluginClient
	root    string // the first root, as configured
	other   string // the second root
	outside string // a directory outside both
}

// serve sets up two roots and an outside directory, and serves the editor.
func serve(t *testing.T) *harness {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, root: filepath.Join(base, "project"), other: filepath.Join(base, "data"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{h.root, h.other, h.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e := New(Fixed(toolsettings.Editor{Roots: []string{h.root, h.other}, MaxReadLines: 5}))
	h.client = sdktest.Serve(t, sdk.Plugin{Name: "editor", Version: "test", Tools: []sdk.Tool{e.Tool()}})
	return h
}

func (h *harness) run(args map[string]any) *exocortexv1.ToolResult {
	h.t.Helper()
	b, _ := json.Marshal(args)
	resp, err := h.client.ExecuteTool(h.t.Context(), &exocortexv1.ExecuteToolRequest{
		Call:     sdktest.Call(ToolName),
		ToolCall: &exocortexv1.ToolCall{Name: ToolName, ArgsJson: string(b)},
	})
	if err != nil {
		h.t.Fatalf("ExecuteTool(%s): %v", b, err)
	}
	return resp.GetResult()
}

func (h *harness) ok(args map[string]any) string {
	h.t.Helper()
	res := h.run(args)
	if res.GetError() != "" {
		h.t.Fatalf("%v: %s", args, res.GetError())
	}
	return res.GetContent()
}

func (h *harness) file(path, content string) {
	h.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) symlink(target, link string) {
	h.t.Helper()
	if err := os.Symlink(target, link); err != nil {
		h.t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadLineRanges(t *testing.T) {
	h := serve(t)
	h.file(filepath.Join(h.root, "seven.txt"), "one\ntwo\nthree\nfour\nfive\nsix\nseven\n")
	got := h.ok(map[string]any{"action": "read", "path": "seven.txt", "line_from": 2, "line_to": "3"})
	if got != "seven.txt, lines 2-3 of 7:\n     2\ttwo\n     3\tthree" {
		t.Errorf("range read:\n%s", got)
	}
	got = h.ok(map[string]any{"action": "read", "path": "seven.txt"})
	if !strings.HasPrefix(got, "seven.txt, lines 1-5 of 7:") || !strings.HasSuffix(got, "[lines 6-7 not shown (at most 5 lines per read): read them with line_from 6]") {
		t.Errorf("capped read:\n%s", got)
	}
	got = h.ok(map[string]any{"action": "view", "path": "seven.txt", "line_from": 7, "line_to": 100})
	if got != "seven.txt, lines 7-7 of 7:\n     7\tseven" {
		t.Errorf("tail read:\n%s", got)
	}
	if got := h.ok(map[string]any{"action": "read", "path": "."}); !strings.Contains(got, "seven.txt") {
		t.Errorf("directory listing:\n%s", got)
	}
	h.file(filepath.Join(h.root, "bin.dat"), "ab\x00cd")
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"action": "read", "path": "seven.txt", "line_from": 9}, "past the end: seven.txt has 7 lines"},
		{map[string]any{"action": "read", "path": "seven.txt", "line_from": 3, "line_to": 2}, "line_to 2 is before line_from 3"},
		{map[string]any{"action": "read", "path": "missing.txt"}, "missing.txt does not exist"},
		{map[string]any{"action": "read", "path": "bin.dat"}, "looks binary"},
		{map[string]any{"action": "delete", "path": "seven.txt"}, `unknown action "delete"`},
		{map[string]any{"action": "read"}, `"path" is empty`},
	} {
		if res := h.run(tt.args); !strings.Contains(res.GetError(), tt.want) {
			t.Errorf("%v: error %q, want %q", tt.args, res.GetError(), tt.want)
		}
	}
}

func TestWriteAndPatch(t *testing.T) {
	h := serve(t)
	got := h.ok(map[string]any{"action": "write", "path": "src/new/main.go", "content": "package main\n\nfunc main() {\n\tprintln(1)\n}\n"})
	if got != "Wrote src/new/main.go (created): 5 lines, 42 bytes." {
		t.Errorf("write: %q", got)
	}
	path := filepath.Join(h.root, "src", "new", "main.go")
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	got = h.ok(map[string]any{"action": "patch", "path": "src/new/main.go", "old_text": "\tprintln(1)\n", "new_text": "\tprintln(2)\n\tprintln(3)\n"})
	if !strings.HasPrefix(got, "Patched src/new/main.go: replaced 1 line(s) from line 4 with 2 line(s). Now:") || !strings.Contains(got, "     5\t\tprintln(3)") {
		t.Errorf("patch:\n%s", got)
	}
	if want := "package main\n\nfunc main() {\n\tprintln(2)\n\tprintln(3)\n}\n"; readFile(t, path) != want {
		t.Errorf("after patch:\n%s", readFile(t, path))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("patch changed the permissions to %v", fi.Mode().Perm())
	}

	// Zero and several occurrences are errors that change nothing.
	before := readFile(t, path)
	res := h.run(map[string]any{"action": "patch", "path": "src/new/main.go", "old_text": "println(4)", "new_text": "x"})
	if !strings.Contains(res.GetError(), "old_text was not found in src/new/main.go, so nothing was changed") {
		t.Errorf("zero occurrences: %q", res.GetError())
	}
	res = h.run(map[string]any{"action": "patch", "path": "src/new/main.go", "old_text": "func  main()", "new_text": "x"})
	if !strings.Contains(res.GetError(), "at line 3") {
		t.Errorf("near miss not pointed at: %q", res.GetError())
	}
	res = h.run(map[string]any{"action": "patch", "path": "src/new/main.go", "old_text": "println", "new_text": "print"})
	if !strings.Contains(res.GetError(), "old_text occurs 2 times in src/new/main.go (at lines 4, 5), so nothing was changed") {
		t.Errorf("two occurrences: %q", res.GetError())
	}
	res = h.run(map[string]any{"action": "patch", "path": "src/new/main.go", "old_text": "println(2)"})
	if !strings.Contains(res.GetError(), `patch needs "new_text"`) {
		t.Errorf("missing new_text: %q", res.GetError())
	}
	if readFile(t, path) != before {
		t.Errorf("a failed patch changed the file")
	}
	// Deleting a passage.
	h.ok(map[string]any{"action": "patch", "path": "src/new/main.go", "old_text": "\tprintln(3)\n", "new_text": ""})
	if strings.Contains(readFile(t, path), "println(3)") {
		t.Errorf("deletion did not happen")
	}
	// Windows line ends in the file, Unix ones from the model.
	h.file(filepath.Join(h.root, "dos.txt"), "a\r\nb\r\nc\r\n")
	h.ok(map[string]any{"action": "patch", "path": "dos.txt", "old_text": "a\nb", "new_text": "A\nB"})
	if got := readFile(t, filepath.Join(h.root, "dos.txt")); got != "A\r\nB\r\nc\r\n" {
		t.Errorf("CRLF patch: %q", got)
	}
	// An empty write is allowed, a missing content is not.
	h.ok(map[string]any{"action": "write", "path": "empty.txt", "content": ""})
	if res := h.run(map[string]any{"action": "write", "path": "x.txt"}); !strings.Contains(res.GetError(), `write needs "content"`) {
		t.Errorf("missing content: %q", res.GetError())
	}
	if res := h.run(map[string]any{"action": "write", "path": "src", "content": "x"}); !strings.Contains(res.GetError(), "src is a directory") {
		t.Errorf("write to a directory: %q", res.GetError())
	}
}

// TestConfinement tries every way out of the roots, for reads and writes.
func TestConfinement(t *testing.T) {
	h := serve(t)
	secret := filepath.Join(h.outside, "secret.txt")
	h.file(secret, "top secret\n")
	h.file(filepath.Join(h.root, "inside.txt"), "fine\n")
	h.file(filepath.Join(h.other, "data.csv"), "a,b\n")
	// Links that leave: to a file, to a directory, dangling to a place outside,
	// and a link inside a linked directory chain.
	h.symlink(secret, filepath.Join(h.root, "file-link"))
	h.symlink(h.outside, filepath.Join(h.root, "dir-link"))
	h.symlink(filepath.Join(h.outside, "not-yet.txt"), filepath.Join(h.root, "dangling"))
	h.symlink("../outside", filepath.Join(h.root, "relative-dir-link"))
	if err := os.MkdirAll(filepath.Join(h.root, "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.symlink("../dir-link", filepath.Join(h.root, "deep", "hop"))
	// Links that stay inside are fine.
	h.symlink("inside.txt", filepath.Join(h.root, "good-link"))
	h.symlink(h.other, filepath.Join(h.root, "to-other-root"))
	h.symlink("later.txt", filepath.Join(h.root, "dangling-inside"))

	escapes := []string{
		"../outside/secret.txt",
		"sub/../../outside/secret.txt",
		"..",
		secret,
		"/etc/passwd",
		filepath.Join(h.root, "..", "outside", "secret.txt"),
		"file-link",
		"dir-link/secret.txt",
		"dir-link/new.txt",
		"dir-link/sub/new.txt",
		"relative-dir-link/secret.txt",
		"deep/hop/secret.txt",
		"dangling",
	}
	for _, p := range escapes {
		for _, args := range []map[string]any{
			{"action": "read", "path": p},
			{"action": "write", "path": p, "content": "pwned\n"},
			{"action": "patch", "path": p, "old_text": "top secret", "new_text": "pwned"},
		} {
			res := h.run(args)
			if !strings.Contains(res.GetError(), "is refused") || !strings.Contains(res.GetError(), h.root) {
				t.Errorf("%s %q: not refused: error %q, content %q", args["action"], p, res.GetError(), res.GetContent())
			}
		}
	}
	if got := readFile(t, secret); got != "top secret\n" {
		t.Fatalf("the file outside was changed: %q", got)
	}
	for _, p := range []string{"new.txt", "not-yet.txt", "sub/new.txt"} {
		if _, err := os.Stat(filepath.Join(h.outside, p)); err == nil {
			t.Errorf("%s was created outside the roots", p)
		}
	}

	// Allowed: plain, absolute inside, the second root, links that stay inside.
	for _, p := range []string{"inside.txt", filepath.Join(h.root, "inside.txt"), "good-link", "sub/../inside.txt"} {
		if got := h.ok(map[string]any{"action": "read", "path": p}); !strings.Contains(got, "fine") {
			t.Errorf("read %q: %q", p, got)
		}
	}
	for _, p := range []string{filepath.Join(h.other, "data.csv"), "to-other-root/data.csv"} {
		if got := h.ok(map[string]any{"action": "read", "path": p}); !strings.Contains(got, "a,b") {
			t.Errorf("read %q: %q", p, got)
		}
	}
	// A dangling link inside creates its target inside.
	h.ok(map[string]any{"action": "write", "path": "dangling-inside", "content": "later\n"})
	if got := readFile(t, filepath.Join(h.root, "later.txt")); got != "later\n" {
		t.Errorf("write through a dangling inside link: %q", got)
	}
	h.ok(map[string]any{"action": "write", "path": "good-link", "content": "through the link\n"})
	if got := readFile(t, filepath.Join(h.root, "inside.txt")); got != "through the link\n" {
		t.Errorf("write through an inside link: %q", got)
	}
}

// A root that is itself a symbolic link works, and paths through its link name
// stay inside.
func TestRootBehindALink(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "real")
	link := filepath.Join(base, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	e := New(Fixed(toolsettings.Editor{Roots: []string{link}}))
	client := sdktest.Serve(t, sdk.Plugin{Name: "editor", Version: "test", Tools: []sdk.Tool{e.Tool()}})
	for _, p := range []string{"a.txt", filepath.Join(link, "b.txt"), filepath.Join(real, "c.txt")} {
		b, _ := json.Marshal(map[string]any{"action": "write", "path": p, "content": "x"})
		resp, err := client.ExecuteTool(t.Context(), &exocortexv1.ExecuteToolRequest{
			Call: sdktest.Call(ToolName), ToolCall: &exocortexv1.ToolCall{Name: ToolName, ArgsJson: string(b)}})
		if err != nil || resp.GetResult().GetError() != "" {
			t.Errorf("write %s: %v %q", p, err, resp.GetResult().GetError())
		}
	}
	// A missing root is a clear configuration error.
	e = New(Fixed(toolsettings.Editor{Roots: []string{filepath.Join(base, "nope")}}))
	client = sdktest.Serve(t, sdk.Plugin{Name: "editor", Version: "test", Tools: []sdk.Tool{e.Tool()}})
	resp, err := client.ExecuteTool(t.Context(), &exocortexv1.ExecuteToolRequest{
		Call: sdktest.Call(ToolName), ToolCall: &exocortexv1.ToolCall{Name: ToolName, ArgsJson: `{"action":"read","path":"a"}`}})
	if err != nil || !strings.Contains(resp.GetResult().GetError(), "tools.editor.roots") {
		t.Errorf("missing root: %v %q", err, resp.GetResult().GetError())
	}
}
