package extensions_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/exocortex/exocortex/"

// pkg is what `go list -json` says of a package, the fields the rules need.
type pkg struct {
	ImportPath string
	Imports    []string // non-test imports
	Deps       []string // every package it compiles in, transitively
}

// listPackages runs `go list -deps=false -json` over the module.
func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[strings.TrimPrefix(p.ImportPath, module)] = p
	}
	return pkgs
}

func trimmed(paths []string) []string {
	var out []string
	for _, p := range paths {
		if strings.HasPrefix(p, module) {
			out = append(out, strings.TrimPrefix(p, module))
		}
	}
	return out
}

// TestLayers enforces the import rules the tree relies on, from the compiled
// import graph (go list), so they stay true:
//
//   - an extension package (one that package builtin groups into a plugin)
//     imports no other extension package: what one extension needs of another
//     comes through declared state or a library package under extensions/ that
//     is not an extension (textfacts, turn, toolresult, shellparse, entities,
//     catalog, ...), so replacing one plugin changes what the others see only
//     through the state they declare;
//   - a library package under extensions/ compiles in no extension package;
//   - nothing under core/ compiles in extensions/, lint or wiring: the host
//     takes the wiring check as a function (core/wirecheck).
func TestLayers(t *testing.T) {
	pkgs := listPackages(t)
	builtin, ok := pkgs["extensions/builtin"]
	if !ok {
		t.Fatal("go list does not know extensions/builtin")
	}
	isExt := map[string]bool{}
	for _, imp := range trimmed(builtin.Imports) {
		if strings.HasPrefix(imp, "extensions/") {
			isExt[imp] = true
		}
	}
	if len(isExt) < 10 {
		t.Fatalf("builtin groups only %d extension packages; the rule would check nothing", len(isExt))
	}
	var names []string
	for name := range pkgs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := pkgs[name]
		switch {
		case isExt[name]:
			for _, imp := range trimmed(p.Imports) {
				if isExt[imp] {
					t.Errorf("extension package %s imports extension package %s: take what it needs through declared state, or move the shared code into a library package under extensions/ that is not an extension", name, imp)
				}
			}
		case strings.HasPrefix(name, "extensions/") && name != "extensions/builtin":
			for _, dep := range trimmed(p.Deps) {
				if isExt[dep] {
					t.Errorf("library package %s compiles in extension package %s: a library must not depend on an extension", name, dep)
				}
			}
		case strings.HasPrefix(name, "core/"):
			for _, dep := range trimmed(p.Deps) {
				if strings.HasPrefix(dep, "extensions/") || dep == "lint" || strings.HasPrefix(dep, "lint/") || dep == "wiring" {
					t.Errorf("core package %s compiles in %s: core is below the extensions, the lint and the wiring model (pass the check in, see core/wirecheck)", name, dep)
				}
			}
		}
	}
	// The named cases of issue 12, so a regression names them plainly.
	for _, tt := range []struct{ pkg, mustNot string }{
		{"extensions/recall", "extensions/belief"},
		{"extensions/reasoning", "extensions/boundary"},
		{"extensions/reasoning", "extensions/diagnosis"},
		{"core/host", "lint"},
		{"core/host", "wiring"},
	} {
		if slices.Contains(trimmed(pkgs[tt.pkg].Deps), tt.mustNot) {
			t.Errorf("%s compiles in %s", tt.pkg, tt.mustNot)
		}
	}
}
