package lint

import (
	"fmt"

	"github.com/exocortex/exocortex/sdk/python/pyimport"
)

// Ported is what `exocortex plugins port` left for the lint in one plugin it wrote
// (scaffold/a0port.Lint reads it; the lint itself does no I/O): the seams its
// Agent Zero files hit, and the differences between the agent-data keys each file
// was found to use statically and those it used at run time.
type Ported struct {
	Plugin string        `json:"plugin"`
	Seams  []PortSeam    `json:"seams,omitempty"`
	Keys   []PortKeyDiff `json:"keys,omitempty"`
	Tasks  []PortTask    `json:"tasks,omitempty"`
}

// PortTask is an agent-data key, declared as shared state, that a ported file
// stores an asyncio task (or a DeferredTask) in: the layer keeps the task in the
// plugin process. Note is the port's wording of it.
type PortTask struct {
	File  string `json:"file"`
	Line  int    `json:"line"`
	Field string `json:"field"`
	Key   string `json:"key"`
	Note  string `json:"note"`
}

// PortSeam is one seam of the seed's table a ported file hits (seam 0: the file's
// hook has no Exocortex hook point yet).
type PortSeam struct {
	Seam int `json:"seam"`
	// File is relative to the plugin's directory (a0/extensions/python/...), or
	// the Agent Zero tree's path for a file the port left out.
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	What string `json:"what"`
	Fix  string `json:"fix"`
}

// PortKeyDiff is a key a ported file used at run time that the static scan did
// not find (Observed), or one the scan found that the file, having run, never
// used.
type PortKeyDiff struct {
	File     string `json:"file"`
	Field    string `json:"field"`
	Key      string `json:"key"`
	Access   string `json:"access"`
	Observed bool   `json:"observed"`
}

// ported reports the seams of ported Agent Zero trees (EXO131, EXO132), the
// differences between their static and run-time agent-data keys (EXO133,
// EXO134) and the tasks kept in declared agent data (EXO137).
func (c *checker) ported() {
	for _, p := range c.in.Ported {
		for _, t := range p.Tasks {
			c.add(Finding{Code: "EXO137", Severity: Warning, Plugin: p.Plugin, Key: t.Key, File: fmt.Sprintf("%s:%d", t.File, t.Line),
				Message: "ported Agent Zero file: " + t.Note,
				Fix:     "nothing, if only this plugin's hooks use the task; to share its result, set_data a JSON value (the task's result) under another key when the task is done"})
		}
		for _, s := range p.Seams {
			file := s.File
			if s.Line > 0 {
				file = fmt.Sprintf("%s:%d", s.File, s.Line)
			}
			switch {
			case s.Seam == 0 || s.Seam == 8:
				c.add(Finding{Code: "EXO132", Severity: Warning, Plugin: p.Plugin, File: file,
					Message: "Agent Zero file not ported: " + s.What, Fix: s.Fix})
			default:
				sev := Error
				if s.Seam == 2 || s.Seam == 4 {
					sev = Warning
				}
				c.add(Finding{Code: "EXO131", Severity: sev, Plugin: p.Plugin, File: file,
					Message: fmt.Sprintf("ported Agent Zero file, seam %d: %s", s.Seam, s.What), Fix: s.Fix})
			}
		}
		for _, k := range p.Keys {
			if k.Observed {
				c.add(Finding{Code: "EXO133", Severity: Warning, Plugin: p.Plugin, Key: k.Key, File: k.File,
					Message: fmt.Sprintf("the file %s agent data %q at run time, which the port did not find in it statically: the key is not declared, so its value stays in the plugin process, not in shared state", k.Access, k.Field),
					Fix:     fmt.Sprintf("name the key as a string literal, get_data(%q) / set_data(%q, ...), and port the tree again", k.Field, k.Field)})
				continue
			}
			c.add(Finding{Code: "EXO134", Severity: Info, Plugin: p.Plugin, Key: k.Key, File: k.File,
				Message: fmt.Sprintf("the port found agent data %q in the file, which has run without using it (recorded in .a0compat/observed.json)", k.Field),
				Fix:     "nothing if the use is on a path not taken yet; otherwise remove the dead get_data/set_data"})
		}
	}
}

// PluginImports are the imports of one Python plugin's files that the plugin
// cannot load, as sdk/python/pyimport finds them (the lint does no I/O: the
// command runs the finder). Ported says the plugin was written by `exocortex
// plugins port`, whose python.helpers imports are EXO131 (seam 10) already.
type PluginImports struct {
	Plugin   string             `json:"plugin"`
	Ported   bool               `json:"ported,omitempty"`
	Problems []pyimport.Problem `json:"problems"`
	// Unchecked says why the third-party imports were not checked (no Python
	// interpreter could be asked), "" when they were.
	Unchecked string `json:"unchecked,omitempty"`
}

// imports reports the imports Python plugins cannot load: Agent Zero modules
// without a stand-in (EXO135) and third-party modules not installed for the
// plugin (EXO136), each at file:line with the fix, and say when the
// third-party check could not run (EXO138).
func (c *checker) imports() {
	for _, pi := range c.in.Imports {
		if pi.Unchecked != "" {
			c.add(Finding{Code: "EXO138", Severity: Info, Plugin: pi.Plugin,
				Message: "the third-party imports of the plugin's Python files were not checked: " + pi.Unchecked,
				Fix:     "install Debian's python3 (the interpreter plugins run with) and lint again"})
		}
		for _, p := range pi.Problems {
			code := "EXO135"
			switch {
			case p.Kind == pyimport.KindMovedHelpers && pi.Ported:
				continue // EXO131, seam 10
			case p.Kind == pyimport.KindThirdParty:
				code = "EXO136"
			}
			c.add(Finding{Code: code, Severity: Error, Plugin: pi.Plugin, File: fmt.Sprintf("%s:%d", p.File, p.Line),
				Message: p.What, Fix: p.Fix})
		}
	}
}
