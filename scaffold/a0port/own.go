package a0port

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/exocortex/exocortex/sdk/python/pyimport"
)

// A v1.7 plugin keeps its own code beside its extensions (helpers/, and any
// other package of its folder), and its files import it by the plugin's
// package path: plugins.<name>.helpers.x, or usr.plugins.<name>.helpers.x
// where v1.7 installs it. Those modules travel with the port: each is copied
// to the same path in the ported plugin (plugins/<name>/...), where the
// import finds it, unless the layer has a stand-in of that module (the
// stand-in wins). An import of one is the plugin's own, never a third-party
// module; what the copied module itself imports is checked with the files.

// ownModule is one module of a plugin of the tree, by its dotted name
// (plugins.<name>.helpers.x) and the file.
type ownModule struct {
	name, rel string
}

// moduleOf returns the dotted module name of a .py file of the tree that is
// inside a plugin's folder (plugins/<name>/... or usr/plugins/<name>/...) and is
// not an extension, a tool or a prompt file.
func moduleOf(parts []string) (string, bool) {
	i := slices.Index(parts, "plugins")
	if i < 0 || i+2 >= len(parts) || (i > 0 && parts[i-1] != "usr") || (i > 1) {
		return "", false
	}
	if slices.Contains(parts, "extensions") || slices.Contains(parts, "tools") || slices.Contains(parts, "prompts") {
		return "", false
	}
	mod := slices.Clone(parts[i:])
	last := strings.TrimSuffix(mod[len(mod)-1], ".py")
	if last == "__init__" {
		mod = mod[:len(mod)-1]
	} else {
		mod[len(mod)-1] = last
	}
	return strings.Join(mod, "."), true
}

// ownModuleFor returns the tree's module an import names, usr. stripped.
func (r *Report) ownModuleFor(module string) (ownModule, bool) {
	module = strings.TrimPrefix(module, "usr.")
	i := slices.IndexFunc(r.modules, func(m ownModule) bool { return m.name == module })
	if i < 0 {
		return ownModule{}, false
	}
	return r.modules[i], true
}

// copyModules copies the tree's own modules into out, at their path from
// plugins/ on, but for those the layer has a stand-in of.
func (r *Report) copyModules(out string) error {
	for _, m := range r.modules {
		if _, ok := LookupModule(m.name, nil); ok {
			continue // the stand-in's shim is there
		}
		rel := m.rel[strings.Index(m.rel, "plugins/"):]
		dst := filepath.Join(out, filepath.FromSlash(rel))
		b, err := os.ReadFile(filepath.Join(r.Source, filepath.FromSlash(m.rel)))
		if err != nil {
			return fmt.Errorf("reading the plugin module %s: %w", m.rel, err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", filepath.Dir(dst), err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", dst, err)
		}
	}
	return nil
}

// moduleProblems marks the files that import a copied module which cannot
// load (an import of its own the plugin has no module for) as files that
// cannot load, naming the module and why.
func (r *Report) moduleProblems(bad map[string]string) {
	r.spreadModuleProblems(bad)
	for i := range r.Files {
		f := &r.Files[i]
		for _, d := range f.modDeps {
			why, ok := bad[d.file]
			if !ok {
				continue
			}
			f.Status = statusNeedsHand
			f.Notes = append(f.Notes, fmt.Sprintf("line %d: imports the plugin's own module %s, copied with the plugin, which cannot load: %s", d.line, path.Base(d.file), why))
			f.cannotLoad(fmt.Sprintf("line %d imports %s, which cannot load: %s", d.line, d.file, why))
		}
		// Imported inside a function, the module is loaded when the function
		// runs: the file loads and serves, and the call reaching the line fails.
		for _, d := range f.modLate {
			why, ok := bad[d.file]
			if !ok {
				continue
			}
			f.Status = statusNeedsHand
			f.Notes = append(f.Notes, fmt.Sprintf("line %d: imports the plugin's own module %s inside a function, copied with the plugin, which cannot load: %s; the file loads, and a call that reaches the line fails", d.line, path.Base(d.file), why))
		}
	}
}

// spreadModuleProblems marks, in bad, every own module that imports an own
// module that cannot load (at any depth: a handler importing a client that
// imports a missing package fails as the client does), with the line and why.
func (r *Report) spreadModuleProblems(bad map[string]string) {
	deps := map[string][]loc{}
	for _, m := range r.modules {
		code, err := os.ReadFile(filepath.Join(r.Source, filepath.FromSlash(m.rel)))
		if err != nil {
			continue
		}
		for _, imp := range pyimport.Parse(code) {
			// A failure in a function's import fails that call, not the
			// module's load.
			if imp.Guarded || imp.InFunction {
				continue
			}
			names := []string{imp.Module}
			for _, n := range imp.Names {
				names = append(names, imp.Module+"."+n)
			}
			for _, n := range names {
				if d, ok := r.ownModuleFor(n); ok && d.rel != m.rel {
					deps[m.rel] = append(deps[m.rel], loc{d.rel, imp.Line})
				}
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, m := range r.modules {
			if _, done := bad[m.rel]; done {
				continue
			}
			for _, d := range deps[m.rel] {
				if why, ok := bad[d.file]; ok {
					bad[m.rel] = fmt.Sprintf("line %d imports %s, which cannot load: %s", d.line, path.Base(d.file), why)
					changed = true
					break
				}
			}
		}
	}
}

// keepNeededModules keeps, of the tree's own modules, those a served file
// imports, and those they import in turn: the others (a plugin's API
// handlers, its web UI code) stay behind, unchecked.
func (r *Report) keepNeededModules() {
	need := map[string]bool{}
	var queue []string
	for _, f := range r.Files {
		for _, d := range slices.Concat(f.modDeps, f.modLate) {
			if !need[d.file] {
				need[d.file] = true
				queue = append(queue, d.file)
			}
		}
	}
	for len(queue) > 0 {
		rel := queue[0]
		queue = queue[1:]
		code, err := os.ReadFile(filepath.Join(r.Source, filepath.FromSlash(rel)))
		if err != nil {
			continue
		}
		for _, imp := range pyimport.Parse(code) {
			names := []string{imp.Module}
			for _, n := range imp.Names {
				names = append(names, imp.Module+"."+n)
			}
			for _, n := range names {
				if m, ok := r.ownModuleFor(n); ok && !need[m.rel] {
					need[m.rel] = true
					queue = append(queue, m.rel)
				}
			}
		}
	}
	r.modules = slices.DeleteFunc(r.modules, func(m ownModule) bool { return !need[m.rel] })
}
