// Package builtin groups the built-in extensions into the plugins the exocortex
// binary serves. The host starts each as `exocortex plugin serve NAME`, through
// the same protocol as any third-party plugin, or serves the ones InProcess
// names inside its own process over that protocol (inprocess.go).
//
// # Configuration of the built-in tools
//
// The host sends the tools' settings in the plugin settings
// (toolsettings.FromEnv): config.yaml's tools: section resolved at the host
// (the home, text_editor's roots, code_execution's and the data tools' with
// their sandbox, web_search's, recall's), read once per plugin process on first
// use; no plugin here reads config.yaml. The one secret, web_search's API key,
// is not among them: agent-tools declares it (SettingSecrets) and web_search
// asks the host for it on each call (docs/secrets.md).
//
// Plugin processes are few: "agent-tools" holds the stateless tools and
// code_execution's shells; "memory-tools" holds the memory tools and the memory
// extensions, which reach the home's memory service through the host as any
// plugin does (uses_memory), and what writes the staging log.
//
// The extensions of the seed's per-turn sequence are grouped by concern (see
// docs/extension-moves.md for each one's hook, order and why it is there):
// "supervision" watches the loop (failures, diagnosis, evidence, the supervisor,
// completion and the reply display), "safety" stands between the model and the
// machine (the action boundary, argument correction, the write guard and
// validator), "cognition" builds the model's picture of the task (belief state,
// working memory, profile, plan, orchestration, tool tiers, orientation), and the
// memory extensions join "memory-tools".
package builtin

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sort"
	"sync"

	"github.com/exocortex/exocortex/extensions/agenttools"
	"github.com/exocortex/exocortex/extensions/belief"
	"github.com/exocortex/exocortex/extensions/boundary"
	"github.com/exocortex/exocortex/extensions/cmdhooks"
	"github.com/exocortex/exocortex/extensions/codeexec"
	"github.com/exocortex/exocortex/extensions/datatools"
	"github.com/exocortex/exocortex/extensions/diagnosis"
	"github.com/exocortex/exocortex/extensions/display"
	"github.com/exocortex/exocortex/extensions/editor"
	"github.com/exocortex/exocortex/extensions/evidence"
	"github.com/exocortex/exocortex/extensions/failures"
	"github.com/exocortex/exocortex/extensions/htn"
	"github.com/exocortex/exocortex/extensions/library"
	"github.com/exocortex/exocortex/extensions/mcpclient"
	"github.com/exocortex/exocortex/extensions/memorize"
	"github.com/exocortex/exocortex/extensions/memorytools"
	"github.com/exocortex/exocortex/extensions/ontology"
	"github.com/exocortex/exocortex/extensions/orchestration"
	"github.com/exocortex/exocortex/extensions/orientation"
	"github.com/exocortex/exocortex/extensions/paramgate"
	"github.com/exocortex/exocortex/extensions/profile"
	"github.com/exocortex/exocortex/extensions/quality"
	"github.com/exocortex/exocortex/extensions/reasoning"
	"github.com/exocortex/exocortex/extensions/recall"
	"github.com/exocortex/exocortex/extensions/retry"
	"github.com/exocortex/exocortex/extensions/sleep"
	"github.com/exocortex/exocortex/extensions/stagingnote"
	"github.com/exocortex/exocortex/extensions/subordinate"
	"github.com/exocortex/exocortex/extensions/supervisor"
	"github.com/exocortex/exocortex/extensions/tasks"
	"github.com/exocortex/exocortex/extensions/toolregistry"
	"github.com/exocortex/exocortex/extensions/watchdog"
	"github.com/exocortex/exocortex/extensions/websearch"
	"github.com/exocortex/exocortex/extensions/workingmemory"
	"github.com/exocortex/exocortex/extensions/writeguard"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sandbox"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/toolsettings"
)

// Version is the built-in plugins' version.
const Version = "0.1.0"

// Plugins returns the built-in plugins, by name, as a plugin process serves
// them (settings from its environment, logs to its stderr). Building them
// starts nothing: the tools load their configuration and start shells on
// first use.
func Plugins() map[string]sdk.Plugin { return PluginsFor(os.Environ(), nil) }

