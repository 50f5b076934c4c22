package a0port

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Installed is an extension of a plugin already installed where the ported
// plugin will run (a built-in or one in a plugin directory): its hook, its
// order and whose it is.
type Installed struct {
	Plugin    string
	Extension string
	Hook      string // the hook's name, as in a ported file's directory
	Order     int
}

// CheckInstalled reports, as seam 4, each ported file whose hook and order an
// installed extension already has: the host refuses to wire two extensions at
// one hook with one order, so the file would not run once the plugin is
// copied in. The plugin itself (a tree ported again into the same name) is
// not a collision. It returns the findings it added.
func (r *Report) CheckInstalled(installed []Installed) []Finding {
	taken := map[string][]Installed{}
	for _, in := range installed {
		if in.Plugin == r.Plugin {
			continue
		}
		k := fmt.Sprint(in.Hook, "/", in.Order)
		taken[k] = append(taken[k], in)
	}
	var added []Finding
	for _, f := range r.Files {
		if f.Status == statusNotPorted {
			continue
		}
		ins := taken[fmt.Sprint(f.Hook, "/", f.Order)]
		if len(ins) == 0 {
			continue
		}
		in := ins[0]
		added = append(added, Finding{Seam: SeamPrefix, File: f.Source, Line: 1,
			What: fmt.Sprintf("order %d at %s is also extension %s of the installed plugin %s: the host refuses two extensions at one hook with one order, so this file would not run", f.Order, f.Hook, in.Extension, in.Plugin),
			Fix:  fmt.Sprintf("give the file a free prefix (%s) before copying the plugin in", freePrefix(f, taken, r.Files))})
	}
	r.Findings = append(r.Findings, added...)
	return added
}

// freePrefix is the file's name with the next order after its own that
// neither an installed extension nor another ported file at its hook has.
func freePrefix(f File, taken map[string][]Installed, files []File) string {
	used := func(o int) bool {
		if len(taken[fmt.Sprint(f.Hook, "/", o)]) > 0 {
			return true
		}
		return slices.ContainsFunc(files, func(g File) bool { return g.Hook == f.Hook && g.Order == o && g.Status != statusNotPorted })
	}
	o := f.Order + 1
	for used(o) {
		o++
	}
	name := filepath.Base(f.Source)
	if m := fileRE.FindStringSubmatch(name); m != nil {
		return fmt.Sprintf("_%02d_%s.py", o, m[2])
	}
	return fmt.Sprintf("order %d", o)
}

// WriteReport writes the report into the ported plugin out again (PORT.md and
// port.json), after findings were added to it.
func (r *Report) WriteReport(out string) error {
	var md bytes.Buffer
	r.WriteMarkdown(&md)
	if err := os.WriteFile(filepath.Join(out, reportMarkdownName), md.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing the report into %s: %w", out, err)
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(out, reportJSONName), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the report into %s: %w", out, err)
	}
	return nil
}
