package a0port

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/exocortex/exocortex/sdk/python/pyimport"
)

// ObservedFile is where a ported plugin's compatibility layer records the
// agent-data keys each file reads and writes at run time, relative to the
// plugin's directory (a0compat.OBSERVED). Hidden, so the plugin watcher does not
// take the record for an edit.
const ObservedFile = ".a0compat/observed.json"

// KeyDiff is one difference between the agent-data keys the port found in a file
// statically and those the file used at run time.
type KeyDiff struct {
	// File is relative to the plugin's directory (a0/extensions/python/...).
	File string `json:"file"`
	// Field is the Agent Zero data field; Key the state key it maps to.
	Field string `json:"field"`
	Key   string `json:"key"`
	// Access is "reads" or "writes".
	Access string `json:"access"`
	// Observed is true for a key used at run time that the static scan did not
	// find (kept in the plugin process only, or refused as undeclared); false for
	// a key found statically that the file, although it ran, never used.
	Observed bool `json:"observed"`
}

// Check is what `exocortex lint` reports about one ported plugin.
type Check struct {
	Plugin string
	// Findings are the seams, as the port reports them: those of the ported
	// files read again now (File relative to the plugin's directory) and those of
	// the files the port left out (File in the Agent Zero tree, from port.json).
	Findings []Finding
	KeyDiffs []KeyDiff
	// Imports are the imports of the ported files the plugin cannot load, as
	// the port reports them (File relative to the plugin's directory), and
	// ImportCheck why third-party ones were not checked, if they were not.
	Imports     []pyimport.Problem
	ImportCheck string
	// Tasks are the declared agent-data keys the files store a task in (File
	// relative to the plugin's directory), which the layer keeps in the process.
	Tasks []TaskInState
}

// IsPorted reports whether dir holds a plugin written by Port (a port.json).
func IsPorted(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, reportJSONName))
	return err == nil && !fi.IsDir()
}

// Lint checks the ported plugin in dir: it reads its files under a0/ again for the
// seams (so an edited file is judged as it is now), adds the seams of the files
// the port left out (port.json), and compares each file's statically found keys
// with those recorded at run time (ObservedFile), if the plugin has run.
func Lint(ctx context.Context, dir string) (*Check, error) {
	js, err := os.ReadFile(filepath.Join(dir, reportJSONName))
	if err != nil {
		return nil, fmt.Errorf("reading the porting report of %s: %w", dir, err)
	}
	var was Report
	if err := json.Unmarshal(js, &was); err != nil {
		return nil, fmt.Errorf("reading %s: %w: port the tree again with exocortex plugins port", filepath.Join(dir, reportJSONName), err)
	}
	c := &Check{Plugin: was.Plugin}
	for _, f := range was.Findings {
		if f.Seam == SeamNoPython || f.Seam == SeamNoHookPoint {
			f.File = path.Join(filepath.ToSlash(was.Source), f.File)
			c.Findings = append(c.Findings, f)
		}
	}
	now, err := Analyze(ctx, filepath.Join(dir, portedDir), was.Plugin)
	if err != nil {
		return nil, err
	}
	static := map[string]File{}
	for _, f := range now.Findings {
		f.File = path.Join(portedDir, f.File)
		c.Findings = append(c.Findings, f)
	}
	for _, f := range now.Files {
		static[path.Join(portedDir, f.Source)] = f
	}
	for _, p := range now.Imports {
		p.File = path.Join(portedDir, p.File)
		c.Imports = append(c.Imports, p)
	}
	c.ImportCheck = now.ImportCheck
	for _, t := range now.Tasks {
		t.File = path.Join(portedDir, t.File)
		c.Tasks = append(c.Tasks, t)
	}
	obs, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(ObservedFile)))
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the keys observed at run time: %w", err)
	}
	var seen map[string]map[string][]string
	if err := json.Unmarshal(obs, &seen); err != nil {
		return nil, fmt.Errorf("reading %s: %w: delete it; the plugin writes it again as it runs", filepath.Join(dir, ObservedFile), err)
	}
	files := make([]string, 0, len(seen))
	for f := range seen {
		files = append(files, f)
	}
	slices.Sort(files)
	for _, file := range files {
		st, ok := static[file]
		if !ok {
			continue // the file is gone or no longer ported
		}
		for _, acc := range []struct {
			name   string
			static []string
		}{{"reads", slices.Concat(st.Reads, st.Writes, st.External)}, {"writes", st.Writes}} {
			got := seen[file][acc.name]
			for _, k := range got {
				if !slices.Contains(acc.static, k) {
					c.KeyDiffs = append(c.KeyDiffs, KeyDiff{File: file, Field: k, Key: KeyName(was.Plugin, k), Access: acc.name, Observed: true})
				}
			}
		}
		used := append(slices.Clone(seen[file]["reads"]), seen[file]["writes"]...)
		for _, k := range slices.Concat(st.Reads, st.Writes, st.External) {
			if !slices.Contains(used, k) && !slices.ContainsFunc(c.KeyDiffs, func(d KeyDiff) bool { return d.File == file && d.Field == k && !d.Observed }) {
				c.KeyDiffs = append(c.KeyDiffs, KeyDiff{File: file, Field: k, Key: KeyName(was.Plugin, k), Access: "reads", Observed: false})
			}
		}
	}
	return c, nil
}