// PluginsFor is Plugins for plugins served inside the host (InProcess): env
// is the environment the host would have given the plugin's process
// (KEY=VALUE lines: the host's less the secrets' variables, and the plugin
// settings), read for the settings and given, explicitly, to every process
// a plugin starts (code_execution's shells, the data tools' scripts, the
// command hooks, the sandbox's probe), so none sees what the host keeps from
// its plugins; the plugins' logs go to stderr (nil: the process's stderr).
func PluginsFor(env []string, stderr io.Writer) map[string]sdk.Plugin {
	out := map[string]sdk.Plugin{}
	for name, build := range builders(env, stderr) {
		out[name] = build()
	}
	return out
}

// PluginFor is PluginsFor's plugin name alone, without building the others
// (their tools, their command hooks read from their files).
func PluginFor(name string, env []string, stderr io.Writer) (sdk.Plugin, bool) {
	build, ok := builders(env, stderr)[name]
	if !ok {
		return sdk.Plugin{}, false
	}
	return build(), true
}

// builders build each built-in plugin of PluginsFor, by name.
func builders(env []string, stderr io.Writer) map[string]func() sdk.Plugin {
	getenv := Getenv(env)
	// The tools' settings the host sends (toolsettings), read once per
	// plugin process, on first use.
	sent := sync.OnceValues(func() (toolsettings.Tools, error) { return toolsettings.FromEnv(getenv) })
	var noteLog *slog.Logger
	if stderr != nil {
		noteLog = slog.New(sdk.NewHostLogHandler(stderr, stagingnote.ToolName))
	}
	editorSettings := setting(sent, "tools.editor", func(t toolsettings.Tools) *toolsettings.Editor { return t.Editor })
	codeSettings := setting(sent, "tools.code_execution", func(t toolsettings.Tools) *toolsettings.CodeExecution { return t.CodeExecution })
	dataSettings := setting(sent, "tools.data", func(t toolsettings.Tools) *toolsettings.Data { return t.Data })
	searchSettings := setting(sent, "tools.web_search", func(t toolsettings.Tools) *toolsettings.WebSearch { return t.WebSearch })
	home := func() (string, error) {
		t, err := sent()
		if err == nil && t.Home == "" {
			err = fmt.Errorf("the host sent no home directory (%s has no tools.home)", toolsettings.EnvSettings)
		}
		return t.Home, err
	}
	probe := sync.OnceValue(func() sandbox.Status { return sandbox.ProbeEnv("", env) })
	bounds := func() (boundary.Bounds, error) {
		c, err := codeSettings()
		if err != nil {
			return boundary.Bounds{}, err
		}
		e, err := editorSettings()
		b := boundary.Bounds{WorkDir: c.WorkDir, Roots: e.Roots, Scratch: c.Confine.ScratchDir}
		b.Unconfined = func() string {
			if st := probe(); !st.Available && !c.Confine.Off {
				return st.Reason
			}
			return ""
		}
		return b, err
	}
	writePaths := func() (writeguard.Paths, error) {
		h, err := home()
		if err != nil {
			return writeguard.Paths{}, err
		}
		e, err := editorSettings()
		return writeguard.Paths{Home: h, Roots: e.Roots}, err
	}
	// Recall's settings (threshold, limits, per-area limits, block size) are
	// tools.memory.recall in config.yaml, as the host sends them.
	recallOpts := recall.Options{Config: func() toolsettings.Recall {
		t, err := sent()
		if err != nil || t.Recall == nil {
			return toolsettings.Recall{}
		}
		return *t.Recall
	}}
	return map[string]func() sdk.Plugin{
		"agent-tools": func() sdk.Plugin {
			shells := codeexec.New(codeSettings).WithEnv(env)
			data := datatools.New(dataSettings).WithEnv(env)
			return sdk.Plugin{
				Name: "agent-tools", Version: Version,
				// web_search's API key is a secret: the host hands it to this
				// plugin alone, on request, and masks it everywhere else.
				SettingSecrets: []string{toolsettings.APIKeySetting},
				// Close ends the shells (and what they started) when the host stops us.
				Close: shells.Close,
				Tools: []sdk.Tool{
					agenttools.Response(),
					shells.Tool(),
					editor.New(editorSettings).Tool(),
					data.Analyze(),
					data.Visualize(),
					websearch.New(searchSettings, nil).HostKey().Tool(),
					subordinate.Tool(),
				},
			}
		},
		"memory-tools": func() sdk.Plugin {
			memTools := memorytools.New(home)
			return sdk.Plugin{
				Name: "memory-tools", Version: Version,
				// The store is the home's memory service, reached through the
				// host; the tools and the memory extensions write every area
				// between them (memory_save and memory_forget take any).
				UsesMemory:       true,
				MemoryWriteAreas: writeAreas(memorytools.WriteAreas(), recall.WriteAreas(), ontology.WriteAreas(), memorize.WriteAreas()),
				Tools:            append(memTools.Tools(), stagingnote.New(home).WithLogger(noteLog).Tool()),
				Extensions: []sdk.Extension{
					reasoning.SessionInit{Home: memTools.Home}, reasoning.State{}, reasoning.Update{Home: memTools.Home},
					recall.Archive{}, recall.Catalog{}, recall.Search{Options: recallOpts}, recall.Filter{},
					recall.Enhancement{Options: recallOpts}, recall.Block{Options: recallOpts},
					ontology.NewQuery(memTools.Home), ontology.Maintenance{Home: memTools.Home},
					memorize.Memorize{Home: memTools.Home}, memorize.Selective{}, memorize.Capture{Home: memTools.Home},
					memorize.Classifier{}, memorize.Maintenance{},
				},
				Files: concat(memorytools.Files(), []*exocortexv1.FileSpec{stagingnote.File()},
					reasoning.Files(), recall.Files(), ontology.Files(), memorize.Files()),
			}
		},
		"supervision": func() sdk.Plugin {
			return sdk.Plugin{
				Name: "supervision", Version: Version,
				Extensions: []sdk.Extension{
					failures.Tracker{}, failures.Reset{}, retry.Structured{},
					supervisor.Loop{}, supervisor.Proactive{}, watchdog.Context{},
					tasks.Completion{}, tasks.Tracker{},
					diagnosis.Comprehension{}, diagnosis.Advisor{}, diagnosis.Logger{},
					evidence.Recorder{}, evidence.Integrity{},
					quality.Finalizer{}, quality.Gate{},
					display.PlainText{}, display.ClearGenerating{},
					sleep.Trigger{Home: home},
				},
				Files: []*exocortexv1.FileSpec{sleep.File()},
			}
		},
		"safety": func() sdk.Plugin {
			return sdk.Plugin{
				Name: "safety", Version: Version,
				Extensions: []sdk.Extension{
					boundary.Boundary{Bounds: bounds}, paramgate.Gate{},
					writeguard.Guard{Paths: writePaths}, writeguard.Validator{Paths: writePaths},
				},
				Tools: []sdk.Tool{writeguard.RestoreTool(writePaths)},
				Files: writeguard.Files(),
			}
		},
		// Without servers to start: the plugin as listed; Plugin starts them.
		MCPPlugin: func() sdk.Plugin { return mcpPlugin(mcpclient.Connect(context.Background(), nil, mcpclient.Options{})) },
		// The command hooks of Claude Code, Gemini CLI and Codex
		// (extensions/cmdhooks), read from the files the host names.
		cmdhooks.PluginName: func() sdk.Plugin {
			hooks := cmdhooks.FromEnv(getenv)
			hooks.Environ = env
			return hooks.Plugin(Version)
		},
		"cognition": func() sdk.Plugin {
			return sdk.Plugin{
				Name: "cognition", Version: Version,
				Extensions: []sdk.Extension{
					workingmemory.Extension{}, belief.Tracker{},
					orchestration.Gate{}, orchestration.Mode{},
					profile.Extension{}, htn.Selector{}, library.Catalog{Home: home},
					toolregistry.NewRegistry(home), toolregistry.Tiered{},
					orientation.Extension{},
				},
				Files: []*exocortexv1.FileSpec{library.File(), toolregistry.File()},
			}
		},
	}
}

// writeAreas joins the memory areas the parts of a plugin write, sorted,
// without repeats; "*" alone when any part writes every area.
func writeAreas(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, a := range l {
			if a == sdk.MemoryAnyArea {
				return []string{sdk.MemoryAnyArea}
			}
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	sort.Strings(out)
	return out
}

func concat(lists ...[]*exocortexv1.FileSpec) []*exocortexv1.FileSpec {
	var out []*exocortexv1.FileSpec
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// Names returns the built-in plugin names, sorted.
func Names() []string {
	var out []string
	for n := range Plugins() {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// setting returns a function giving one section of the settings the host sent
// (pick), or an error naming the section (key) when none came.
func setting[T any](sent func() (toolsettings.Tools, error), key string, pick func(toolsettings.Tools) *T) func() (T, error) {
	return func() (T, error) {
		t, err := sent()
		if err != nil {
			var zero T
			return zero, err
		}
		return toolsettings.Setting(t, key, pick(t))
	}
}
