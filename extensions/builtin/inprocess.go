package builtin

import "strings"

// InProcess names the built-in plugins the host may serve inside its own
// process, over the same protocol, instead of starting a process for each
// (config: builtin_plugins_in_process). They are the ones for which the
// process boundary buys nothing: they start no processes, read no
// environment but the settings the host sends (PluginsFor's getenv), keep
// no process-wide state, and write only through the host (memory) or to the
// home's files named in the settings. The others stay processes of their
// own: agent-tools and command-hooks start the model's and the operator's
// commands (their environment is the plugin's, without the host's secrets;
// a hung one is killed with its process group), and mcp-servers starts the
// MCP servers with secrets of their own. safety's two child processes (the
// sandbox's probe, Python's syntax check of a written file) are fixed
// programs on the host's side of the boundary, as the host's own probe is.
func InProcess() []string { return []string{"cognition", "memory-tools", "safety", "supervision"} }

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
