package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/core/session"
	mcpserver "github.com/exocortex/exocortex/server/mcp"
	"github.com/exocortex/exocortex/wiring"
)

// mcpClientSnippets is the configuration of the common MCP clients for
// `exocortex mcp`, shown by its --help.
const mcpClientSnippets = `Claude Desktop (claude_desktop_config.json: ~/.config/Claude/ on Linux,
~/Library/Application Support/Claude/ on macOS, %APPDATA%\Claude\ on Windows):

  {"mcpServers": {"exocortex": {"command": "exocortex", "args": ["mcp"],
                                "env": {"EXOCORTEX_HOME": "/home/you/.exocortex"}}}}

Claude Code:

  claude mcp add exocortex -- exocortex mcp
  claude mcp add --transport http exocortex http://127.0.0.1:8765/mcp --header "Authorization: Bearer $KEY"

Cursor (~/.cursor/mcp.json, or .cursor/mcp.json in a project):

  {"mcpServers": {"exocortex": {"command": "exocortex", "args": ["mcp"]}}}

VS Code (.vscode/mcp.json in the workspace):

  {"servers": {"exocortex": {"type": "stdio", "command": "exocortex", "args": ["mcp"]}}}

Give the binary's full path when the client does not find exocortex on its PATH.

The other way round, the agent uses the tools of MCP servers configured in
config.yaml (mcp_servers, mcp_servers_file); "exocortex mcp list" shows them.`

func newMCPCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the memory, the wiring and the memory tools over the Model Context Protocol on stdio",
		Long: `mcp serves Exocortex over the Model Context Protocol on stdin and stdout, for
desktop assistants and IDEs. It reaches the memory through the home's memory
service, so it runs while a terminal session, "exocortex memory serve" or
another "exocortex mcp" holds the same home (and serves the store itself when
none does).

Tools (each with an input and an output schema):
  search_memory    query, k, area, tags -> hits, each saying why it matched
  compile_memory   query, token_budget -> the memory block the agent would receive
  why              id -> the record's provenance and its history in the journal
  memory_save      key, value, tags  (ECHOMEN's: "Memory item 'KEY' saved successfully.")
  memory_retrieve  key or tags
  memory_delete    key
  wiring           the plugins' wiring as JSON (what "exocortex lint" checks)
  send_message     message, attachments, chat_id, persistent_chat -> {status, response, chat_id}
  finish_chat      chat_id
                   (these two only with mcp.agent: true in config.yaml; each chat is a
                   session mcp-ID under mcp.approval, and a tool call held for approval
                   is refused with the reason, never run unasked)

Resources: exocortex://memory/{id} for every record, exocortex://memory-snapshot,
exocortex://wiring/WIRING.md, exocortex://sessions. A change in the journal (from
any process) sends notifications/resources/list_changed when records come or go,
and notifications/resources/updated to the clients subscribed to a record or the
snapshot. A tool result over mcp.max_result_bytes (config.yaml) is an error naming
its size, never cut. Logs go to stderr and $EXOCORTEX_HOME/logs/exocortex.log;
stdout carries the protocol only.

` + mcpClientSnippets,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMCP(cmd.Context())
		},
	}
	cmd.AddCommand(newMCPListCmd())
	return cmd
}

// runMCP serves one client on stdio until it goes or ctx ends.
func runMCP(ctx context.Context) error {
	a, err := loadApp()
	if err != nil {
		return err
	}
	defer a.close()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	mem, err := connectHomeMemoryOn(ctx, a.home, a.cfg.Tools.Memory.WithDefaults().Embedder, journalSetting(a.cfg), log)
	if err != nil {
		return fmt.Errorf("mcp: reaching the memory of %s: %w", a.home, err)
	}
	defer mem.Close()
	var agent *mcpAgent
	if a.cfg.MCP.Agent {
		agent = newMCPAgent(a)
		defer agent.close()
	}
	srv, err := newMCPServer(a, mem, agent, log)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		if err := srv.Watch(ctx, nil); err != nil {
			log.Warn("mcp: no notifications from the memory's journal", "err", err)
		}
	}()
	return srv.Run(ctx, &mcp.StdioTransport{})
}

// newMCPServer is the MCP server of the app's home over the memory service mem.
// agent, when not nil, runs send_message and finish_chat.
func newMCPServer(a *app, mem mcpserver.MemoryClient, agent *mcpAgent, log *slog.Logger) (*mcpserver.Server, error) {
	model := func(ctx context.Context) (*wiring.Model, error) {
		opts, err := a.hostOptions()
		if err != nil {
			return nil, err
		}
		in, err := lintInput(ctx, opts, nil, nil)
		if err != nil {
			return nil, err
		}
		return &in.Model, nil
	}
	opts := mcpserver.Options{
		Memory: mem,
		Wiring: model,
		WiringDoc: func(ctx context.Context) ([]byte, error) {
			m, err := model(ctx)
			if err != nil {
				return nil, err
			}
			return wiring.Render(m), nil
		},
		SessionsDir: filepath.Join(a.home, "sessions"),
		ListSessions: func(ctx context.Context) ([]session.Info, error) {
			st, closeStore, err := sessionStore(ctx, a.home, journalSetting(a.cfg), log)
			if err != nil {
				return nil, err
			}
			defer closeStore()
			return st.List(ctx)
		},
		MaxResultBytes: a.cfg.MCP.MaxResultBytes,
		Version:        versionText(),
		Logger:         log,
	}
	if agent != nil {
		opts.Agent = agent
	}
	return mcpserver.New(opts)
}
