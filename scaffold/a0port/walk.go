package a0port

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Agent Zero's loading rules, as v1.7 has them: every *.py directly in a hook
// folder (extensions/python/<hook>/) or in a _functions point's start/ or end/
// folder is an extension file, whatever its name; the files of one point run
// in the order of their names; of two files with one name at one point, in
// two folders of the search path, only the one of higher priority loads (an
// override: how a profile, usr/ or a plugin replaces a file of the base tree).

// orderRE is a file name's numeric prefix: _NN_name.py, or NN_name.py.
var orderRE = regexp.MustCompile(`^_?(\d+)_`)

// pythonDir returns the index of the last "extensions" followed by "python"
// in a path's parts, or -1.
func pythonDir(parts []string) int {
	for i := len(parts) - 2; i >= 0; i-- {
		if parts[i] == "extensions" && parts[i+1] == "python" {
			return i
		}
	}
	return -1
}

// extensionCand returns the extension file at rel (split into parts), if it is
// one Agent Zero loads.
func extensionCand(rel string, parts []string) (cand, bool) {
	i := pythonDir(parts)
	if i < 0 {
		return cand{}, false
	}
	rest := parts[i+2:]
	root := path.Join(parts[:i]...)
	file := rest[len(rest)-1]
	switch {
	case len(rest) == 2 && rest[0] != "_functions":
		return cand{rel: rel, hook: rest[0], file: file, root: root}, true
	case len(rest) >= 4 && rest[0] == "_functions":
		point := strings.Join(rest[1:len(rest)-1], "/")
		if _, _, ok := parsePoint(point); ok {
			return cand{rel: rel, hook: "_functions/" + point, file: file, point: point, root: root}, true
		}
	}
	return cand{}, false
}

// rootRank is a tree folder's place in Agent Zero's search path
// (helpers/subagents.get_paths): a project's agent profile, the project,
// usr/agents/<profile>, a plugin's agents/<profile>, agents/<profile>, usr/,
// the plugins, the base tree. Lower is higher priority.
func rootRank(root string) int {
	p := "/" + root + "/"
	switch {
	case strings.Contains(p, "/.a0proj/agents/"):
		return 0
	case strings.Contains(p, "/.a0proj/") || strings.HasPrefix(p, "/usr/projects/"):
		return 1
	case strings.HasPrefix(p, "/usr/agents/"):
		return 2
	case strings.Contains(p, "/plugins/") && strings.Contains(p, "/agents/"):
		return 3
	case strings.HasPrefix(p, "/agents/"):
		return 4
	case strings.Contains(p, "/plugins/"):
		return 6
	case strings.HasPrefix(p, "/usr/"):
		return 5
	}
	return 7
}

// overrides keeps, of the files with one name at one point, the one Agent Zero
// loads, and reports the others as overridden by it; it returns the kept ones.
func (r *Report) overrides(cands []cand) []cand {
	groups := map[string][]cand{}
	for _, c := range cands {
		k := c.hook + "/" + c.file
		groups[k] = append(groups[k], c)
	}
	var out []cand
	for _, c := range cands {
		g := groups[c.hook+"/"+c.file]
		if len(g) == 1 {
			out = append(out, c)
			continue
		}
		slices.SortStableFunc(g, func(a, b cand) int { return cmp.Or(rootRank(a.root)-rootRank(b.root), strings.Compare(a.rel, b.rel)) })
		if g[0].rel != c.rel {
			r.Files = append(r.Files, File{Source: c.rel, Hook: c.hook, Status: statusOverridden, Notes: []string{
				fmt.Sprintf("overridden by %s: Agent Zero loads one file of a name at a point, the one in the folder of highest priority (project, usr/agents/<profile>, agents/<profile>, usr/, plugins/, the base tree), and so does the port", g[0].rel)}})
			continue
		}
		out = append(out, c)
	}
	for i := range out {
		for _, o := range groups[out[i].hook+"/"+out[i].file] {
			if o.rel != out[i].rel {
				r.overridden = append(r.overridden, [2]string{out[i].rel, o.rel})
			}
		}
	}
	return out
}

