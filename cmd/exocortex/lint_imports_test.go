package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/scaffold/a0port"
	"github.com/exocortex/exocortex/sdk/python/pyimport"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestLintRepeatsImportFindings runs the real `exocortex lint --json` over a
// plugin directory holding a ported Agent Zero tree (scaffold/a0port's
// testdata/imports) and a Python plugin of our own: every import the porting
// report names as one the plugin cannot load is a lint finding at the same
// file and line with the same fix (EXO136 for third-party modules, EXO135 for
// Agent Zero internals), and the plain plugin's third-party import is found
// too, while its own module and the standard library are not. A plugin whose
// interpreter cannot run gets a notice (EXO138) that its third-party imports
// went unchecked, not silence.
func TestLintRepeatsImportFindings(t *testing.T) {
	home := t.TempDir()
	plugins := filepath.Join(home, "plugins")
	r, err := a0port.Port(t.Context(), "../../scaffold/a0port/testdata/imports", filepath.Join(plugins, "a0-imports"), "a0-imports")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Imports) == 0 {
		t.Fatal("the port found no import it cannot load; the test needs some")
	}
	own := filepath.Join(plugins, "summariser")
	for name, body := range map[string]string{
		"plugin.json": `{"command": ["/usr/bin/python3", "main.py"]}` + "\n",
		"main.py":     "import os\nfrom mylocal import VALUE\n\nimport openai\n",
		"mylocal.py":  "VALUE = 1\n",
	} {
		if err := os.MkdirAll(own, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(own, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	noPython := filepath.Join(plugins, "nopython")
	for name, body := range map[string]string{
		"plugin.json": `{"command": ["python3-not-installed-xyz", "main.py"]}` + "\n",
		"main.py":     "import openai\n",
	} {
		if err := os.MkdirAll(noPython, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(noPython, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	out, errOut, code := runExo(t, exe, t.TempDir(), home, "lint", "--dir", plugins, "--json")
	if code != 1 {
		t.Fatalf("lint exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	rep := report(t, out)
	has := func(code, plugin, file, fix string) bool {
		for _, f := range rep.Findings {
			if f.Code == code && f.Plugin == plugin && f.File == file && (fix == "" || f.Fix == fix) {
				return true
			}
		}
		return false
	}
	type want struct{ code, plugin, file, fix string }
	var tests []want
	for _, p := range r.Imports {
		c := "EXO135"
		if p.Kind == pyimport.KindThirdParty {
			c = "EXO136"
		}
		tests = append(tests, want{c, "a0-imports", "a0/extensions/python/" + p.File[len("usr/extensions/python/"):] + ":" + strconv.Itoa(p.Line), p.Fix})
	}
	tests = append(tests, want{"EXO136", "summariser", "main.py:4", pyimport.InstallFix("openai", pyimport.Unknown)})
	for _, tt := range tests {
		if !has(tt.code, tt.plugin, tt.file, tt.fix) {
			t.Errorf("no %s for %s at %s with fix %q:\n%s", tt.code, tt.plugin, tt.file, tt.fix, out)
		}
	}
	for _, f := range rep.Findings {
		if (f.Code == "EXO135" || f.Code == "EXO136") && f.Plugin == "summariser" && f.File != "main.py:4" {
			t.Errorf("the plugin's own module or the standard library reported: %+v", f)
		}
	}
	var n int
	for _, f := range rep.Findings {
		if f.Code == "EXO135" || f.Code == "EXO136" {
			n++
		}
	}
	if n != len(tests) {
		t.Errorf("%d import findings, want %d", n, len(tests))
	}
	if f := find(rep, "EXO138", "nopython", ""); f == nil || f.Severity != "info" || !strings.Contains(f.Message, "python3-not-installed-xyz") {
		t.Errorf("no EXO138 notice naming the interpreter for the plugin whose interpreter cannot run: %+v\n%s", f, out)
	}
}
