package lint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/hooks"
)

// scriptExt are file extensions of scripts a plugin might be written as.
var scriptExt = map[string]bool{".py": true, ".sh": true, ".js": true, ".mjs": true, ".ts": true, ".rb": true, ".pl": true}

// pluginLooking reports whether a file looks like (part of) a plugin: an
// executable, a script, a numbered file in the seed's _NN_name style, a
// plugin.json, or the go.mod / main.go of a plugin that was never built.
func pluginLooking(e Entry) bool {
	if e.Dir {
		return false
	}
	base := path.Base(e.Rel)
	if discover.Skipped(base) && base != "plugin.json" {
		return false
	}
	return e.Exec || scriptExt[path.Ext(base)] || numbered.MatchString(base) ||
		base == "plugin.json" || base == "go.mod" || base == "main.go"
}

// hookNames is the set of hook names, for spotting hook-named directories.
func hookNames() map[string]bool {
	out := map[string]bool{}
	for _, h := range hooks.All() {
		out[h.Name] = true
	}
	return out
}

// tree looks for plugin-looking files where the loader does not look (rule 8,
// seam 8: EXO081 to EXO085). The loader's rule is package discover's: a plugin is
// an executable directly in a plugin directory, or a directory directly in it
// holding an executable of its own name or a plugin.json with a command.
func (c *checker) tree() {
	scanned := map[string]bool{}
	for _, d := range c.in.PluginDirs {
		scanned[filepath.Clean(d.Path)] = true
	}
	problemAt := map[string]bool{}
	for _, p := range c.in.Problems {
		problemAt[filepath.Clean(p.Path)] = true
		c.add(Finding{Code: "EXO084", Severity: Error, File: p.Path,
			Message: fmt.Sprintf("%s looks like a plugin but cannot be loaded: %v", p.Path, p.Err),
			Fix:     `give the plugin directory a plugin.json like {"command": ["python3", "main.py"]}, or an executable of the directory's name`})
	}
	byRoot := map[string][]Entry{}
	var roots []string
	for _, e := range c.in.Tree {
		r := filepath.Clean(e.Root)
		if byRoot[r] == nil {
			roots = append(roots, r)
		}
		byRoot[r] = append(byRoot[r], e)
	}
	slices.Sort(roots)
	for _, root := range roots {
		entries := byRoot[root]
		slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Rel, b.Rel) })
		if scanned[root] {
			c.treePluginDir(root, entries, problemAt)
		} else {
			c.treeAround(root, entries)
		}
	}
}

// groupTop splits entries by their first path segment, in name order.
func groupTop(entries []Entry) (tops []string, self map[string]Entry, under map[string][]Entry) {
	self, under = map[string]Entry{}, map[string][]Entry{}
	for _, e := range entries {
		top, rest, nested := strings.Cut(e.Rel, "/")
		if _, ok := self[top]; !ok && len(under[top]) == 0 {
			tops = append(tops, top)
		}
		if nested && rest != "" {
			under[top] = append(under[top], e)
		} else {
			self[top] = e
		}
	}
	slices.Sort(tops)
	return slices.Compact(tops), self, under
}

// hookDirs returns the hook-named directories among entries that hold
// plugin-looking files, each with those files.
func hookDirs(entries []Entry, isHook map[string]bool) (dirs []string, files map[string][]string) {
	files = map[string][]string{}
	for _, d := range entries {
		if !d.Dir || !isHook[path.Base(d.Rel)] {
			continue
		}
		for _, f := range entries {
			if rest, ok := strings.CutPrefix(f.Rel, d.Rel+"/"); ok && pluginLooking(f) {
				files[d.Rel] = append(files[d.Rel], rest)
			}
		}
		if len(files[d.Rel]) > 0 {
			dirs = append(dirs, d.Rel)
		}
	}
	return dirs, files
}

// some lists up to three names, and how many more there are.
func some(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}

func (c *checker) treePluginDir(root string, entries []Entry, problemAt map[string]bool) {
	owned := map[string]bool{}
	for _, p := range c.in.Plugins {
		if p.Dir == "" || filepath.Clean(p.Dir) != root {
			continue
		}
		if rel, err := filepath.Rel(root, p.Path); err == nil {
			top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
			owned[top] = true
		}
	}
	tops, self, under := groupTop(entries)
	for _, top := range tops {
		if owned[top] || discover.Skipped(top) || problemAt[filepath.Join(root, top)] {
			continue
		}
		e, listed := self[top]
		if listed && !e.Dir {
			if !e.Exec && pluginLooking(e) {
				c.add(Finding{Code: "EXO085", Severity: Warning, File: filepath.Join(root, top),
					Message: fmt.Sprintf("%s looks like a plugin but is not executable, so the loader skips it", filepath.Join(root, top)),
					Fix:     fmt.Sprintf("chmod +x %s (with a #! line), or move it out of the plugin directory", filepath.Join(root, top))})
			}
			continue
		}
		sub := under[top]
		if listed {
			sub = append([]Entry{e}, sub...)
		}
		dirs, files := hookDirs(sub, c.hookNames)
		for _, d := range dirs {
			c.add(Finding{Code: "EXO081", Severity: Error, File: filepath.Join(root, d),
				Message: fmt.Sprintf("%s holds %s, but the loader does not scan a hook-named directory: nothing in it ever loads, and nothing says so", filepath.Join(root, d), some(files[d])),
				Fix:     fmt.Sprintf("make each plugin an executable directly in %s (or a directory with an executable of its name); the manifest, not the directory, names the hook", root)})
		}
		if len(dirs) > 0 {
			continue
		}
		var found []string
		goSources := false
		for _, f := range sub {
			if rest, ok := strings.CutPrefix(f.Rel, top+"/"); ok && pluginLooking(f) {
				found = append(found, rest)
			}
			if strings.HasSuffix(f.Rel, ".go") || path.Base(f.Rel) == "go.mod" {
				goSources = true
			}
		}
		if len(found) == 0 {
			continue
		}
		dir := filepath.Join(root, top)
		fix := fmt.Sprintf(`add %s/%s (an executable) or %s/plugin.json with {"command": [...]}`, dir, top, dir)
		if goSources {
			fix = fmt.Sprintf("build it in place: go build -o %s/%s ./%s (or add a plugin.json with a command)", dir, top, dir)
		}
		c.add(Finding{Code: "EXO083", Severity: Warning, File: dir,
			Message: fmt.Sprintf("%s looks like a plugin (%s) but has no executable named %s and no plugin.json, so the loader skips it", dir, some(found), top),
			Fix:     fix})
	}
}

