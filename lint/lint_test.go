package lint

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/wiring"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// seedModel is the clean fixture: the seed's system ported to Exocortex
// declarations, shared with package wiring's golden test.
const seedModel = "../wiring/testdata/seed.json"

// testCase is the JSON form of one fixture under testdata/findings: an Input and
// the findings it must produce.
type testCase struct {
	Model      json.RawMessage `json:"model"`
	PluginDirs []struct {
		Path   string `json:"path"`
		Source string `json:"source"`
	} `json:"plugin_dirs"`
	Around []string `json:"around"`
	Tree   []struct {
		Root string `json:"root"`
		Rel  string `json:"rel"`
		Dir  bool   `json:"dir"`
		Exec bool   `json:"exec"`
	} `json:"tree"`
	Problems []struct {
		Path  string `json:"path"`
		Error string `json:"error"`
	} `json:"problems"`
	Skipped []struct {
		Kind    string   `json:"kind"`
		Path    string   `json:"path"`
		Plugins []string `json:"plugins"`
		Message string   `json:"message"`
		Fix     string   `json:"fix"`
	} `json:"skipped"`
	PromptText []PromptText         `json:"prompt_text"`
	Ported     []Ported             `json:"ported"`
	Imports    []PluginImports      `json:"imports"`
	Secrets    []SecretRead         `json:"secret_reads"`
	Hooks      []CommandHookProblem `json:"command_hooks"`
	WiringPath string               `json:"wiring_path"`
	Wiring     *string              `json:"wiring"`
	// Want lists findings that must be reported, location fields exactly.
	Want []Finding `json:"want"`
}

func readCase(t *testing.T, path string) (Input, []Finding) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tc testCase
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&tc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	m, err := wiring.DecodeModel(tc.Model)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	in := Input{Model: m, Around: tc.Around, WiringPath: tc.WiringPath}
	sources := map[string]discover.Source{"project": discover.Project, "user": discover.User, "builtin": discover.Builtin, "config": discover.Extra}
	for _, d := range tc.PluginDirs {
		in.PluginDirs = append(in.PluginDirs, discover.Dir{Path: d.Path, Source: sources[d.Source]})
	}
	for _, e := range tc.Tree {
		in.Tree = append(in.Tree, Entry{Root: e.Root, Rel: e.Rel, Dir: e.Dir, Exec: e.Exec})
	}
	for _, p := range tc.Problems {
		in.Problems = append(in.Problems, discover.Problem{Path: p.Path, Err: errors.New(p.Error)})
	}
	for _, sk := range tc.Skipped {
		in.Skipped = append(in.Skipped, discover.Skip{Kind: discover.SkipKind(sk.Kind), Path: sk.Path, Plugins: sk.Plugins, Message: sk.Message, Fix: sk.Fix})
	}
	in.PromptText = tc.PromptText
	in.Ported = tc.Ported
	in.Imports = tc.Imports
	in.SecretReads = tc.Secrets
	in.CommandHooks = tc.Hooks
	if tc.Wiring != nil {
		in.Wiring = []byte(*tc.Wiring)
	}
	return in, tc.Want
}

func loadSeed(t testing.TB) Input {
	t.Helper()
	data, err := os.ReadFile(seedModel)
	if err != nil {
		t.Fatal(err)
	}
	m, err := wiring.DecodeModel(data)
	if err != nil {
		t.Fatal(err)
	}
	return Input{Model: m}
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
		t.Fatalf("%v (run go test ./lint -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (go test ./lint -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func text(t *testing.T, fs []Finding) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteText(&b, fs); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFindings runs every fixture under testdata/findings: each must report its
// wanted findings with the right code, severity and location, and its whole
// output must match the golden file beside it.
func TestFindings(t *testing.T) {
	files, err := filepath.Glob("testdata/findings/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	covered := map[string]bool{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			in, want := readCase(t, file)
			got := Check(in)
			if len(want) == 0 {
				t.Fatal("the fixture wants no finding; add a want list")
			}
			for _, w := range want {
				covered[w.Code] = true
				if !slices.ContainsFunc(got, func(f Finding) bool {
					return f.Code == w.Code && f.Severity == w.Severity && f.Plugin == w.Plugin &&
						f.Extension == w.Extension && f.Key == w.Key && f.File == w.File
				}) {
					t.Errorf("want %s %s at %q, got:\n%s", w.Severity, w.Code, w.Location(), text(t, got))
				}
			}
			for _, f := range got {
				if f.Message == "" || f.Fix == "" || strings.Contains(f.Fix, "\n") {
					t.Errorf("finding %s needs a message and a one-line fix: %+v", f.Code, f)
				}
			}
			golden(t, strings.TrimSuffix(file, ".json")+".golden", text(t, got))
		})
	}
	for _, c := range Codes() {
		if !covered[c.Code] {
			t.Errorf("no fixture under testdata/findings wants %s", c.Code)
		}
	}
}

// TestCleanSeed checks the seed's system, ported, and finds no error and no
// warning; its informational findings are pinned by a golden file.
func TestCleanSeed(t *testing.T) {
	in := loadSeed(t)
	got := Check(in)
	if e, w, _ := Count(got); e+w > 0 {
		t.Fatalf("the clean fixture has %d errors and %d warnings:\n%s", e, w, text(t, got))
	}
	golden(t, "testdata/clean.golden", text(t, got))
}

func TestCheckIsDeterministic(t *testing.T) {
	in := loadSeed(t)
	first := text(t, Check(in))
	for range 5 {
		slices.Reverse(in.Plugins)
		if got := text(t, Check(in)); !bytes.Equal(got, first) {
			t.Fatalf("findings depend on the plugins' order:\n%s\nvs\n%s", got, first)
		}
	}
}

func TestCodesAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/lint-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	prev := ""
	for _, c := range Codes() {
		if c.Code <= prev {
			t.Errorf("codes out of order: %s after %s", c.Code, prev)
		}
		prev = c.Code
		if !bytes.Contains(doc, []byte("| "+c.Code+" |")) {
			t.Errorf("docs/lint-codes.md has no row for %s", c.Code)
		}
	}
}
