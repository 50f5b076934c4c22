package main

import (
	"context"
	"fmt"
	"io"

	"github.com/hashicorp/go-plugin"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/extensions/builtin"
	"github.com/exocortex/exocortex/sdk"
)

// inProcessBuiltins are the host's servers for the built-in plugins it runs
// in its own process (builtin.InProcess), unless the configuration's
// builtin_plugins_in_process is false. Each start builds the plugin afresh
// from the environment its process would have had, so a restart after a
// crash starts from nothing, as a new process would.
func (a *app) inProcessBuiltins() map[string]host.InProcessServer {
	if on := a.cfg.BuiltinPluginsInProcess; on != nil && !*on {
		return nil
	}
	out := map[string]host.InProcessServer{}
	for _, name := range builtin.InProcess() {
		out[name] = func(ctx context.Context, env []string, stderr io.Writer) (*plugin.ReattachConfig, <-chan struct{}, error) {
			p, ok := builtin.PluginsFor(builtin.Getenv(env), stderr)[name]
			if !ok {
				return nil, nil, fmt.Errorf("no built-in plugin %q to serve in process", name)
			}
			return sdk.ServeInProcess(ctx, p, stderr)
		}
	}
	return out
}
