package a0port

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/exocortex/exocortex/sdk/python/pyimport"
)

// layerProvides answers pyimport.Env.Provided from Modules, the one list of
// the modules the layer provides (the port writes their shims from it, and
// `exocortex lint` repeats the port's import findings through Lint, which reads
// the ported files with the same list): for a module the layer has, the names
// of the import it does not provide. An import of another extension file of
// the tree is provided when the tree has that file.
func (r *Report) layerProvides(module string, names []string) ([]string, bool) {
	if m, ok := r.ownModuleFor(module); ok {
		if _, shim := LookupModule(m.name, nil); !shim {
			return nil, true // the plugin's own, copied with it
		}
	}
	if len(names) > 0 {
		// from plugins.<name>.helpers import x: x a module of the tree.
		own := 0
		for _, n := range names {
			if _, ok := r.ownModuleFor(module + "." + n); ok {
				own++
			}
		}
		if own == len(names) {
			return nil, true
		}
	}
	_, missing, ok := lookupImport(module, names, func(hook, file string) bool { return r.ported[hook+"/"+file] })
	return missing, ok
}

// checkImports finds the imports of the ported files the plugin cannot load
// (sdk/python/pyimport, the implementation lint shares) and records them in the
// report by file and line: each makes its file need a hand and keeps the layer
// from loading it; a python.helpers import is also seam 10's finding, and a
// third-party module is named as one, with how to install it. Without the
// interpreter, third-party imports are not told from installed ones, and the
// report says so.
func (r *Report) checkImports(ctx context.Context, files []portFile) {
	var sources []pyimport.Source
	for _, pf := range files {
		if !pf.served {
			continue
		}
		sources = append(sources, pyimport.Source{File: pf.source, Code: pf.code})
	}
	// The prompts' variables files run in the plugin too (the layer's
	// read_prompt loads them): an import they cannot load leaves their
	// placeholders unfilled, which the report names here.
	// The plugins' own modules, copied with the plugin: what they import must
	// load too, or the files importing them do not.
	for _, m := range r.modules {
		if _, shim := LookupModule(m.name, nil); shim {
			continue
		}
		if code, err := os.ReadFile(filepath.Join(r.Source, filepath.FromSlash(m.rel))); err == nil {
			sources = append(sources, pyimport.Source{File: m.rel, Code: code})
		}
	}
	for _, rel := range r.Prompts {
		if strings.HasSuffix(rel, ".py") {
			if code, err := os.ReadFile(filepath.Join(r.Source, filepath.FromSlash(rel))); err == nil {
				sources = append(sources, pyimport.Source{File: rel, Code: code})
			}
		}
	}
	if len(sources) == 0 {
		return
	}
	probs, err := pyimport.Env{Provided: r.layerProvides, Interpreter: r.Python}.Check(ctx, sources)
	if err != nil {
		r.ImportCheck = err.Error()
	}
	// The advice for a third-party module names the package to install: Debian's
	// when apt-cache says it has it, else pip's distribution.
	var debs []string
	for _, p := range probs {
		if p.Kind == pyimport.KindThirdParty {
			_, deb := pyimport.Distribution(p.Module)
			if !slices.Contains(debs, deb) {
				debs = append(debs, deb)
			}
		}
	}
	if has := debianHas(ctx, debs); len(has) > 0 {
		for i := range probs {
			if probs[i].Kind == pyimport.KindThirdParty {
				_, deb := pyimport.Distribution(probs[i].Module)
				probs[i].Fix = pyimport.InstallFix(probs[i].Module, has[deb])
			}
		}
	}
	r.Imports = probs
	bad := map[string]string{}
	r.badModules = bad
	for _, p := range probs {
		i := slices.IndexFunc(r.Files, func(f File) bool { return f.Source == p.File })
		if i < 0 {
			if _, seen := bad[p.File]; !seen {
				bad[p.File] = fmt.Sprintf("line %d imports %s (%s)", p.Line, p.Module, p.Kind)
			}
			continue
		}
		f := &r.Files[i]
		f.Status = statusNeedsHand
		switch p.Kind {
		case pyimport.KindMovedHelpers:
			r.Findings = append(r.Findings, Finding{Seam: SeamPythonHelpers, File: p.File, Line: p.Line, What: p.What, Fix: p.Fix})
			f.Notes = append(f.Notes, fmt.Sprintf("line %d: python.helpers import", p.Line))
			f.cannotLoad(fmt.Sprintf("line %d imports python.helpers (seam 10)", p.Line))
		case pyimport.KindAgentZero:
			f.Notes = append(f.Notes, fmt.Sprintf("line %d: %s", p.Line, p.What))
			f.cannotLoad(fmt.Sprintf("line %d imports %s, which the layer has no module for", p.Line, p.Module))
		default:
			f.Notes = append(f.Notes, fmt.Sprintf("line %d: imports %s, a third-party module not installed for the plugin: %s", p.Line, p.Module, p.Fix))
			f.cannotLoad(fmt.Sprintf("line %d imports %s, a third-party module not installed for the plugin", p.Line, p.Module))
		}
	}
}
