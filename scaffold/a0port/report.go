package a0port

import (
	"cmp"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/exocortex/exocortex/sdk/python/pyimport"
)

// WriteMarkdown writes the porting report: the files by status, the seams with
// file, line and fix, and the wiring of the ported tree (hook by hook, in order).
func (r *Report) WriteMarkdown(w io.Writer) {
	fmt.Fprintf(w, "# Porting report: %s\n\nAgent Zero tree `%s`, ported to plugin `%s` in `%s`.\n", r.Plugin, r.Source, r.Plugin, r.Out)
	fmt.Fprintf(w, "Python: %s (%s), the interpreter of its plugin.json.\n", r.Python, cmp.Or(r.PythonVersion, "version unknown"))
	if len(r.Plugins) > 0 {
		fmt.Fprintf(w, "v1.7 plugins (plugin.yaml): %s.\n", strings.Join(r.Plugins, ", "))
	}
	if len(r.Refused) > 0 {
		fmt.Fprintf(w, "\n## The host would refuse this plugin at start\n\n")
		fmt.Fprintf(w, "Its wiring check (the lint's errors) keeps a plugin out; fix these first, or start with --allow-wiring-errors:\n\n")
		for _, s := range r.Refused {
			fmt.Fprintf(w, "- %s\n", s)
		}
	}
	if len(r.Blocking) > 0 {
		fmt.Fprintf(w, "\n## Guards that do not load stop every action they guard\n\n")
		for _, s := range r.Blocking {
			fmt.Fprintf(w, "- %s\n", s)
		}
	}
	if len(r.Identity)+len(r.Tools) > 0 {
		fmt.Fprintf(w, "\n## Identity and tools\n\n")
		for _, c := range r.Identity {
			fmt.Fprintf(w, "- %s\n", c)
		}
		var none, mapped []string
		for _, t := range r.Tools {
			if t.Counterpart == "" {
				none = append(none, "`"+t.Tool+"`")
			} else {
				mapped = append(mapped, fmt.Sprintf("`%s` -> `%s`", t.Tool, t.Counterpart))
			}
		}
		if len(mapped) > 0 {
			fmt.Fprintf(w, "- the tree's tools with an Exocortex counterpart: %s\n", strings.Join(mapped, ", "))
		}
		if len(none) > 0 {
			fmt.Fprintf(w, "- the tree's tools with no Exocortex counterpart (the model does not get them): %s\n", strings.Join(none, ", "))
		}
	}
	for _, st := range []string{statusPorted, statusAdapted, statusNeedsHand, statusNotPorted, statusOverridden} {
		var rows []File
		for _, f := range r.Files {
			if f.Status == st {
				rows = append(rows, f)
			}
		}
		fmt.Fprintf(w, "\n## %s (%d)\n\n", capitalize(st), len(rows))
		for _, f := range rows {
			fmt.Fprintf(w, "- `%s` (%s, order %d)", f.Source, f.Hook, f.Order)
			if len(f.Reads)+len(f.Writes) > 0 {
				fmt.Fprintf(w, " reads %v writes %v", f.Reads, f.Writes)
			}
			fmt.Fprintln(w)
			for _, n := range f.Notes {
				fmt.Fprintf(w, "  - %s\n", n)
			}
		}
	}
	fmt.Fprintf(w, "\n## Seams (%d)\n\n", len(r.Findings))
	for _, f := range r.Findings {
		fmt.Fprintf(w, "- %s\n", f)
	}
	r.writeImports(w)
	fmt.Fprintf(w, "\n## Wiring of the ported tree\n\n")
	fmt.Fprintf(w, "Hook by hook in firing order: each file's order, the state keys it writes (->) and\n")
	fmt.Fprintf(w, "reads (<-), what of it reaches the model. The whole diagram, made by the generator of\n")
	fmt.Fprintf(w, "the project's own WIRING.md, is [%s](%s).\n\n", wiringName, wiringName)
	for _, h := range r.Wiring {
		fmt.Fprintf(w, "- %d. %s:\n", h.Position, h.Hook)
		for _, e := range h.Extensions {
			fmt.Fprintf(w, "  - %d `%s` (%s)", e.Order, e.Extension, e.Source)
			if len(e.Writes) > 0 {
				fmt.Fprintf(w, " -> %s", strings.Join(e.Writes, ", "))
			}
			if len(e.Reads) > 0 {
				fmt.Fprintf(w, " <- %s", strings.Join(e.Reads, ", "))
			}
			if e.Model != "" {
				fmt.Fprintf(w, "; reaches the model: %s", e.Model)
			}
			if !e.Runs {
				fmt.Fprint(w, "; does not run")
			}
			fmt.Fprintln(w)
			for _, n := range e.Notes {
				fmt.Fprintf(w, "    - %s\n", n)
			}
		}
	}
}

// String is the finding as one line: file:line: seam N: what; fix.
func (f Finding) String() string {
	loc := f.File
	if f.Line > 0 {
		loc = fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	seam := fmt.Sprintf("seam %d", f.Seam)
	if f.Seam == SeamNoHookPoint {
		seam = "no hook"
	}
	return fmt.Sprintf("%s: %s: %s; fix: %s", loc, seam, f.What, f.Fix)
}

func prefixed(plugin string, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = KeyName(plugin, k)
	}
	return out
}

var nonIdent = regexp.MustCompile(`[^a-z0-9_]`)

// KeyName is the state key an Agent Zero data field of the ported plugin maps to:
// a0_<plugin>_<field>, the plugin's name without a leading "a0-", so two ported
// trees in one home keep their agent data apart. It is the rule of the Python
// layer's key_name (sdk/python/exocortex/a0compat.py).
func KeyName(plugin, field string) string {
	ns := nonIdent.ReplaceAllString(strings.ToLower(plugin), "_")
	ns = strings.Trim(strings.TrimPrefix(ns, "a0_"), "_")
	f := nonIdent.ReplaceAllString(strings.ToLower(field), "_")
	if ns == "" {
		return "a0_" + f
	}
	return "a0_" + ns + "_" + f
}

func capitalize(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// writeImports writes the imports the plugin cannot load, by kind: third-party
// modules named as such, with how to install them, apart from Agent Zero's own
// internals.
func (r *Report) writeImports(w io.Writer) {
	fmt.Fprintf(w, "\n## Imports the plugin cannot load (%d)\n\n", len(r.Imports))
	if r.ImportCheck != "" {
		fmt.Fprintf(w, "Third-party imports were not checked: %s\n\n", r.ImportCheck)
	}
	for _, k := range []struct {
		kind  pyimport.Kind
		title string
	}{
		{pyimport.KindThirdParty, "Third-party modules, not installed for the plugin"},
		{pyimport.KindAgentZero, "Agent Zero internals the compatibility layer has no stand-in for"},
		{pyimport.KindMovedHelpers, "python.helpers, moved to helpers in Agent Zero v1.7 (seam 10)"},
	} {
		first := true
		for _, p := range r.Imports {
			if p.Kind != k.kind {
				continue
			}
			if first {
				fmt.Fprintf(w, "%s:\n\n", k.title)
				first = false
			}
			fmt.Fprintf(w, "- %s\n", p)
		}
		if !first {
			fmt.Fprintln(w)
		}
	}
}
