package toolsettings_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/toolsettings"
)

// What the host sends is what a tool plugin reads: config.yaml's tools:
// section, resolved at the host (relative roots against the project, defaults
// filled in), through the plugin settings, with no config.yaml read by the
// plugin; a section that does not resolve arrives as an error naming it.
func TestHostSendsWhatToolsRead(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		want    func(proj string) toolsettings.Editor
		wantErr string
	}{
		{"defaults", "", func(proj string) toolsettings.Editor {
			return toolsettings.Editor{Roots: []string{proj}, MaxReadLines: 400, MaxFileBytes: 10 << 20}
		}, ""},
		{"configured", "tools:\n  editor:\n    roots: [docs, /srv/notes]\n    max_read_lines: 7\n", func(proj string) toolsettings.Editor {
			return toolsettings.Editor{Roots: []string{filepath.Join(proj, "docs"), "/srv/notes"}, MaxReadLines: 7, MaxFileBytes: 10 << 20}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, proj := t.TempDir(), t.TempDir()
			if err := os.WriteFile(filepath.Join(home, config.FileName), []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(home)
			if err != nil {
				t.Fatal(err)
			}
			entry, err := cfg.PluginSettingsEnv(home, proj)
			if err != nil {
				t.Fatal(err)
			}
			name, value, _ := strings.Cut(entry, "=")
			got, err := toolsettings.FromEnv(func(k string) string {
				if k == name {
					return value
				}
				return ""
			})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("FromEnv: %v, want an error naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want(proj)
			if got.Editor == nil || !equal(*got.Editor, want) {
				t.Fatalf("the plugin read %+v, want %+v", got.Editor, want)
			}
		})
	}
}

func equal(a, b toolsettings.Editor) bool {
	return slices.Equal(a.Roots, b.Roots) && a.MaxReadLines == b.MaxReadLines && a.MaxFileBytes == b.MaxFileBytes
}

// A process the host did not start has no settings, and says so.
func TestFromEnvWithoutHost(t *testing.T) {
	if _, err := toolsettings.FromEnv(func(string) string { return "" }); !errors.Is(err, toolsettings.ErrNotSent) {
		t.Fatalf("FromEnv without the variable: %v, want ErrNotSent", err)
	}
	if _, err := toolsettings.FromEnv(func(string) string { return "{not json" }); err == nil || !strings.Contains(err.Error(), toolsettings.EnvSettings) {
		t.Fatalf("FromEnv of a malformed value: %v, want an error naming %s", err, toolsettings.EnvSettings)
	}
}
