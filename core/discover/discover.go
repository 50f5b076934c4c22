// Package discover finds plugins in plugin directories. The host loads what it
// finds and the wiring lint checks the same list, so both see what would run.
//
// The rule, for each directory in priority order:
//   - an executable regular file directly inside the directory is a plugin, named
//     after the file without its extension ("recall.py" is plugin "recall");
//   - a subdirectory directly inside it is a plugin when it holds a plugin.json
//     whose "command" array says how to start it (run in that subdirectory), or an
//     executable file of the subdirectory's own name;
//   - nothing deeper is scanned, and hidden files, editor backups and the temporary
//     files of `go build` and `mv`-style installs are skipped.
//
// A plugin found under the same name in two directories is loaded only from the
// higher-priority one; the other is reported as shadowed.
package discover

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Source says where a plugin directory comes from, in priority order.
type Source int

const (
	// Project plugins live in the project's .exocortex/plugins/.
	Project Source = iota
	// User plugins live in $EXOCORTEX_HOME/plugins/.
	User
	// Builtin plugins ship inside the exocortex binary.
	Builtin
	// Extra directories come from the configuration.
	Extra
)

func (s Source) String() string {
	switch s {
	case Project:
		return "project"
	case User:
		return "user"
	case Builtin:
		return "builtin"
	case Extra:
		return "config"
	}
	return fmt.Sprintf("Source(%d)", int(s))
}

// Dir is a directory to scan.
type Dir struct {
	Path   string
	Source Source
}

// Candidate is a plugin found in a directory.
type Candidate struct {
	Name string
	// Path is the executable, or the plugin's subdirectory when plugin.json starts it.
	Path string
	// Command is what to run; Command[0] is resolved relative to WorkDir when it
	// contains a slash.
	Command []string
	WorkDir string
	Dir     Dir
}

// Shadowed is a plugin hidden by one of the same name in a higher-priority directory.
type Shadowed struct {
	Hidden Candidate
	By     Candidate
}

// Manifest is plugin.json, for plugins that are not a single executable (a Python
// plugin with several files, say).
type Manifest struct {
	// Command starts the plugin, e.g. ["python3", "main.py"].
	Command []string `json:"command"`
}

// Problem is a file in a plugin directory that looks like a plugin but cannot be one.
type Problem struct {
	Path string
	Err  error
}

// Result is what a scan found.
type Result struct {
	Plugins  []Candidate
	Shadowed []Shadowed
	Problems []Problem
}

// Scan scans dirs in the given order (highest priority first). A directory that
// does not exist is skipped silently: that is the normal state of most of them.
func Scan(dirs []Dir) Result {
	var res Result
	seen := map[string]Candidate{}
	for _, d := range dirs {
		found, problems := scanDir(d)
		res.Problems = append(res.Problems, problems...)
		for _, c := range found {
			if first, ok := seen[c.Name]; ok {
				res.Shadowed = append(res.Shadowed, Shadowed{Hidden: c, By: first})
				continue
			}
			seen[c.Name] = c
			res.Plugins = append(res.Plugins, c)
		}
	}
	return res
}

// Skipped reports whether a file name is never a plugin: hidden files, backups and
// temporary files written while a binary is being replaced.
func Skipped(name string) bool {
	return strings.HasPrefix(name, ".") ||
		strings.HasSuffix(name, "~") ||
		strings.HasSuffix(name, ".tmp") ||
		strings.Contains(name, "-go-tmp-") ||
		strings.HasSuffix(name, ".swp") ||
		strings.HasSuffix(name, ".md") ||
		strings.HasSuffix(name, ".json") ||
		strings.HasSuffix(name, ".txt")
}

// Executable reports whether a file mode is a regular file with an execute bit.
func Executable(m fs.FileMode) bool { return m.IsRegular() && m.Perm()&0o111 != 0 }

func scanDir(d Dir) ([]Candidate, []Problem) {
	entries, err := os.ReadDir(d.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []Problem{{Path: d.Path, Err: fmt.Errorf("reading plugin directory: %w", err)}}
	}
	var out []Candidate
	var problems []Problem
	for _, e := range entries {
		name := e.Name()
		if Skipped(name) {
			continue
		}
		full := filepath.Join(d.Path, name)
		info, err := os.Stat(full) // follows symlinks
		if err != nil {
			problems = append(problems, Problem{Path: full, Err: err})
			continue
		}
		switch {
		case info.IsDir():
			c, ok, err := scanPluginDir(d, full, name)
			if err != nil {
				problems = append(problems, Problem{Path: full, Err: err})
			} else if ok {
				out = append(out, c)
			}
		case Executable(info.Mode()):
			out = append(out, Candidate{
				Name:    strings.TrimSuffix(name, filepath.Ext(name)),
				Path:    full,
				Command: []string{full},
				WorkDir: d.Path,
				Dir:     d,
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, problems
}

func scanPluginDir(d Dir, full, name string) (Candidate, bool, error) {
	mf := filepath.Join(full, "plugin.json")
	if b, err := os.ReadFile(mf); err == nil {
		var m Manifest
		if err := json.Unmarshal(b, &m); err != nil {
			return Candidate{}, false, fmt.Errorf("%s is not valid JSON: %w", mf, err)
		}
		if len(m.Command) == 0 {
			return Candidate{}, false, fmt.Errorf(`%s has no "command" (e.g. {"command": ["python3", "main.py"]})`, mf)
		}
		cmd := append([]string(nil), m.Command...)
		if strings.ContainsRune(cmd[0], '/') && !filepath.IsAbs(cmd[0]) {
			cmd[0] = filepath.Join(full, cmd[0])
		}
		return Candidate{Name: name, Path: full, Command: cmd, WorkDir: full, Dir: d}, true, nil
	}
	exe := filepath.Join(full, name)
	if info, err := os.Stat(exe); err == nil && Executable(info.Mode()) {
		return Candidate{Name: name, Path: exe, Command: []string{exe}, WorkDir: full, Dir: d}, true, nil
	}
	return Candidate{}, false, nil
}
