// Package config finds the Exocortex home directory and loads the operator's
// configuration: a file in the home directory, overridden by environment variables,
// overridden in turn by command-line flags (the caller applies those last).
package config

import (
	"fmt"
	"os"
	"path/filepath"
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
