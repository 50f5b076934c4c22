package lint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/exocortex/exocortex/wiring"
)

// files checks the declared data files (rule 6, seam 6: EXO061 to EXO064). A file
// is known by its logical id; every declaration of an id must give the same
// path, and what is read must be written by someone.
func (c *checker) files() {
	byPath := map[string][]string{}
	for _, f := range c.g.Files {
		if f.ID == "" {
			continue // EXO001
		}
		paths := f.Paths()
		for _, p := range paths {
			byPath[p] = append(byPath[p], f.ID)
		}
		if len(paths) > 1 {
			first := wiring.CleanPath(f.Uses[0].Spec.GetPath())
			var decls []string
			for _, u := range f.Uses {
				decls = append(decls, fmt.Sprintf("%s by %s (plugin %s)", u.Spec.GetPath(), orNone(u.Spec.GetUser()), u.Plugin.Name))
			}
			reported := map[string]bool{}
			for _, u := range f.Uses {
				if wiring.CleanPath(u.Spec.GetPath()) == first || reported[u.Plugin.Name] {
					continue
				}
				reported[u.Plugin.Name] = true
				c.add(Finding{Code: "EXO061", Severity: Error, Plugin: u.Plugin.Name, Extension: u.Spec.GetUser(), File: f.ID,
					Message: fmt.Sprintf("data file %q is declared under different paths: %s; readers and writers would use different files", f.ID, strings.Join(uniqKeep(decls), ", ")),
					Fix:     fmt.Sprintf("declare one path for %q everywhere (e.g. %s)", f.ID, first)})
			}
		}
		var readers, writers []wiring.FileUse
		for _, u := range f.Uses {
			if u.Reads() {
				readers = append(readers, u)
			}
			if u.Writes() {
				writers = append(writers, u)
			}
		}
		switch {
		case len(readers) > 0 && len(writers) == 0:
			r := readers[0]
			c.add(Finding{Code: "EXO062", Severity: Error, Plugin: r.Plugin.Name, Extension: r.Spec.GetUser(), File: f.ID,
				Message: fmt.Sprintf("data file %q (%s) is read by %s but nothing declares writing it: the readers find it missing or empty", f.ID, strings.Join(paths, ", "), users(readers)),
				Fix:     "declare the writer's access (write or read_write) in its plugin's files, or stop reading the file"})
		case len(writers) > 0 && len(readers) == 0:
			w := writers[0]
			c.add(Finding{Code: "EXO064", Severity: Info, Plugin: w.Plugin.Name, Extension: w.Spec.GetUser(), File: f.ID,
				Message: fmt.Sprintf("data file %q (%s) is written by %s and read by no plugin", f.ID, strings.Join(paths, ", "), users(writers)),
				Fix:     "nothing to do if only people or other programs read it; otherwise declare the reader"})
		}
	}
	var paths []string
	for p := range byPath {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		ids := uniqStrings(byPath[p])
		if len(ids) < 2 {
			continue
		}
		c.add(Finding{Code: "EXO063", Severity: Warning, File: p,
			Message: fmt.Sprintf("path %s is declared as data files %s: one file under two names hides its readers from its writers", p, quoteAll(ids)),
			Fix:     "use one id for the file in every plugin"})
	}
}

func users(us []wiring.FileUse) string {
	var out []string
	for _, u := range us {
		out = append(out, fmt.Sprintf("%s (plugin %s)", orNone(u.Spec.GetUser()), u.Plugin.Name))
	}
	return strings.Join(uniqKeep(out), ", ")
}

func orNone(s string) string {
	if s == "" {
		return "an unnamed user"
	}
	return s
}

// uniqKeep drops repeated strings, keeping the first order.
func uniqKeep(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
