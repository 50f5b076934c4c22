package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/lint"
	"github.com/exocortex/exocortex/sdk/python"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// installPython writes the Python fixture plugin src into dir/name with a
// plugin.json and a copy of the Python SDK.
func installPython(t *testing.T, src, dir, name string) string {
	t.Helper()
	pdir := filepath.Join(dir, name)
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	code, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	pj, _ := json.Marshal(discover.Manifest{Command: []string{"/usr/bin/python3", "main.py"}})
	for _, f := range []struct {
		name string
		data []byte
	}{{"main.py", code}, {"plugin.json", pj}} {
		if err := os.WriteFile(filepath.Join(pdir, f.name), f.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := python.Install(pdir); err != nil {
		t.Fatal(err)
	}
	return pdir
}

// TestAuthorMistakesAreFound lints real plugin processes that make the
// mistakes of issue 12, each in a plugin of its own (testdata/seamplugin in
// Go, testdata/pyprompttext in Python), and checks each is reported with its
// code, at its plugin and extension (and key or file); the clean plugin and the
// clearer are not.
func TestAuthorMistakesAreFound(t *testing.T) {
	plug := sdktest.BuildPlugin(t, "./testdata/seamplugin")
	root := t.TempDir()
	dir := filepath.Join(root, "plugins")
	copyExecutable(t, sdktest.BuildPlugin(t, "./testdata/prompttextplugin"), filepath.Join(dir, "prompttext"))
	for _, name := range []string{"countergate", "structgate", "sharedgate", "clearer", "nearmiss", "clean"} {
		copyExecutable(t, plug, filepath.Join(dir, name))
	}
	installPython(t, "testdata/pyprompttext/main.py", dir, "pyprompttext")
	// A copy of a plugin without its execute bit (item 8).
	data, _ := os.ReadFile(plug)
	if err := os.WriteFile(filepath.Join(dir, "unexecutable"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(root, "configured-but-missing")
	opts := host.Options{
		Dirs:   []discover.Dir{{Path: dir, Source: discover.User}, {Path: missing, Source: discover.Extra}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	in, err := lintInput(context.Background(), opts, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := lint.Check(in)

	tests := []struct {
		name                       string
		code                       string
		plugin, extension, key, in string // in: a substring of the message
	}{
		{"Go: prompt text instead of signal", "EXO017", "prompttext", "loop_escalator", "", "signals.Repeat"},
		{"Python: prompt text instead of signal", "EXO017", "pyprompttext", "repeat_watcher", "", "signals.REPEAT"},
		{"Int32 counter as a gate at two hooks", "EXO091", "countergate", "retry_once", "retry_count", "google.protobuf.Int32Value"},
		{"Int32 counter never reset", "EXO051", "countergate", "retry_once", "retry_count", "counter"},
		{"gate in a Struct field at two hooks", "EXO091", "structgate", "catalog_once", "catalog_flags", "google.protobuf.Struct"},
		{"two extension names share one gate", "EXO091", "sharedgate", "memory_catalog_early", "memory_catalog_done", "memory_catalog_late"},
		{"near-miss key names", "EXO035", "nearmiss", "fail_advisor", "fail_trackers", `"fail_tracker"`},
		{"plugin file without execute bit", "EXO085", "", "", "", "unexecutable"},
		{"configured plugin directory missing", "EXO086", "", "", "", "configured-but-missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range got {
				if f.Code == tt.code && f.Plugin == tt.plugin && f.Extension == tt.extension && f.Key == tt.key && strings.Contains(f.Message+" "+f.Fix, tt.in) {
					t.Logf("%s %s: %s\nfix: %s", f.Code, f.Location(), f.Message, f.Fix)
					return
				}
			}
			t.Errorf("no %s at plugin=%s extension=%s key=%s saying %q; got:\n%s", tt.code, tt.plugin, tt.extension, tt.key, tt.in, findingsText(got))
		})
	}
	for _, f := range got {
		if (f.Plugin == "clean" || f.Plugin == "clearer") && f.Severity == lint.Error {
			t.Errorf("a clean plugin is reported: %s %s: %s", f.Code, f.Location(), f.Message)
		}
		if f.Plugin == "clearer" && strings.Contains(f.Message, "approval_clear") && f.Code == "EXO051" {
			t.Errorf("the clearer is called a setter: %s", f.Message)
		}
	}
}

func findingsText(fs []lint.Finding) string {
	var b strings.Builder
	_ = lint.WriteText(&b, fs)
	return b.String()
}
