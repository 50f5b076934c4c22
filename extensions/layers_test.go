package extensions_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/exocortex/exocortex/"

// pkg is what `go list -json` says of a package, the fields the rules need,
// with the module's prefix trimmed and only the module's own packages kept.
type pkg struct {
	ImportPath string
	Imports    []string // non-test imports: a test may use the SDK to build a plugin
}

// awaitingMemoryService lists the extension packages that still import the
// host's memory store or staging log (memory, memory/embed, staging) at the
// time of writing, and only those: the issue "One memory service per home"
// moves them onto the memory API of the Host service, and removes each entry
// here as it does. An entry whose package no longer imports any of them fails
// the test, so the list cannot outlive its reason; a package not listed that
// imports them fails too.
var awaitingMemoryService = map[string]bool{}

// listPackages runs `go list -json` over the module.
func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "list", "-json", module+"...")
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
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		p.Imports = trimmed(p.Imports)
		pkgs[p.ImportPath] = p
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

// under reports whether path is dir or inside it.
func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

// isExtension reports whether path is an extension package: a folder of
// extensions/ other than the shared libraries (extensions/internal/...) and the
// package that groups the extensions into plugins (extensions/builtin).
func isExtension(path string) bool {
	return strings.HasPrefix(path, "extensions/") && !under(path, "extensions/internal") && !under(path, "extensions/builtin")
}

// hostOnly are the host's packages no extension imports: the configuration
// (host settings reach a plugin through the settings the host sends,
// config.PluginSettings, as typed sections of package toolsettings), the
// memory store and the staging log (the memory service's, through the Host
// service).
var hostOnly = []string{"config", "memory", "staging"}

// sharedLibraries are the packages outside extensions/ that extensions may
// import beside the SDK and the protocol, because they hold no host state:
// the sandbox launcher (a plugin confines the processes it starts itself, as
// they are its children: see extensions/doc.go) and the tools' settings
// contract. Each must stay so: it compiles in none of the host's packages
// (hostOnly), core, or the SDK.
var sharedLibraries = []string{"sandbox", "toolsettings"}

func memoryOrStaging(imp string) bool { return under(imp, "memory") || under(imp, "staging") }

// violations applies the import rules to a package graph and returns one
// message per broken rule, each naming the package and the import:
//
//   - core imports no sdk, extensions, lint, wiring or tui, not even through
//     another package (the chain is named): the host speaks the protocol
//     through package protocol, and takes the wiring check as a function
//     (core/wirecheck);
//   - an extension imports no other extension: what one needs of another comes
//     through declared state, or a library under extensions/internal/;
//   - an extension, and the package that groups them (extensions/builtin),
//     imports none of the host's packages (hostOnly), but for the memory and
//     staging imports of awaitingMemoryService;
//   - a shared library (sharedLibraries: sandbox, toolsettings) compiles in
//     none of the host's packages, core or the SDK, so that an extension
//     importing it imports no host state through it;
//   - a library under extensions/internal/ compiles in no extension;
//   - no package outside extensions/ imports extensions/internal/... (the
//     compiler refuses it too; this names it in the same terms).
func violations(pkgs map[string]pkg, awaiting map[string]bool) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	names := make([]string, 0, len(pkgs))
	for name := range pkgs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := pkgs[name]
		for _, imp := range p.Imports {
			switch {
			case isExtension(name) && isExtension(imp) && !under(imp, name) && !under(name, imp):
				bad("extension package %s imports extension package %s: take what it needs through declared state, or move the shared code into a library under extensions/internal/", name, imp)
			case (isExtension(name) || under(name, "extensions/builtin")) && slices.ContainsFunc(hostOnly, func(h string) bool { return under(imp, h) }):
				if memoryOrStaging(imp) && awaiting[name] {
					continue
				}
				bad("%s imports the host's package %s: an extension imports only the SDK, the protocol, signals and extensions/internal/ "+
					"(host settings come through the plugin settings the host sends, config.PluginSettings, read with package toolsettings; memory and staging through the Host service)", name, imp)
			case !under(name, "extensions") && under(imp, "extensions/internal"):
				bad("package %s imports %s: the extensions' shared libraries are for extensions only", name, imp)
			}
		}
		if under(name, "core") {
			for _, chain := range forbiddenFromCore(pkgs, name) {
				bad("core package %s imports %s: core is below the SDK, the extensions, the lint, the wiring model and the terminal (use package protocol for the plugin binding, core/wirecheck for the wiring check)", name, strings.Join(chain, " → "))
			}
		}
		if slices.ContainsFunc(sharedLibraries, func(l string) bool { return under(name, l) }) {
			for _, chain := range reaching(pkgs, name, func(p string) bool {
				return slices.ContainsFunc(append([]string{"core", "sdk"}, hostOnly...), func(h string) bool { return under(p, h) })
			}) {
				bad("package %s, a library extensions may import, compiles in %s: it must hold no host state (move what needs the host behind the plugin settings or the Host service)", name, strings.Join(chain, " → "))
			}
		}
		if under(name, "extensions/internal") {
			for _, chain := range reaching(pkgs, name, isExtension) {
				bad("library package %s compiles in extension package %s: a library must not depend on an extension", name, strings.Join(chain, " → "))
			}
		}
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range awaiting {
			if !yield(n) {
				return
			}
		}
	}) {
		if p, ok := pkgs[name]; !ok || !slices.ContainsFunc(p.Imports, memoryOrStaging) {
			bad("%s is in awaitingMemoryService but imports neither memory nor staging any more: remove it from the list", name)
		}
	}
	return out
}

