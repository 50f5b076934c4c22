package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/scaffold/a0port"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestPortChecksInstalledOrders: `exocortex plugins port` starts the plugins
// installed here and reports, as seam 4, a ported file whose hook and order a
// built-in extension already has (Agent Zero's own memorize file is
// _50_memorize_fragments at monologue_end, the order of memory-tools'
// memorize), naming the extension and a free prefix; --installed=false skips
// the check. The report files written into the plugin carry the finding.
func TestPortChecksInstalledOrders(t *testing.T) {
	tree := t.TempDir()
	ext := `from helpers.extension import Extension


class Note(Extension):
    async def execute(self, **kwargs):
        return None
`
	files := map[string]bool{ // file -> collides with a built-in
		"usr/extensions/python/monologue_end/_50_memorize_fragments.py": true,
		"usr/extensions/python/monologue_end/_51_own_order.py":          false,
		"usr/extensions/python/monologue_end/_52_second.py":             true,
	}
	for rel := range files {
		p := filepath.Join(tree, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(ext), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home := t.TempDir()
	tests := []struct {
		name  string
		flags []string
		want  map[string]string // file -> the free prefix named
	}{
		{"checked", nil, map[string]string{
			"usr/extensions/python/monologue_end/_50_memorize_fragments.py": "_54_memorize_fragments.py", // 51 is the tree's, 52 and 53 memory-tools'
			"usr/extensions/python/monologue_end/_52_second.py":             "_56_second.py",             // 54 is where the first one goes now
		}},
		{"not checked", []string{"--installed=false"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "a0")
			args := append([]string{"plugins", "port", tree, "--out", out, "--json"}, tt.flags...)
			stdout, stderr, code := runExo(t, exe, t.TempDir(), home, args...)
			if code != 0 {
				t.Fatalf("port exit %d\n%s\n%s", code, stdout, stderr)
			}
			var r a0port.Report
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatalf("--json: %v\n%s", err, stdout)
			}
			written, err := os.ReadFile(filepath.Join(out, "port.json"))
			if err != nil {
				t.Fatal(err)
			}
			var w a0port.Report
			if err := json.Unmarshal(written, &w); err != nil {
				t.Fatal(err)
			}
			for name, rep := range map[string]a0port.Report{"printed": r, "port.json": w} {
				got := map[string]string{}
				for _, f := range rep.Findings {
					if f.Seam == a0port.SeamPrefix && strings.Contains(f.What, "installed plugin memory-tools") {
						got[f.File] = f.Fix
					}
				}
				if len(got) != len(tt.want) {
					t.Errorf("%s: findings against installed plugins %v, want %v", name, got, tt.want)
				}
				for file, prefix := range tt.want {
					if !strings.Contains(got[file], prefix) {
						t.Errorf("%s: %s: fix %q, want it to name %s", name, file, got[file], prefix)
					}
				}
			}
		})
	}
}
