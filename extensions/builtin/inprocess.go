package builtin

import (
	"strings"

	"github.com/exocortex/exocortex/extensions/cmdhooks"
)

// InProcess names the built-in plugins the host may serve inside its own
// process, over the same protocol, instead of starting a process for each
// (config: builtin_plugins_in_process): all of them. What a process of its
// own gave each and what stands in for it here:
//
//   - Their environment: each reads only the environment the host hands it
//     (PluginsFor's env, the host's less the secrets' variables, with the
//     plugin settings), never the host's own.
//   - The processes they start (code_execution's shells, the data tools'
//     scripts, the command hooks, the MCP servers, the sandbox's probe) start
//     from that environment, passed explicitly, so none sees a secret's
//     variable; a hung shell or hook is still killed with its process group
//     at its deadline, and the shells end when the plugin is stopped (Close).
//   - Their state: none is process-wide; a restart after a crash builds the
//     plugin afresh.
//
// What is given up: a hung handler cannot be killed, only abandoned, and a
// panic outside a handler ends the host (docs/plugin-development.md,
// "Built-in plugins in the host's process"). Third-party plugins keep a
// process each.
func InProcess() []string {
	return []string{"agent-tools", "cognition", cmdhooks.PluginName, "memory-tools", MCPPlugin, "safety", "supervision"}
}

// Getenv reads env (KEY=VALUE lines, the last of a key winning, as a
// process's environment does) as os.Getenv reads the process's.
func Getenv(env []string) func(string) string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) string { return m[k] }
}
