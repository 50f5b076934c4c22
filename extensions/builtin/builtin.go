// Package builtin groups the built-in extensions into the plugins the exocortex
// binary serves. The host starts each as `exocortex plugin serve NAME`, through
// the same protocol as any third-party plugin.
//
// # Configuration of the built-in tools
//
// The tool plugins read their configuration themselves, on their first tool
// call, with config.LoadToolsFromEnv: they are this binary re-executed, so they
// find the same home directory ($EXOCORTEX_HOME or ~/.exocortex) and the same
// config.yaml (its `tools:` section) as the host. What only the running host knows
// comes through the environment it gives its plugins (host.Options.PluginEnv):
// EXOCORTEX_PROJECT, the project directory that relative paths of the tools start
// from (default: the plugin's working directory), and EXOCORTEX_HOME.
//
// Plugin processes are few: "agent-tools" holds the stateless tools and
// code_execution's shells; "memory-tools" holds everything that opens the memory
// store or writes the staging log, so one process owns the store (its lock) and
// extensions that need the store belong there too, sharing its Stores.
package builtin

import (
	"sort"
	"sync"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/extensions/agenttools"
	"github.com/exocortex/exocortex/extensions/codeexec"
	"github.com/exocortex/exocortex/extensions/datatools"
	"github.com/exocortex/exocortex/extensions/editor"
	"github.com/exocortex/exocortex/extensions/failures"
	"github.com/exocortex/exocortex/extensions/memorytools"
	"github.com/exocortex/exocortex/extensions/stagingnote"
	"github.com/exocortex/exocortex/extensions/subordinate"
	"github.com/exocortex/exocortex/extensions/supervisor"
	"github.com/exocortex/exocortex/extensions/watchdog"
	"github.com/exocortex/exocortex/extensions/websearch"
	"github.com/exocortex/exocortex/sdk"
)

// Version is the built-in plugins' version.
const Version = "0.1.0"

// Plugins returns the built-in plugins, by name. Building them starts nothing:
// the tools load their configuration, open stores and start shells on first use.
func Plugins() map[string]sdk.Plugin {
	// One configuration load per plugin process, on first use.
	tools := sync.OnceValues(config.LoadToolsFromEnv)
	data := datatools.New(func() (config.Data, error) { t, err := tools(); return t.Data, err })
	stores := memorytools.New(tools, nil)
	shells := codeexec.New(func() (config.CodeExecution, error) { t, err := tools(); return t.CodeExecution, err })
	return map[string]sdk.Plugin{
		"agent-tools": {
			Name: "agent-tools", Version: Version,
			// Close ends the shells (and what they started) when the host stops us.
			Close: shells.Close,
			Tools: []sdk.Tool{
				agenttools.Response(),
				shells.Tool(),
				editor.New(func() (config.Editor, error) { t, err := tools(); return t.Editor, err }).Tool(),
				data.Analyze(),
				data.Visualize(),
				websearch.New(func() (config.WebSearch, error) { t, err := tools(); return t.WebSearch, err }, nil).Tool(),
				subordinate.Tool(),
			},
		},
		"memory-tools": {
			Name: "memory-tools", Version: Version,
			// Close closes the store, so its indexes are clean for the next opener.
			Close: stores.Close,
			Tools: append(stores.Tools(), stagingnote.New(stagingnote.HomeFrom(tools)).Tool()),
			Files: append(memorytools.Files(), stagingnote.File()),
		},
		"failures": {
			Name: "failures", Version: Version,
			Extensions: []sdk.Extension{failures.Tracker{}, failures.Reset{}},
		},
		"supervision": {
			Name: "supervision", Version: Version,
			Extensions: []sdk.Extension{supervisor.Loop{}, watchdog.Context{}},
		},
	}
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