func forbiddenFromCore(pkgs map[string]pkg, from string) [][]string {
	return reaching(pkgs, from, func(p string) bool {
		return slices.ContainsFunc([]string{"sdk", "extensions", "lint", "wiring", "tui"}, func(top string) bool { return under(p, top) })
	})
}

// reaching returns, for each package that target accepts and that from
// compiles in, the shortest import chain from from's import to it.
func reaching(pkgs map[string]pkg, from string, target func(string) bool) [][]string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	var found [][]string
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, imp := range pkgs[cur].Imports {
			if _, seen := prev[imp]; seen {
				continue
			}
			prev[imp] = cur
			if target(imp) {
				var chain []string
				for p := imp; p != from; p = prev[p] {
					chain = append([]string{p}, chain...)
				}
				found = append(found, chain)
				continue // one chain per forbidden package is enough
			}
			queue = append(queue, imp)
		}
	}
	return found
}

// TestLayers enforces the import rules on the module as it is (go list).
func TestLayers(t *testing.T) {
	pkgs := listPackages(t)
	n := 0
	for name := range pkgs {
		if isExtension(name) {
			n++
		}
	}
	if n < 10 {
		t.Fatalf("go list shows only %d extension packages; the rules would check nothing", n)
	}
	for _, v := range violations(pkgs, awaitingMemoryService) {
		t.Error(v)
	}
}