// orderUnprefixed gives a served file without a numeric prefix the order its
// name has among the files of its hook (Agent Zero runs them in name order):
// one after the file before it, and says so in its notes.
func (r *Report) orderUnprefixed() {
	byHook := map[string][]*File{}
	for i := range r.Files {
		f := &r.Files[i]
		if f.Status != statusNotPorted && f.Status != statusOverridden && f.Hook != "" {
			byHook[f.Hook] = append(byHook[f.Hook], f)
		}
	}
	for _, fs := range byHook {
		slices.SortFunc(fs, func(a, b *File) int { return strings.Compare(path.Base(a.Source), path.Base(b.Source)) })
		prev := 0
		for i, f := range fs {
			if f.unprefixed {
				f.Order = prev + 1
				after := "first of its hook"
				if i > 0 {
					after = "after " + path.Base(fs[i-1].Source)
				}
				f.Notes = append(f.Notes, fmt.Sprintf("no numeric prefix: Agent Zero runs it in name order (%s), so it is served at order %d", after, f.Order))
			}
			prev = f.Order
		}
	}
	for _, o := range r.overridden {
		for i := range r.Files {
			if r.Files[i].Source == o[0] {
				r.Files[i].Overrides = append(r.Files[i].Overrides, o[1])
				r.Files[i].Notes = append(r.Files[i].Notes, "overrides "+o[1]+", which has its name at its point (Agent Zero loads this one)")
			}
		}
	}
}

// pointsName is the file, under the ported plugin's a0/, that tells the layer
// which file to serve at which hook, in which order and under which name: the
// port decides it once (wire), and the layer reads it instead of deciding again.
const pointsName = "points.json"

// servedFile is one entry of points.json.
type servedFile struct {
	File  string `json:"file"` // relative to a0/
	Hook  string `json:"hook"`
	Order int32  `json:"order"`
	Name  string `json:"name"`
	Kind  string `json:"kind,omitempty"`  // a _functions point's (Point.Kind)
	Point string `json:"point,omitempty"` // the _functions point
	// External are the keys the file reads that are not shared state
	// (File.External): the layer keeps them in the plugin process.
	External []string `json:"external,omitempty"`
}

// writePoints writes points.json for the files the port serves.
func (r *Report) writePoints(p string) error {
	var out []servedFile
	for _, w := range r.wire() {
		out = append(out, servedFile{File: path.Join("extensions", "python", w.f.folder, path.Base(w.f.Source)),
			Hook: w.hook.Name, Order: w.order, Name: w.name, Kind: w.f.kind, Point: w.f.Point, External: w.f.External})
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	return nil
}

// externalKeys moves the keys a served file reads that no loading file of the
// tree writes from Reads to External, with a note (see File.External).
func (r *Report) externalKeys() {
	written := map[string]bool{}
	for _, f := range r.Files {
		if f.Status != statusNotPorted && f.Status != statusOverridden && !f.noLoad {
			for _, k := range f.Writes {
				written[k] = true
			}
		}
	}
	for i := range r.Files {
		f := &r.Files[i]
		if f.Status == statusNotPorted || f.Status == statusOverridden {
			continue
		}
		var keep []string
		for _, k := range f.Reads {
			if written[k] {
				keep = append(keep, k)
				continue
			}
			f.External = append(f.External, k)
			f.Notes = append(f.Notes, fmt.Sprintf("reads agent data %q, which no file of the tree that runs writes (Agent Zero sets it from outside the agent, its web UI or API, or nothing does): it is not declared as shared state, and the read gives None, as in a chat where nothing set it; give it a writer (set_data in a file of the tree) if something should", k))
		}
		f.Reads = keep
	}
}
