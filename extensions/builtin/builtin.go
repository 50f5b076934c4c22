// Package builtin groups the built-in extensions into the plugins the exocortex
// binary serves. The host starts each as `exocortex plugin serve NAME`, through
// the same protocol as any third-party plugin.
package builtin

import (
	"sort"

	"github.com/exocortex/exocortex/extensions/agenttools"
	"github.com/exocortex/exocortex/extensions/failures"
	"github.com/exocortex/exocortex/extensions/supervisor"
	"github.com/exocortex/exocortex/extensions/watchdog"
	"github.com/exocortex/exocortex/sdk"
)

// Version is the built-in plugins' version.
const Version = "0.1.0"

// Plugins returns the built-in plugins, by name.
func Plugins() map[string]sdk.Plugin {
	return map[string]sdk.Plugin{
		"agent-tools": {
			Name: "agent-tools", Version: Version,
			Tools: []sdk.Tool{agenttools.Response()},
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
