package main

import (
	"context"
	"encoding/json"
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
		Logger: slog.New(slog.DiscardHandler),
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

// answerScript is a scripted model that answers at once with the response tool.
const answerScript = `model: scripted
replies:
  - content: '{"thoughts": ["done"], "headline": "answering", "tool_name": "response", "tool_args": {"text": "all done"}}'
`

// TestRunKeepsOutWiringErrors: `exocortex run` applies hot reload's rule at
// start. A plugin with wiring errors (nearmiss: EXO031, EXO035) is kept out and
// stderr says why, with the findings; the monologue runs with the others.
// --allow-wiring-errors starts it and says so. `plugins status` lists it as
// rejected and prints what the loader kept out or skipped (a file without its
// execute bit) on stderr.
func TestRunKeepsOutWiringErrors(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	plug := sdktest.BuildPlugin(t, "./testdata/seamplugin")
	home, wd := t.TempDir(), t.TempDir()
	plugins := filepath.Join(home, "plugins")
	copyExecutable(t, plug, filepath.Join(plugins, "nearmiss"))
	copyExecutable(t, plug, filepath.Join(plugins, "clean"))
	if err := os.WriteFile(filepath.Join(plugins, "forgotten.py"), []byte("#!/usr/bin/env python3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "answer.yaml")
	if err := os.WriteFile(script, []byte(answerScript), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  []string
		want  []string
		avoid string
	}{
		{name: "kept out", args: nil, want: []string{"plugin nearmiss was kept out", "EXO035", "forgotten.py looks like a plugin but has no execute bit"}},
		{name: "allowed", args: []string{"--allow-wiring-errors"}, want: []string{"started with wiring errors (--allow-wiring-errors)", "EXO035"}, avoid: "was kept out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"run", "-p", "hello", "--model", "script:" + script}, tt.args...)
			out, stderr, code := runExo(t, exe, wd, home, args...)
			if code != 0 || !strings.Contains(out, "all done") {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
			if tt.avoid != "" && strings.Contains(stderr, tt.avoid) {
				t.Errorf("stderr says %q:\n%s", tt.avoid, stderr)
			}
		})
	}

	out, stderr, code := runExo(t, exe, wd, home, "plugins", "status", "--json")
	if code != 0 {
		t.Fatalf("plugins status: exit %d: %s", code, stderr)
	}
	var st []host.PluginStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	states := map[string]host.State{}
	for _, p := range st {
		states[p.Name] = p.State
	}
	if states["nearmiss"] != host.StateRejected || states["clean"] != host.StateRunning {
		t.Errorf("plugins status states = %v", states)
	}
	for _, w := range []string{"plugin nearmiss was kept out", "forgotten.py looks like a plugin but has no execute bit"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("plugins status stderr does not say %q:\n%s", w, stderr)
		}
	}
}
