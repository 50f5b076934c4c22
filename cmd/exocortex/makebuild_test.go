package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBuildScriptShowsProgress runs scripts/build.sh (make build's and make
// run's build) on a small module of its own: it says what it builds, counts
// what it compiles, prints none of go build -v's bare package lines, passes a
// compiler error through and keeps go build's exit status.
func TestBuildScriptShowsProgress(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "scripts/build.sh $(BIN) ./cmd/exocortex") {
		t.Error("make build does not use scripts/build.sh")
	}
	bare := regexp.MustCompile(`(?m)^[A-Za-z0-9._/~-]+$`)
	cases := []struct {
		name     string
		main     string
		code     int
		want     []string
		wantFile bool
	}{
		{name: "builds", main: "package main\n\nimport \"progressmod/lib\"\n\nfunc main() { lib.Hello() }\n",
			want: []string{"build: ", "from ./cmd/app", "packages compiled"}, wantFile: true},
		{name: "compiler error", main: "package main\n\nfunc main() { undefinedThing() }\n", code: 1,
			want: []string{"undefined: undefinedThing", "build: go build ./cmd/app failed (exit 1)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{
				"go.mod":          "module progressmod\n\ngo 1.22\n",
				"lib/lib.go":      "package lib\n\n// Hello is here to be compiled.\nfunc Hello() { println(\"" + tc.name + "\") }\n",
				"cmd/app/main.go": tc.main,
			}
			for name, body := range files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(dir, "bin", "app")
			cmd := exec.Command("bash", script, out, "./cmd/app")
			cmd.Dir = dir
			b, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			text := string(b)
			if code != tc.code {
				t.Fatalf("exit %d, want %d:\n%s", code, tc.code, text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("output lacks %q:\n%s", w, text)
				}
			}
			if m := bare.FindString(text); m != "" {
				t.Errorf("a bare go build -v line %q:\n%s", m, text)
			}
			if _, err := os.Stat(out); (err == nil) != tc.wantFile {
				t.Errorf("binary there: %v, want %v", err == nil, tc.wantFile)
			}
		})
	}
}
