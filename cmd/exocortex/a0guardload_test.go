package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/lint"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/scaffold/a0port"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestPortedGuardThatDoesNotLoadFailsClosed: a ported guard at
// tool_execute_before whose file cannot load (it imports a package that is
// not installed, as Agent Zero's infection check imports langchain_core) does
// not vanish from the plugin: the port says first that it will stop every
// action it guards, the layer serves it as a guard that fails at every call,
// and the host stops a text_editor write, a shell command and the answer,
// telling the model why each time; a file at a hook that stops nothing, with
// the same import, is left out as before.
func TestPortedGuardThatDoesNotLoadFailsClosed(t *testing.T) {
	tree := t.TempDir()
	for rel, code := range map[string]string{
		"extensions/python/tool_execute_before/_10_scanner.py": "# Fixture written for Exocortex's tests.\n" +
			"from helpers.extension import Extension\nimport not_installed_scanner_sdk_xyz\n\n\n" +
			"class Scanner(Extension):\n    async def execute(self, tool_name='', tool_args=None, **kwargs):\n" +
			"        not_installed_scanner_sdk_xyz.scan(tool_args)\n",
		"extensions/python/monologue_start/_10_watch.py": "# Fixture written for Exocortex's tests.\n" +
			"from helpers.extension import Extension\nimport not_installed_scanner_sdk_xyz\n\n\n" +
			"class Watch(Extension):\n    async def execute(self, **kwargs):\n        pass\n",
	} {
		p := filepath.Join(tree, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home, project := t.TempDir(), t.TempDir()
	plugin := filepath.Join(home, "plugins", "a0-scan")
	r, err := a0port.Port(t.Context(), tree, plugin, "a0-scan")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Blocking) != 1 || !strings.Contains(r.Blocking[0], "_10_scanner.py` at tool_execute_before does not load") {
		t.Errorf("the report's guards that stop every action: %q, want the scanner", r.Blocking)
	}
	var md strings.Builder
	r.WriteMarkdown(&md)
	if !strings.Contains(md.String(), "## Guards that do not load stop every action they guard") {
		t.Errorf("the report does not say first that the guard stops every action:\n%s", md.String())
	}
	var plog sdktest.Buffer
	h := portedHostChecked(t, home, project, "a0-scan", &plog)
	served := map[string]bool{}
	for _, st := range h.Status() {
		if st.Name == "a0-scan" {
			for _, e := range st.Extensions {
				served[e.Name] = !e.Disabled
			}
		}
	}
	if !served["a0_scanner"] || served["a0_watch"] {
		t.Errorf("served extensions %v: want the guard a0_scanner, and a0_watch (monologue_start) left out", served)
	}
	srv, err := scripted.NewServer(scripted.Script{Replies: []scripted.Reply{
		{Content: `{"thoughts":["w"],"headline":"writing","tool_name":"text_editor","tool_args":{"action":"write","path":"written.txt","content":"x"}}`},
		{Content: `{"thoughts":["r"],"headline":"running","tool_name":"code_execution","tool_args":{"runtime":"terminal","code":"echo x > ran.txt"}}`},
		{Content: `{"thoughts":["d"],"headline":"done","tool_name":"response","tool_args":{"text":"done"}}`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, err := llm.New(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	// The guard guards every tool, the response tool too (as in Agent Zero,
	// where the response is a tool call): the monologue ends at its iteration
	// limit, not with an answer the guard has not checked.
	a, err := loop.New(loop.Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), MaxIterations: 3})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Monologue(context.Background(), "write the file and run the command")
	var stop *loop.StopError
	if !errors.As(err, &stop) || res.Response == "done" {
		t.Fatalf("monologue: %v %+v, want it stopped at its iteration limit with no answer\nplugin log:\n%s", err, res, plog.String())
	}
	for _, f := range []string{"written.txt", "ran.txt"} {
		if _, err := os.Stat(filepath.Join(project, f)); !os.IsNotExist(err) {
			t.Errorf("%s exists (%v): the action ran although its guard did not load", f, err)
		}
	}
	told := 0
	for _, m := range a.History() {
		if strings.Contains(m.GetContent(), "guards fail closed") && strings.Contains(m.GetContent(), "did not load") &&
			strings.Contains(m.GetContent(), "not_installed_scanner_sdk_xyz") {
			told++
		}
	}
	if told != 3 {
		t.Errorf("the model was told of %d actions stopped by the guard that did not load, want 3 (the write, the command, the answer)", told)
	}
}

// portedHostChecked starts the real host on the plugins of home (a ported one among
// them) with the built-in agent-tools and the wiring check the host applies at
// start (no --allow-wiring-errors), and fails unless the plugin named runs.
func portedHostChecked(t *testing.T, home, project, plugin string, plog *sdktest.Buffer) *host.Host {
	t.Helper()
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	h, err := host.New(context.Background(), host.Options{
		Dirs:        []discover.Dir{{Path: filepath.Join(home, "plugins"), Source: discover.User}},
		Builtins:    []discover.Candidate{builtinCandidate(exe, "agent-tools")},
		PluginEnv:   pluginEnv(t, home, project),
		PluginLog:   plog,
		WiringCheck: lint.HostCheck(prompts.Embedded()),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	for _, st := range h.Status() {
		if st.Name == plugin && st.State != host.StateRunning {
			t.Fatalf("the ported plugin is %s, not running: %s %s", st.State, st.LastError, st.LastRejection)
		}
	}
	return h
}
