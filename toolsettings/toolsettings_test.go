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

// Every tool's section arrives resolved, the sandbox policy with it, and the
// web_search key does not: it is a secret, asked of the host.
func TestHostSendsEveryToolSectionButTheKey(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	yaml := "tools:\n  code_execution:\n    timeout: 5s\n    work_dir: src\n  data:\n    base_dir: data\n" +
		"  web_search:\n    url: http://search.example\n    api_key: tvly-SENTINEL-0123456789\n  memory:\n    recall:\n      limit: 9\n" +
		"  sandbox:\n    network: off\n"
	if err := os.WriteFile(filepath.Join(home, config.FileName), []byte(yaml), 0o600); err != nil {
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
	if strings.Contains(entry, "SENTINEL") {
		t.Fatalf("the settings carry web_search's API key: %s", entry)
	}
	_, value, _ := strings.Cut(entry, "=")
	got, err := toolsettings.FromEnv(func(string) string { return value })
	if err != nil {
		t.Fatal(err)
	}
	code, err := toolsettings.Setting(got, "tools.code_execution", got.CodeExecution)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"home", got.Home, home},
		{"code_execution.timeout", code.Timeout, toolsettings.Duration(5e9)},
		{"code_execution.work_dir", code.WorkDir, filepath.Join(proj, "src")},
		{"code_execution's sandbox network", code.Confine.Policy.Network, false},
		{"code_execution's sandbox hides config.yaml", slices.Contains(code.Confine.Policy.Secrets, filepath.Join(home, config.FileName)), true},
		{"data.base_dir", got.Data.BaseDir, filepath.Join(proj, "data")},
		{"web_search.url", got.WebSearch.URL, "http://search.example"},
		{"web_search.api_key", got.WebSearch.APIKey, ""},
		{"memory.recall.limit", got.Recall.Limit, 9},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: the plugin read %v, want %v", c.what, c.got, c.want)
		}
	}
	if _, err := toolsettings.Setting(toolsettings.Tools{}, "tools.data", (*toolsettings.Data)(nil)); err == nil || !strings.Contains(err.Error(), "tools.data") {
		t.Errorf("a section the host did not send: %v, want an error naming tools.data", err)
	}
}
