package builtin

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/exocortex/exocortex/extensions/mcpclient"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/toolsettings"
)

// MCPPlugin is the built-in plugin serving the tools of the configured MCP
// servers (extensions/mcpclient).
const MCPPlugin = "mcp-servers"

// MCPToolCache keeps, inside the home, the tools each MCP server listed
// when it last started, so that the next start declares them at once.
const MCPToolCache = "run/mcp-tools.json"

// MCPStatusFile is where the MCP plugin reports its servers' state, inside
// the home: `exocortex mcp list`, run and the session read it.
const MCPStatusFile = "run/mcp-servers.json"

// mcpPlugin is the MCP plugin over set.
func mcpPlugin(set *mcpclient.Set) sdk.Plugin {
	exts := []sdk.Extension{mcpclient.Notice{Set: set}}
	if len(set.Destructive()) > 0 {
		exts = append(exts, mcpclient.Gate{Set: set})
	}
	return sdk.Plugin{
		Name: MCPPlugin, Version: Version,
		Tools:      set.Tools(),
		Extensions: exts,
		Close:      set.Close,
	}
}

// Plugin returns the built-in plugin name as served in its own process: for
// the MCP plugin this starts the configured servers (each within its init
// timeout) first, since their tools are its manifest. secrets resolves the
// §§secret(NAME) placeholders of their env and headers
// (mcpclient.Options.Secrets; nil: a server with one does not start, saying
// so).
func Plugin(ctx context.Context, name string, secrets func(string) (string, error)) (sdk.Plugin, bool) {
	if name != MCPPlugin {
		return PluginFor(name, os.Environ(), nil)
	}
	return MCPPluginFor(ctx, os.Environ(), "", nil, secrets), true
}

// MCPPluginFor is the MCP plugin served with env (the environment its
// process has or would have had, KEY=VALUE lines: read for the settings and
// given to the stdio servers it starts, their configured env added) from
// the working directory dir ("": this process's), its log on stderr (nil:
// this process's stderr), as Plugin's.
func MCPPluginFor(ctx context.Context, env []string, dir string, stderr io.Writer, secrets func(string) (string, error)) sdk.Plugin {
	if stderr == nil {
		stderr = os.Stderr
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sent, err := toolsettings.FromEnv(Getenv(env))
	if err != nil {
		log.Warn("no MCP servers: the settings did not come from the host", "err", err)
		return mcpPlugin(mcpclient.Connect(ctx, nil, mcpclient.Options{Logger: log}))
	}
	opts := mcpclient.Options{Logger: log, Problems: sent.MCPProblems, Secrets: secrets, Env: env, Dir: dir}
	if sent.Home != "" {
		opts.StatusFile = filepath.Join(sent.Home, MCPStatusFile)
		opts.ToolCache = filepath.Join(sent.Home, MCPToolCache)
	}
	return mcpPlugin(mcpclient.Connect(ctx, sent.MCPServers, opts))
}