// Each rule fails on a planted violation, naming the package and the import,
// and passes the same graph without it.
func TestLayersCatchPlantedViolations(t *testing.T) {
	clean := map[string]pkg{
		"core/host":                  {Imports: []string{"protocol", "core/hooks"}},
		"core/hooks":                 {},
		"protocol":                   {},
		"sdk":                        {Imports: []string{"protocol"}},
		"config":                     {Imports: []string{"toolsettings"}},
		"toolsettings":               {Imports: []string{"sandbox"}},
		"sandbox":                    {},
		"memory":                     {Imports: []string{"staging"}},
		"memory/embed":               {},
		"staging":                    {},
		"lint":                       {Imports: []string{"core/hooks", "sdk"}},
		"cmd/exocortex":              {Imports: []string{"config", "extensions/builtin", "core/host"}},
		"extensions/internal/turn":   {Imports: []string{"sdk"}},
		"extensions/recall":          {Imports: []string{"sdk", "extensions/internal/turn", "memory"}},
		"extensions/belief":          {Imports: []string{"sdk", "signals"}},
		"extensions/builtin":         {Imports: []string{"extensions/recall", "extensions/belief", "sdk"}},
		"extensions/codeexec":        {Imports: []string{"sdk", "sandbox", "toolsettings"}},
		"extensions/codeexec/shells": {Imports: []string{"sdk"}},
	}
	awaiting := map[string]bool{"extensions/recall": true}
	tests := []struct {
		name  string
		pkg   string
		add   string // an import planted in pkg
		want  string // in the message
		allow map[string]bool
		also  map[string][]string // further planted imports
	}{
		{"core imports sdk", "core/host", "sdk", "core package core/host imports sdk", awaiting, nil},
		{"core reaches sdk through another package", "core/hooks", "config", "core package core/hooks imports config → sdk", awaiting, map[string][]string{"config": {"sdk"}}},
		{"core imports an extension", "core/host", "extensions/belief", "core/host imports extensions/belief", awaiting, nil},
		{"core imports tui", "core/host", "tui", "core/host imports tui", awaiting, nil},
		{"extension imports extension", "extensions/belief", "extensions/recall", "extension package extensions/belief imports extension package extensions/recall", awaiting, nil},
		{"extension imports config", "extensions/belief", "config", "extensions/belief imports the host's package config", awaiting, nil},
		{"sandbox imports config", "sandbox", "config", "package sandbox, a library extensions may import, compiles in config", awaiting, nil},
		{"toolsettings reaches memory through another package", "toolsettings", "internal/procstat", "package toolsettings, a library extensions may import, compiles in internal/procstat → memory", awaiting, map[string][]string{"internal/procstat": {"memory"}}},
		{"sandbox imports core", "sandbox", "core/hooks", "package sandbox, a library extensions may import, compiles in core/hooks", awaiting, nil},
		{"extension imports memory", "extensions/belief", "memory", "extensions/belief imports the host's package memory", awaiting, nil},
		{"extension imports memory/embed", "extensions/belief", "memory/embed", "extensions/belief imports the host's package memory/embed", awaiting, nil},
		{"extension imports staging", "extensions/belief", "staging", "extensions/belief imports the host's package staging", awaiting, nil},
		{"awaiting the memory service allows memory, not config", "extensions/recall", "config", "extensions/recall imports the host's package config", awaiting, nil},
		{"builtin imports config", "extensions/builtin", "config", "extensions/builtin imports the host's package config", awaiting, nil},
		{"outside extensions imports extensions/internal", "lint", "extensions/internal/turn", "package lint imports extensions/internal/turn", awaiting, nil},
		{"library compiles in an extension", "extensions/internal/turn", "extensions/belief", "library package extensions/internal/turn compiles in extension package extensions/belief", awaiting, nil},
		{"allowlist outlives its reason", "extensions/belief", "signals", "extensions/codeexec is in awaitingMemoryService", map[string]bool{"extensions/recall": true, "extensions/codeexec": true}, nil},
	}
	if got := violations(clean, awaiting); len(got) != 0 {
		t.Fatalf("the clean graph has violations: %q", got)
	}
	if got := violations(clean, nil); len(got) != 1 || !strings.Contains(got[0], "extensions/recall imports the host's package memory") {
		t.Fatalf("without the allowlist, want only recall's memory import named, got %q", got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := map[string]pkg{}
			for k, v := range clean {
				g[k] = pkg{ImportPath: k, Imports: slices.Clone(v.Imports)}
			}
			p := g[tt.pkg]
			p.Imports = append(p.Imports, tt.add)
			g[tt.pkg] = p
			if _, ok := g[tt.add]; !ok {
				g[tt.add] = pkg{ImportPath: tt.add}
			}
			for from, imps := range tt.also {
				q := g[from]
				q.Imports = append(q.Imports, imps...)
				g[from] = q
			}
			got := violations(g, tt.allow)
			if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, tt.want) }) {
				t.Fatalf("planted %s → %s: got %q, want a violation naming %q", tt.pkg, tt.add, got, tt.want)
			}
		})
	}
}
