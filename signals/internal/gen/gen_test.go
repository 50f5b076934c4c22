package gen

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestGolden(t *testing.T) {
	sigs, err := Collect(os.DirFS("testdata/prompts"), "prompts")
	if err != nil {
		t.Fatal(err)
	}
	goSrc, err := Go(sigs)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/signals_gen.go.golden", goSrc)
	golden(t, "testdata/signals.py.golden", Python(sigs))

	var values []string
	for _, s := range sigs {
		values = append(values, s.Value+"="+s.GoName+"="+s.PyName)
	}
	want := "alpha2=Alpha2=ALPHA2 bad_tool_id=BadToolID=BAD_TOOL_ID loop_detected=LoopDetected=LOOP_DETECTED"
	if got := strings.Join(values, " "); got != want {
		t.Errorf("signals = %s\nwant      %s", got, want)
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the generator's output (go test -update rewrites it):\n%s", path, got)
	}
}

// TestDeterministic reruns the generator: map iteration order must not leak
// into the output.
func TestDeterministic(t *testing.T) {
	first := generate(t, os.DirFS("testdata/prompts"))
	for i := 0; i < 20; i++ {
		if again := generate(t, os.DirFS("testdata/prompts")); !bytes.Equal(first, again) {
			t.Fatal("generator output differs between runs")
		}
	}
}

func generate(t *testing.T, fsys fs.FS) []byte {
	t.Helper()
	sigs, err := Collect(fsys, "prompts")
	if err != nil {
		t.Fatal(err)
	}
	src, err := Go(sigs)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestCollectErrors(t *testing.T) {
	tests := []struct {
		name  string
		files fstest.MapFS
		want  []string // every substring must appear in the error
	}{
		{
			name: "same signal twice",
			files: fstest.MapFS{
				"fw.one.md": {Data: []byte("---\nsignal: repeat\n---\nA")},
				"fw.two.md": {Data: []byte("---\nsignal: repeat\n---\nB")},
			},
			want: []string{`"repeat"`, "fw.one.md", "fw.two.md"},
		},
		{
			name:  "malformed name",
			files: fstest.MapFS{"fw.bad.md": {Data: []byte("---\nsignal: Tool-Blocked\n---\n")}},
			want:  []string{"fw.bad.md", `"Tool-Blocked"`, "snake_case"},
		},
		{
			name:  "reserved name",
			files: fstest.MapFS{"fw.all.md": {Data: []byte("---\nsignal: all\n---\n")}},
			want:  []string{"prompts/fw.all.md", "reserved"},
		},
		{
			name: "two values, one Go name",
			files: fstest.MapFS{
				"fw.a.md": {Data: []byte("---\nsignal: tool2\n---\n")},
				"fw.b.md": {Data: []byte("---\nsignal: tool_2\n---\n")},
			},
			want: []string{"prompts/fw.a.md", "prompts/fw.b.md", "Tool2"},
		},
		{
			name:  "unterminated header",
			files: fstest.MapFS{"fw.open.md": {Data: []byte("---\nsignal: open\n")}},
			want:  []string{"fw.open.md", "never closed"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Collect(tc.files, "prompts")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestEmpty(t *testing.T) {
	src := generate(t, fstest.MapFS{"plain.md": {Data: []byte("text")}})
	if !bytes.Contains(src, []byte("func Known(s string) bool")) || bytes.Contains(src, []byte("const (")) {
		t.Errorf("empty signal set:\n%s", src)
	}
}

// TestPythonCompiles checks the Python output with the interpreter when one is
// installed.
func TestPythonCompiles(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	sigs, err := Collect(os.DirFS("testdata/prompts"), "prompts")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mod := filepath.Join(dir, "signals.py")
	if err := os.WriteFile(mod, Python(sigs), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "import sys; sys.path.insert(0, sys.argv[1]); import signals as s; " +
		"assert s.BAD_TOOL_ID == 'bad_tool_id'; assert s.known('alpha2'); assert not s.known('nope'); " +
		"assert len(s.ALL) == 3"
	if out, err := exec.Command(python, "-c", script, dir).CombinedOutput(); err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
}
