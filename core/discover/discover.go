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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// SkipKind says why a Skip was passed over.
type SkipKind string

const (
	// NotExecutable: a file that looks like a plugin (a script, a numbered
	// _NN_name file, a file starting with #! or an executable's magic number,
	// or a plugin directory's file of its own name) without its execute bit.
	NotExecutable SkipKind = "not_executable"
	// MissingDir: a configured plugin directory (plugin_dirs) that does not exist.
	MissingDir SkipKind = "missing_dir"
	// Untrusted: a project's plugin directory left out because the project is
	// not trusted (the host decides this, core/host/trust.go).
	Untrusted SkipKind = "untrusted"
)

// Skip is something the loader passes over although it looks meant to load.
// The host reports each where the operator looks (stderr, the welcome card,
// `plugins status`) and the lint reports each with a code, so nothing is
// skipped without a word.
type Skip struct {
	Kind SkipKind
	// Path is the file or directory skipped.
	Path string
	// Plugins names the plugins left out, where known (Untrusted).
	Plugins []string
	// Message says what was skipped and why; Fix says what to do.
	Message, Fix string
}

// Result is what a scan found.
type Result struct {
	Plugins  []Candidate
	Shadowed []Shadowed
	Problems []Problem
	// Skipped lists what looks meant to load but does not: files without their
	// execute bit, configured directories that do not exist.
	Skipped []Skip
}

// Scan scans dirs in the given order (highest priority first). A project's or
// the user's directory that does not exist is skipped silently: that is the
// normal state of most of them; a configured one (Extra) that does not exist is
// listed in Skipped.
func Scan(dirs []Dir) Result {
	var res Result
	seen := map[string]Candidate{}
	for _, d := range dirs {
		found, problems, skipped := scanDir(d)
		res.Problems = append(res.Problems, problems...)
		res.Skipped = append(res.Skipped, skipped...)
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
	return EditorTemp(name) ||
		strings.HasSuffix(name, ".tmp") ||
		strings.Contains(name, "-go-tmp-") ||
		strings.HasSuffix(name, ".md") ||
		strings.HasSuffix(name, ".json") ||
		strings.HasSuffix(name, ".txt")
}

// Executable reports whether a file mode is a regular file with an execute bit.
func Executable(m fs.FileMode) bool { return m.IsRegular() && m.Perm()&0o111 != 0 }

func scanDir(d Dir) ([]Candidate, []Problem, []Skip) {
	entries, err := os.ReadDir(d.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if d.Source == Extra {
				return nil, nil, []Skip{{Kind: MissingDir, Path: d.Path,
					Message: fmt.Sprintf("plugin directory %s (plugin_dirs in the configuration) does not exist, so no plugin loads from it", d.Path),
					Fix:     fmt.Sprintf("create %s, or correct or remove the entry in plugin_dirs", d.Path)}}
			}
			return nil, nil, nil
		}
		return nil, []Problem{{Path: d.Path, Err: fmt.Errorf("reading plugin directory: %w", err)}}, nil
	}
	var out []Candidate
	var problems []Problem
	var skipped []Skip
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
			} else if exe := filepath.Join(full, name); looksLikePlugin(exe) {
				skipped = append(skipped, notExecutable(exe))
			}
		case info.Mode().IsRegular() && !Executable(info.Mode()) && looksLikePlugin(full):
			skipped = append(skipped, notExecutable(full))
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
	return out, problems, skipped
}

// scriptExts are the file extensions of scripts a plugin might be written as.
var scriptExts = []string{".py", ".sh", ".js", ".mjs", ".ts", ".rb", ".pl"}

// looksLikePlugin reports whether a regular file without its execute bit looks
// meant to run: a script by its extension, a numbered _NN_name file, or a file
// that starts with #! or an executable's magic number (ELF, Mach-O, PE).
func looksLikePlugin(path string) bool {
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() || Executable(info.Mode()) {
		return false
	}
	name := filepath.Base(path)
	ext := filepath.Ext(name)
	for _, e := range scriptExts {
		if ext == e {
			return true
		}
	}
	if len(name) > 2 && name[0] == '_' && name[1] >= '0' && name[1] <= '9' {
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	for _, magic := range [][]byte{[]byte("#!"), []byte("\x7fELF"), {0xcf, 0xfa, 0xed, 0xfe}, {0xce, 0xfa, 0xed, 0xfe}, []byte("MZ")} {
		if bytes.HasPrefix(head, magic) {
			return true
		}
	}
	return false
}

func notExecutable(path string) Skip {
	return Skip{Kind: NotExecutable, Path: path,
		Message: fmt.Sprintf("%s looks like a plugin but has no execute bit, so the loader skips it", path),
		Fix:     fmt.Sprintf("chmod +x %s (a script needs a #! line), or move it out of the plugin directory", path)}
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
