// Package config finds the Exocortex home directory and loads the operator's
// configuration: a file in the home directory, overridden by environment variables,
// overridden in turn by command-line flags (the caller applies those last).
package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// HomeEnv names the environment variable that moves the Exocortex home directory.
const HomeEnv = "EXOCORTEX_HOME"

// Home returns the Exocortex home directory: $EXOCORTEX_HOME, or ~/.exocortex.
// It does not create the directory.
func Home() (string, error) {
	if h := os.Getenv(HomeEnv); h != "" {
		return filepath.Abs(h)
	}
	u, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the home directory (set %s to choose one): %w", HomeEnv, err)
	}
	return filepath.Join(u, ".exocortex"), nil
}

// ProjectTrusted reports whether project is one of trusted (trusted_projects,
// `exocortex trust`) or inside one of them. Paths are compared absolute and with
// symbolic links resolved. A trusted project's plugins and prompt overrides
// load; an untrusted one's do not.
func ProjectTrusted(project string, trusted []string) bool {
	p := canonical(project)
	for _, t := range trusted {
		t = canonical(t)
		if t == "" {
			continue
		}
		if p == t || strings.HasPrefix(p, t+string(filepath.Separator)) || t == string(filepath.Separator) {
			return true
		}
	}
	return false
}

func canonical(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Clean(p)
}
