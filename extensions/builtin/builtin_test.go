package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/extensions/internal/memtest"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/prompts/frontmatter"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// Every built-in plugin is valid, every tool names a prompt file that exists and
// renders without variables, and every tool prompt file documents a built-in
// tool (the wiring lint's EXO112-EXO114, checked here at the source).
func TestPluginsAndToolPrompts(t *testing.T) {
	files, err := frontmatter.ReadDir(prompts.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range files {
		have[f.Name] = true
	}
	loader := prompts.NewLoader()
	declared := map[string]string{}
	for name, p := range Plugins() {
		if _, err := sdk.NewServer(p); err != nil {
			t.Errorf("plugin %s: %v", name, err)
		}
		for _, tool := range p.Tools {
			if prev, dup := declared[tool.Name]; dup {
				t.Errorf("tool %s is declared by %s and %s", tool.Name, prev, name)
			}
			declared[tool.Name] = name
			want := "agent.system.tool." + tool.Name + ".md"
			if tool.PromptFile != want {
				t.Errorf("tool %s: PromptFile %q, want %q", tool.Name, tool.PromptFile, want)
				continue
			}
			p, err := loader.Load(strings.TrimSuffix(want, ".md"))
			if err != nil {
				t.Errorf("tool %s: %v", tool.Name, err)
				continue
			}
			if p.Description == "" || !strings.HasPrefix(p.Body, "### "+tool.Name+"\n") || len(p.Placeholders()) > 0 || p.Signal != "" {
				t.Errorf("prompt %s: wants a description, a body starting with its heading, no placeholders and no signal", want)
			}
			if !strings.Contains(p.Body, `"tool_name": "`+tool.Name+`"`) {
				t.Errorf("prompt %s has no example call in the reply format", want)
			}
		}
	}
	for _, f := range files {
		tool, ok := strings.CutPrefix(f.Name, "agent.system.tool.")
		if !ok {
			continue
		}
		tool = strings.TrimSuffix(tool, ".md")
		if _, ok := declared[tool]; !ok {
			t.Errorf("prompt %s documents tool %q, which no built-in plugin declares", f.Name, tool)
		}
	}
}

// The tool plugins get their configuration as when the host re-executes them:
// text_editor's from the settings the host sends (toolsettings), the others'
// from the home directory and the environment the host gives them.
func TestToolPluginsReadTheirConfiguration(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	project, _ = filepath.EvalSymlinks(project)
	docs := filepath.Join(project, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "outside-docs.txt"), []byte("beta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := "tools:\n  editor:\n    roots: [docs]\n"
	if err := os.WriteFile(filepath.Join(home, config.FileName), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(config.HomeEnv, home)
	t.Setenv(config.EnvProject, project)
	for _, k := range []string{config.EnvSearchURL, config.EnvSearchKey, config.EnvSearchProvider, config.EnvSearchRate} {
		t.Setenv(k, "")
	}
	// The settings the host sends (text_editor's among them), as app.hostOptions does.
	c, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	entry, err := c.PluginSettingsEnv(home, project)
	if err != nil {
		t.Fatal(err)
	}
	_, settings, _ := strings.Cut(entry, "=")
	t.Setenv(config.EnvSettings, settings)
	ps := Plugins()
	agent := sdktest.Serve(t, ps["agent-tools"])
	// memory-tools reaches the home's memory service, as the host serves it.
	mem := memtest.ServeIn(t, home, ps["memory-tools"]).Client
	run := func(client exocortexv1.PluginClient, tool, args string) *exocortexv1.ToolResult {
		t.Helper()
		resp, err := client.ExecuteTool(t.Context(), &exocortexv1.ExecuteToolRequest{
			Call: sdktest.Call(tool), ToolCall: &exocortexv1.ToolCall{Name: tool, ArgsJson: args}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetResult()
	}
	// The editor's root is the configured docs directory of the project.
	if res := run(agent, "text_editor", `{"action":"read","path":"a.txt"}`); !strings.Contains(res.GetContent(), "alpha") {
		t.Errorf("text_editor in the configured root: %q, error %q", res.GetContent(), res.GetError())
	}
	if res := run(agent, "text_editor", `{"action":"read","path":"../outside-docs.txt"}`); !strings.Contains(res.GetError(), "is refused") {
		t.Errorf("text_editor outside the configured root: %q", res.GetError())
	}
	// web_search is unconfigured and says what to set.
	if res := run(agent, "web_search", `{"query":"x"}`); !strings.Contains(res.GetError(), "tools.web_search.url") {
		t.Errorf("web_search: %q", res.GetError())
	}
	// The memory tools use $EXOCORTEX_HOME/memory; staging_note its staging.jsonl.
	if res := run(mem, "memory_save", `{"key":"k","value":"v"}`); res.GetContent() != "Memory item 'k' saved successfully." {
		t.Errorf("memory_save: %q, error %q", res.GetContent(), res.GetError())
	}
	if _, err := os.Stat(filepath.Join(home, "memory", "journal.jsonl")); err != nil {
		t.Errorf("the memory journal is not in the home directory: %v", err)
	}
	if res := run(mem, "staging_note", `{"text":"hello"}`); res.GetError() != "" {
		t.Errorf("staging_note: %q", res.GetError())
	}
	if _, err := os.Stat(filepath.Join(home, "staging.jsonl")); err != nil {
		t.Errorf("staging.jsonl is not in the home directory: %v", err)
	}
}
