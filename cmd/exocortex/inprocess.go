package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-plugin"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/extensions/builtin"
	"github.com/exocortex/exocortex/sdk"
)

// inProcessBuiltins are the host's servers for the built-in plugins it runs
// in its own process (builtin.InProcess), unless the configuration's
// builtin_plugins_in_process is false. Each start builds the plugin afresh
// from the environment its process would have had, so a restart after a
// crash starts from nothing, as a new process would; that environment, not
// the host's, is the one the plugin's own processes start from.
func (a *app) inProcessBuiltins() map[string]host.InProcessServer {
	if on := a.cfg.BuiltinPluginsInProcess; on != nil && !*on {
		return nil
	}
	out := map[string]host.InProcessServer{}
	for _, name := range builtin.InProcess() {
		if name == builtin.MCPPlugin {
			out[name] = serveMCPInProcess
			continue
		}
		out[name] = func(ctx context.Context, env []string, stderr io.Writer) (*plugin.ReattachConfig, <-chan struct{}, error) {
			p, ok := builtin.PluginFor(name, env, stderr)
			if !ok {
				return nil, nil, fmt.Errorf("no built-in plugin %q to serve in process", name)
			}
			return sdk.ServeInProcess(ctx, p, stderr)
		}
	}
	return out
}

// serveMCPInProcess serves the mcp-servers plugin in the host's process as
// `exocortex plugin serve mcp-servers` would serve it: the env-sourced
// secrets the host handed it taken out of the environment its servers start
// from, the home the environment names, and its servers started in the
// directory its process would have run in (the binary's).
func serveMCPInProcess(ctx context.Context, env []string, stderr io.Writer) (*plugin.ReattachConfig, <-chan struct{}, error) {
	env, lookup := splitMCPEnvSecrets(env)
	getenv := builtin.Getenv(env)
	home := func() (string, error) {
		if h := getenv(config.HomeEnv); h != "" {
			return filepath.Abs(h)
		}
		return config.Home()
	}
	dir := ""
	if exe, err := os.Executable(); err == nil {
		dir = filepath.Dir(exe)
	}
	p := builtin.MCPPluginFor(ctx, env, dir, stderr, mcpSecrets(home, lookup))
	return sdk.ServeInProcess(ctx, p, stderr)
}
