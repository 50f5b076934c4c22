package lint

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/prompts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/signals"
	"github.com/exocortex/exocortex/wiring"
)

// extension finds an extension of the seed model by name.
func extension(t *testing.T, in *Input, name string) *exocortexv1.ExtensionSpec {
	t.Helper()
	for _, p := range in.Plugins {
		for _, e := range p.Manifest.GetExtensions() {
			if e.GetName() == name {
				return e
			}
		}
	}
	t.Fatalf("no extension %s in the seed model", name)
	return nil
}

func manifestOf(t *testing.T, in *Input, plugin string) *exocortexv1.ManifestResponse {
	t.Helper()
	for _, p := range in.Plugins {
		if p.Name == plugin {
			return p.Manifest
		}
	}
	t.Fatalf("no plugin %s in the seed model", plugin)
	return nil
}

func has(fs []Finding, code string, sev Severity, plugin, ext, key, file string) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool {
		return f.Code == code && f.Severity == sev && f.Plugin == plugin && f.Extension == ext && f.Key == key && f.File == file
	})
}

// TestEditsOfTheCleanSeed makes one change at a time to the clean fixture, the
// kind that broke the seed system silently, and sees the matching finding.
func TestEditsOfTheCleanSeed(t *testing.T) {
	tests := []struct {
		name string
		edit func(t *testing.T, in *Input)
		// code, severity, plugin, extension, key, file
		want [6]string
	}{
		{"a prompt's signal is renamed", func(t *testing.T, in *Input) {
			for i := range in.Prompts {
				if in.Prompts[i].File == "fw.msg_repeat.md" {
					in.Prompts[i].Signal = "loop_detected"
				}
			}
		}, [6]string{"EXO012", "error", "", "", "", "prompts/fw.msg_repeat.md"}},
		{"a prompt is reworded without regenerating", func(t *testing.T, in *Input) {
			for i := range in.Prompts {
				if in.Prompts[i].File == "fw.msg_misformat.md" {
					in.Prompts[i].Description = "The reply was not valid JSON."
				}
			}
		}, [6]string{"EXO013", "error", "", "", "", "prompts/fw.msg_misformat.md"}},
		{"an order is moved onto another's", func(t *testing.T, in *Input) {
			extension(t, in, "orchestration_mode").Order = 55
		}, [6]string{"EXO041", "error", "orchestration", "orchestration_mode", "", ""}},
		{"an order is left unset (0)", func(t *testing.T, in *Input) {
			extension(t, in, "orchestration_mode").Order = 0
		}, [6]string{"EXO044", "warning", "orchestration", "orchestration_mode", "", ""}},
		{"an order is negative", func(t *testing.T, in *Input) {
			extension(t, in, "library_catalog").Order = -5
		}, [6]string{"EXO044", "warning", "library", "library_catalog", "", ""}},
		{"a key is declared with another type", func(t *testing.T, in *Input) {
			m := manifestOf(t, in, "memory")
			m.StateKeys = append(m.StateKeys, &exocortexv1.StateKeySpec{Name: "bst_store", Type: "memory.v1.Belief", Scope: exocortexv1.Scope_SCOPE_SESSION})
		}, [6]string{"EXO021", "error", "memory", "", "bst_store", ""}},
		{"a session flag's only resetter is disabled", func(t *testing.T, in *Input) {
			// The seed's own gate is iteration-scoped now, reset by the host; a
			// plugin's session flag still needs a resetter that runs.
			m := manifestOf(t, in, "action_boundary")
			m.StateKeys = append(m.StateKeys, &exocortexv1.StateKeySpec{Name: "approval_pending", Type: "exocortex.v1.ActionGate",
				Scope: exocortexv1.Scope_SCOPE_SESSION, Owner: "action_boundary", Flag: true})
			setter, resetter := extension(t, in, "action_boundary"), extension(t, in, "error_comprehension")
			setter.Writes = append(setter.Writes, "approval_pending")
			resetter.Writes = append(resetter.Writes, "approval_pending")
			resetter.Resets = append(resetter.Resets, "approval_pending")
			in.Disabled = map[string]bool{"error_comprehension": true}
		}, [6]string{"EXO052", "error", "action_boundary", "action_boundary", "approval_pending", ""}},
		{"an injector is moved after the prompt is built", func(t *testing.T, in *Input) {
			extension(t, in, "library_catalog").Hook = exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL
		}, [6]string{"EXO071", "error", "library", "library_catalog", "", ""}},
		{"a reader moves before its iteration-scoped writer", func(t *testing.T, in *Input) {
			extension(t, in, "context_watchdog").Hook = exocortexv1.Hook_HOOK_MONOLOGUE_END
		}, [6]string{"EXO033", "error", "supervisor", "supervisor_loop", "context_fill", ""}},
		{"the catalog's path drifts", func(t *testing.T, in *Input) {
			for _, f := range manifestOf(t, in, "library").Files {
				if f.GetUser() == "library_catalog" {
					f.Path = "/a0/usr/workdir/library/catalog.json"
				}
			}
		}, [6]string{"EXO061", "error", "library", "library_catalog", "", "library_catalog"}},
		{"the catalog extension is deployed to a second hook with a gate", func(t *testing.T, in *Input) {
			m := manifestOf(t, in, "memory")
			gate := []string{"memory_catalog_built"}
			for _, e := range m.Extensions {
				if e.GetName() == "memory_catalog" {
					e.Reads, e.Writes = gate, gate
					e.OncePerSession = false
					second := proto.CloneOf(e)
					second.Hook = exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL
					second.InjectsPrompt = false
					m.Extensions = append(m.Extensions, second)
					break
				}
			}
		}, [6]string{"EXO091", "error", "memory", "memory_catalog", "memory_catalog_built", ""}},
		{"a tool loses its implementation", func(t *testing.T, in *Input) {
			manifestOf(t, in, "memory").Tools[0].Implemented = false
		}, [6]string{"EXO111", "error", "memory", "", "", "agent.system.tool.memory_save.md"}},
		{"a tool an extension is limited to is renamed", func(t *testing.T, in *Input) {
			extension(t, in, "evidence_ledger_recorder").ForTools = []string{"memory_save"}
			manifestOf(t, in, "memory").Tools[0].Name = "memory_store"
		}, [6]string{"EXO115", "error", "evidence", "evidence_ledger_recorder", "", ""}},
		{"an extension's for_tools names a tool of a plugin that did not load", func(t *testing.T, in *Input) {
			extension(t, in, "evidence_ledger_recorder").ForTools = []string{"web_search"}
			in.Plugins = append(in.Plugins, Plugin{Name: "search", Path: "plugins/search", LoadError: errors.New("exec format error")})
		}, [6]string{"EXO115", "warning", "evidence", "evidence_ledger_recorder", "", ""}},
		{"for_tools is declared at a hook without tools", func(t *testing.T, in *Input) {
			extension(t, in, "epistemic_integrity").ForTools = []string{"memory_save"}
		}, [6]string{"EXO116", "warning", "evidence", "epistemic_integrity", "", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := loadSeed(t)
			if got := Check(in); len(got) > 0 && got[0].Severity == Error {
				t.Fatalf("the seed is not clean before the edit: %+v", got[0])
			}
			tt.edit(t, &in)
			got := Check(in)
			w := tt.want
			if !has(got, w[0], Severity(w[1]), w[2], w[3], w[4], w[5]) {
				t.Errorf("want %s %s plugin=%q extension=%q key=%q file=%q, got:\n%s", w[1], w[0], w[2], w[3], w[4], w[5], text(t, got))
			}
		})
	}
}

