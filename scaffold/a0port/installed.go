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
// one hook with one order, so the port serves the file at the next free order
// instead (points.json; the file keeps its name) and says so. The plugin
// itself (a tree ported again into the same name) is not a collision. It
// returns the findings it added; WriteReport writes the new orders.
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
	for i := range r.Files {
		f := &r.Files[i]
		if f.Status == statusNotPorted || f.Status == statusOverridden {
			continue
		}
		ins := taken[fmt.Sprint(f.Hook, "/", f.Order)]
		if len(ins) == 0 {
			continue
		}
		in := ins[0]
		free, o := freePrefix(*f, taken, r.Files)
		added = append(added, Finding{Seam: SeamPrefix, File: f.Source, Line: 1,
			What: fmt.Sprintf("order %d at %s is also extension %s of the installed plugin %s: the host refuses two extensions at one hook with one order, so the port serves this file at order %d", f.Order, f.Hook, in.Extension, in.Plugin, o),
			Fix:  fmt.Sprintf("none needed (points.json serves it at %d); to make it the file's own, rename it %s", o, free)})
		f.Notes = append(f.Notes, fmt.Sprintf("served at order %d: %d at %s is the installed %s's (plugin %s)", o, f.Order, f.Hook, in.Extension, in.Plugin))
		f.Order = o
	}
	r.Findings = append(r.Findings, added...)
	return added
}

// freePrefix is the file's name with the next order after its own that
// neither an installed extension nor another ported file at its hook has.
func freePrefix(f File, taken map[string][]Installed, files []File) (string, int) {
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
	return fmt.Sprintf("_%02d_%s", o, orderRE.ReplaceAllString(name, "")), o
}

// WriteReport writes the report into the ported plugin out again (PORT.md and
// port.json), after findings were added to it.
func (r *Report) WriteReport(out string) error {
	r.buildWiring()
	if err := os.WriteFile(filepath.Join(out, wiringName), []byte(r.WiringDoc), 0o644); err != nil {
		return fmt.Errorf("writing the wiring: %w", err)
	}
	if err := r.writePoints(filepath.Join(out, portedDir, pointsName)); err != nil {
		return err
	}
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
