package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadTools(t *testing.T) {
	project := t.TempDir()
	tests := []struct {
		name    string
		file    string
		env     map[string]string
		check   func(t *testing.T, tl Tools)
		wantErr string
	}{
		{name: "defaults", check: func(t *testing.T, tl Tools) {
			if len(tl.Editor.Roots) != 1 || tl.Editor.Roots[0] != project {
				t.Errorf("editor roots = %v, want [%s]", tl.Editor.Roots, project)
			}
			ce := tl.CodeExecution
			if time.Duration(ce.Timeout) != time.Minute || ce.OutputLimit != 10000 || ce.Shell != "bash" || ce.WorkDir != project {
				t.Errorf("code_execution defaults: %+v", ce)
			}
			ws := tl.WebSearch
			if ws.Provider != "" || ws.Rate != 1 || ws.Burst != 1 || ws.MaxResults != 5 {
				t.Errorf("web_search defaults: %+v", ws)
			}
			if time.Duration(tl.Memory.IdleClose) != time.Minute {
				t.Errorf("memory idle close = %v", tl.Memory.IdleClose)
			}
		}},
		{name: "file", file: "tools:\n  editor:\n    roots: [src, /srv/data]\n  code_execution:\n    timeout: 5s\n    output_limit: 300\n  web_search:\n    url: http://127.0.0.1:8888\n    rate: 0.5\n",
			check: func(t *testing.T, tl Tools) {
				want := []string{filepath.Join(project, "src"), "/srv/data"}
				if strings.Join(tl.Editor.Roots, ",") != strings.Join(want, ",") {
					t.Errorf("roots = %v, want %v", tl.Editor.Roots, want)
				}
				if time.Duration(tl.CodeExecution.Timeout) != 5*time.Second || tl.CodeExecution.OutputLimit != 300 {
					t.Errorf("code_execution = %+v", tl.CodeExecution)
				}
				if tl.WebSearch.Provider != SearchSearXNG || tl.WebSearch.Rate != 0.5 {
					t.Errorf("web_search = %+v", tl.WebSearch)
				}
			}},
		{name: "env key chooses tavily", env: map[string]string{EnvSearchKey: "k", EnvSearchRate: "3"},
			check: func(t *testing.T, tl Tools) {
				if tl.WebSearch.Provider != SearchTavily || tl.WebSearch.APIKey != "k" || tl.WebSearch.Rate != 3 {
					t.Errorf("web_search = %+v", tl.WebSearch)
				}
			}},
		{name: "typo", file: "tools:\n  editor:\n    rootz: [x]\n", wantErr: "tools.editor.rootz: is not a setting (did you mean tools.editor.roots?)"},
		{name: "bad rate", env: map[string]string{EnvSearchRate: "fast"}, wantErr: EnvSearchRate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.file != "" {
				if err := os.WriteFile(filepath.Join(home, FileName), []byte(tt.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, k := range []string{EnvSearchProvider, EnvSearchURL, EnvSearchKey, EnvSearchRate} {
				t.Setenv(k, tt.env[k])
			}
			t.Setenv(EnvProject, project)
			tl, err := LoadTools(home)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tl.Home != home || tl.ProjectDir != project {
				t.Errorf("home, project = %s, %s", tl.Home, tl.ProjectDir)
			}
			tt.check(t, tl)
		})
	}
}
