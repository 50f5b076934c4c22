package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/exocortex/exocortex/lint"
	"github.com/exocortex/exocortex/sdk/python"
	"github.com/exocortex/exocortex/wiring"
)

// secretReads finds, in every plugin's Python files (a ported Agent Zero
// tree's included, the plugin's copy of the SDK left out), the places that
// read the operator's secrets, for EXO139. Files that cannot be read are
// left out.
func secretReads(plugins []wiring.Plugin) []lint.SecretRead {
	var out []lint.SecretRead
	for _, p := range plugins {
		if p.Path == "" {
			continue
		}
		if fi, err := os.Stat(p.Path); err != nil || !fi.IsDir() {
			continue
		}
		eachPythonFile(p.Path, func(rel string, code []byte) {
			out = append(out, lint.FindSecretReads(p.Name, rel, code)...)
		})
	}
	return out
}

// eachPythonFile calls fn with every .py file under dir (slash-separated path
// relative to dir, and its code), leaving out the plugin's copy of the SDK,
// __pycache__ and hidden directories, and files that cannot be read.
func eachPythonFile(dir string, fn func(rel string, code []byte)) {
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if n := d.Name(); path != dir && (n == python.Package || n == "__pycache__" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".py") {
			return nil
		}
		code, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		fn(filepath.ToSlash(rel), code)
		return nil
	})
}