// TestRealPrompts reads the repository's embedded prompts and the generated
// constants: they agree today, and editing a prompt file's signal on disk is
// caught.
func TestRealPrompts(t *testing.T) {
	ps, err := LoadPrompts(prompts.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Model: wiring.Model{Prompts: ps, Signals: signals.All()}}
	for _, f := range Check(in) {
		if strings.HasPrefix(f.Code, "EXO01") {
			t.Errorf("the committed prompts and signals disagree: %s %s", f.Code, f.Message)
		}
	}

	// A copy on disk, with fw.msg_repeat.md's signal renamed.
	dir := t.TempDir()
	err = fs.WalkDir(prompts.Embedded(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(prompts.Embedded(), p)
		if err != nil {
			return err
		}
		if p == "fw.msg_repeat.md" {
			data = bytes.Replace(data, []byte("signal: repeat\n"), []byte("signal: loop_detected\n"), 1)
		}
		return os.WriteFile(filepath.Join(dir, p), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	edited, err := LoadPrompts(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	got := Check(Input{Model: wiring.Model{Prompts: edited, Signals: signals.All()}})
	if !has(got, "EXO011", Error, "", "", "", "prompts/fw.msg_repeat.md") || !has(got, "EXO012", Error, "", "", "", "prompts/fw.msg_repeat.md") {
		t.Errorf("renaming a signal on disk is not caught:\n%s", text(t, got))
	}

	// An override directory with a header that does not parse, and one that
	// changes a built-in prompt's signal.
	over := t.TempDir()
	os.WriteFile(filepath.Join(over, "fw.msg_misformat.md"), []byte("---\nsingal: misformat\n---\nbody\n"), 0o644)
	os.WriteFile(filepath.Join(over, "fw.msg_repeat.md"), []byte("---\nsignal: loop\n---\nbody\n"), 0o644)
	withOverrides, err := LoadPrompts(prompts.Embedded(), over, filepath.Join(over, "missing"))
	if err != nil {
		t.Fatal(err)
	}
	got = Check(Input{Model: wiring.Model{Prompts: withOverrides, Signals: signals.All()}})
	for _, name := range []string{"fw.msg_misformat.md", "fw.msg_repeat.md"} {
		if !has(got, "EXO016", Error, "", "", "", filepath.Join(over, name)) {
			t.Errorf("override %s is not reported:\n%s", name, text(t, got))
		}
	}
}

// TestTreeOnDisk lays out a plugin directory with the seed's deployment
// mistakes, discovers it with the loader's rule and scans it: the real plugins
// pass, and every mistake is reported.
func TestTreeOnDisk(t *testing.T) {
	root := t.TempDir()
	plugins := filepath.Join(root, "plugins")
	around := filepath.Join(root, "extensions")
	write := func(rel string, mode os.FileMode) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("plugins/recall", 0o755)                                  // a plugin
	write("plugins/py/plugin.json", 0o644)                          // broken plugin.json (not JSON)
	write("plugins/gobin/gobin", 0o755)                             // a plugin
	write("plugins/gobin/lib/helper.py", 0o644)                     // its own business
	write("plugins/message_loop_end/_50_supervisor_loop.py", 0o755) // seam 8
	write("plugins/unbuilt/main.go", 0o644)                         // never built
	write("plugins/unbuilt/go.mod", 0o644)
	write("plugins/notes.py", 0o644)                           // not executable
	write("plugins/README.md", 0o644)                          // ignored
	write("extensions/tool_execute_after/_20_reset.py", 0o644) // the seed's bare hook path
	write("extensions/node_modules/x/_10_y.py", 0o644)         // skipped tree
	dirs := []discover.Dir{{Path: plugins, Source: discover.User}}
	res := discover.Scan(dirs)
	var owned []string
	in := Input{PluginDirs: dirs, Around: []string{around}, Problems: res.Problems}
	for _, c := range res.Plugins {
		owned = append(owned, c.Path)
		in.Plugins = append(in.Plugins, wiring.Plugin{Name: c.Name, Path: c.Path, Dir: c.Dir.Path,
			Manifest: &exocortexv1.ManifestResponse{Plugin: c.Name}})
	}
	tree, err := ScanTree([]string{plugins, around, filepath.Join(root, "missing")}, owned)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tree {
		if strings.Contains(e.Rel, "node_modules") || strings.HasPrefix(e.Rel, "gobin/") {
			t.Errorf("ScanTree descended into %s", e.Rel)
		}
	}
	in.Tree = tree
	got := Check(in)
	want := map[string]string{
		"EXO084": filepath.Join(plugins, "py"),
		"EXO081": filepath.Join(plugins, "message_loop_end"),
		"EXO083": filepath.Join(plugins, "unbuilt"),
		"EXO085": filepath.Join(plugins, "notes.py"),
		"EXO082": filepath.Join(around, "tool_execute_after"),
	}
	for code, file := range want {
		if !slices.ContainsFunc(got, func(f Finding) bool { return f.Code == code && f.File == file }) {
			t.Errorf("want %s for %s", code, file)
		}
	}
	if len(got) != len(want) {
		t.Errorf("want exactly %d findings, got:\n%s", len(want), text(t, got))
	}
}

func TestJSONGolden(t *testing.T) {
	in, _ := readCase(t, "testdata/findings/EXO052_only_resetter_disabled.json")
	var b bytes.Buffer
	if err := WriteJSON(&b, Check(in)); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/report.json.golden", b.Bytes())

	b.Reset()
	if err := WriteJSON(&b, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"findings": []`) {
		t.Errorf("an empty report must have an empty findings list, got %s", b.String())
	}
}
