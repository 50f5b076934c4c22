package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadRefusesOutOfRangeValues writes each bad value into a real config.yaml
// and checks that Load refuses it with a message naming the setting.
func TestLoadRefusesOutOfRangeValues(t *testing.T) {
	cases := []struct {
		yaml string
		want string
	}{
		{"timeouts:\n  default: -1s\n", "timeouts.default: -1s is not allowed"},
		{"timeouts:\n  default: 0s\n", "timeouts.default: 0s is not allowed"},
		{"timeouts:\n  tool: -5m\n", "timeouts.tool: -5m0s is not allowed"},
		{"timeouts:\n  tools:\n    code_execution: -1s\n", "timeouts.tools.code_execution: -1s is not allowed"},
		{"timeouts:\n  extensions:\n    hello: -2s\n", "timeouts.extensions.hello: -2s is not allowed"},
		{"max_iterations: -1\n", "max_iterations: -1 is not allowed: give a positive number of iterations"},
		{"max_iterations: 0\n", "max_iterations: 0 is not allowed"},
		{"num_ctx: -4096\n", "num_ctx: -4096 is not allowed: give a positive number of tokens"},
		{"max_num_ctx: -1\n", "max_num_ctx: -1 is not allowed"},
		{"timeouts:\n  compress: -1s\n", "timeouts.compress: -1s is not allowed"},
		{"unusable_limit: -1\n", "unusable_limit: -1 is not allowed"},
		{"idle_sleep: -1m\n", "idle_sleep: -1m0s is not allowed"},
	}
	for _, tc := range cases {
		t.Run(strings.TrimSpace(tc.yaml), func(t *testing.T) {
			home := t.TempDir()
			path := filepath.Join(home, FileName)
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(home)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Load with %q: %v, want an error naming %s and %q", tc.yaml, err, path, tc.want)
			}
		})
	}
	// The good values still load, and several bad ones are reported together.
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, FileName), []byte("max_iterations: 3\nnum_ctx: 0\nidle_sleep: 0s\ntimeouts:\n  default: 1s\n"), 0o600)
	if _, err := Load(home); err != nil {
		t.Fatalf("valid values refused: %v", err)
	}
	os.WriteFile(filepath.Join(home, FileName), []byte("max_iterations: -1\ntimeouts:\n  default: -1s\n"), 0o600)
	if _, err := Load(home); err == nil || !strings.Contains(err.Error(), "max_iterations") || !strings.Contains(err.Error(), "timeouts.default") {
		t.Fatalf("both bad values should be named: %v", err)
	}
}
