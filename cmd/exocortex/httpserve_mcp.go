package main

import (
	"context"
	"fmt"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/server"
)

// mountMCP mounts the MCP server (the one `exocortex mcp` serves on stdio) at
// /mcp as streamable HTTP, behind serve's API keys: an agent key reaches the
// read tools, an admin key every tool. Its notifications follow the home's
// journal until ctx ends; the returned function stops it.
func mountMCP(ctx context.Context, srv *server.Server, a *app, h *host.Host) (func(), error) {
	mem, err := h.Services().Memory(ctx)
	if err != nil {
		return nil, fmt.Errorf("serve: the memory service for /mcp: %w", err)
	}
	var agent *mcpAgent
	if a.cfg.MCP.Agent {
		agent = newMCPAgent(a)
	}
	stopAgent := func() {
		if agent != nil {
			agent.close()
		}
	}
	m, err := newMCPServer(a, mem, agent, a.log)
	if err != nil {
		stopAgent()
		return nil, err
	}
	if err := srv.Mount(m.Routes()...); err != nil {
		stopAgent()
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		if err := m.Watch(ctx, nil); err != nil && ctx.Err() == nil {
			a.log.Warn("serve: /mcp sends no notifications from the memory's journal", "err", err)
		}
	}()
	return func() { cancel(); stopAgent() }, nil
}
