package a0port

import (
	"context"
	"fmt"
	"slices"

	"github.com/exocortex/exocortex/sdk/python/pyimport"
)

// layerModules are the Agent Zero modules the compatibility layer provides,
// with the names each provides: the port writes their shims (writePlugin) and
// classifies imports by them, and `exocortex lint` repeats the port's import
// findings through Lint, which reads the ported files with the same list.
var layerModules = map[string][]string{
	"helpers.extension": {"Extension", "extensible"},
	"agent":             {"Agent", "LoopData", "AgentContext"},
}

// layerProvides answers pyimport.Env.Provided from layerModules.
func layerProvides(module string, names []string) ([]string, bool) {
	have, ok := layerModules[module]
	if !ok {
		return nil, false
	}
	var missing []string
	for _, n := range names {
		if !slices.Contains(have, n) {
			missing = append(missing, n)
		}
	}
	return missing, true
}

// checkImports finds the imports of the ported files the plugin cannot load
// (sdk/python/pyimport, the implementation lint shares) and records them in the
// report by file and line. python.helpers and Agent Zero internals are noted on
// the file by scan already; a third-party module is noted here, named as one,
// with how to install it. Without the interpreter, third-party imports are not
// told from installed ones, and the report says so.
func (r *Report) checkImports(ctx context.Context, files []portFile) {
	var sources []pyimport.Source
	for _, pf := range files {
		sources = append(sources, pyimport.Source{File: pf.source, Code: pf.code})
	}
	if len(sources) == 0 {
		return
	}
	probs, err := pyimport.Env{Provided: layerProvides}.Check(ctx, sources)
	if err != nil {
		r.ImportCheck = err.Error()
	}
	r.Imports = probs
	for _, p := range probs {
		if p.Kind != pyimport.KindThirdParty {
			continue
		}
		i := slices.IndexFunc(r.Files, func(f File) bool { return f.Source == p.File })
		if i < 0 {
			continue
		}
		f := &r.Files[i]
		f.Status = statusNeedsHand
		f.Notes = append(f.Notes, fmt.Sprintf("line %d: imports %s, a third-party module not installed for the plugin: %s", p.Line, p.Module, p.Fix))
		f.cannotLoad(fmt.Sprintf("line %d imports %s, a third-party module not installed for the plugin", p.Line, p.Module))
	}
}