func (c *checker) treeAround(root string, entries []Entry) {
	var dirs []string
	for _, d := range c.in.PluginDirs {
		dirs = append(dirs, d.Path)
	}
	scans := "the loader scans only " + strings.Join(dirs, ", ")
	if len(dirs) == 0 {
		scans = "it is not a plugin directory"
	}
	tops, self, under := groupTop(entries)
	for _, top := range tops {
		e, listed := self[top]
		sub := under[top]
		var plugin []string
		if listed && !e.Dir && pluginLooking(e) {
			plugin = append(plugin, e.Rel)
		}
		for _, f := range sub {
			if f.Rel == top+"/"+top && f.Exec || f.Rel == top+"/plugin.json" {
				plugin = append(plugin, f.Rel)
			}
		}
		if len(plugin) > 0 {
			c.add(Finding{Code: "EXO082", Severity: Warning, File: filepath.Join(root, top),
				Message: fmt.Sprintf("%s looks like a plugin (%s), but %s: it never loads", filepath.Join(root, top), some(plugin), scans),
				Fix:     "move it into a plugin directory (e.g. $EXOCORTEX_HOME/plugins/), or delete it"})
			continue
		}
		if listed {
			sub = append([]Entry{e}, sub...)
		}
		hd, files := hookDirs(sub, c.hookNames)
		for _, d := range hd {
			c.add(Finding{Code: "EXO082", Severity: Warning, File: filepath.Join(root, d),
				Message: fmt.Sprintf("%s holds %s in a hook-named directory, but %s: nothing in it ever loads", filepath.Join(root, d), some(files[d]), scans),
				Fix:     "make each one a plugin in a plugin directory (e.g. $EXOCORTEX_HOME/plugins/NAME); the manifest names the hook"})
		}
	}
}

// skipped reports what the loader passed over (rule 8): a plugin file without
// its execute bit (EXO085, unless the tree check named it already), a
// configured plugin directory that does not exist (EXO086), an untrusted
// project's plugins (EXO087).
func (c *checker) skipped() {
	named := map[string]bool{}
	for _, f := range c.out {
		if f.Code == "EXO085" {
			named[filepath.Clean(f.File)] = true
		}
	}
	for _, s := range c.in.Skipped {
		code := ""
		switch s.Kind {
		case discover.NotExecutable:
			if named[filepath.Clean(s.Path)] {
				continue
			}
			code = "EXO085"
		case discover.MissingDir:
			code = "EXO086"
		case discover.Untrusted:
			code = "EXO087"
		default:
			continue
		}
		c.add(Finding{Code: code, Severity: Warning, File: s.Path, Message: s.Message, Fix: s.Fix})
	}
}

// Limits of ScanTree: how deep it looks and how many entries it keeps per root,
// so a plugin directory holding a large tree cannot slow the lint down.
const (
	scanDepth   = 4
	scanEntries = 5000
)

// skipDirs are directories never worth descending into.
var skipDirs = map[string]bool{"node_modules": true, "__pycache__": true, "venv": true, "site-packages": true}

// ScanTree lists the files and directories in and under roots, to a depth of
// four, for rule 8. Hidden entries and dependency trees (node_modules, venv, …)
// are left out, and so are the insides of the plugins in owned (their paths, as
// Plugin.Path): what a loaded plugin keeps in its own directory is its business.
// Roots that do not exist are skipped.
func ScanTree(roots []string, owned []string) ([]Entry, error) {
	skip := map[string]bool{}
	for _, p := range owned {
		skip[filepath.Clean(p)] = true
		skip[filepath.Dir(filepath.Clean(p))] = true
	}
	var out []Entry
	var errs []error
	for _, root := range roots {
		root = filepath.Clean(root)
		n := 0
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == root && errors.Is(err, fs.ErrNotExist) {
					return fs.SkipDir
				}
				errs = append(errs, err)
				return nil
			}
			if p == root {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			depth := strings.Count(rel, "/") + 1
			if strings.HasPrefix(d.Name(), ".") || (d.IsDir() && skipDirs[d.Name()]) {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			e := Entry{Root: root, Rel: rel, Dir: d.IsDir()}
			if d.Type()&fs.ModeSymlink != 0 {
				if info, err := os.Stat(p); err == nil {
					e.Dir = info.IsDir()
					e.Exec = discover.Executable(info.Mode())
				}
			} else if !d.IsDir() {
				if info, err := d.Info(); err == nil {
					e.Exec = discover.Executable(info.Mode())
				}
			}
			out = append(out, e)
			if n++; n >= scanEntries {
				return fs.SkipAll
			}
			if d.IsDir() && (depth >= scanDepth || (depth == 1 && skip[p])) {
				return fs.SkipDir
			}
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}
