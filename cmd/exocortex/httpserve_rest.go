package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/replay"
	"github.com/exocortex/exocortex/server"
	"github.com/exocortex/exocortex/server/agentzero"
	"github.com/exocortex/exocortex/server/dashboard"
	"github.com/exocortex/exocortex/server/deltas"
	"github.com/exocortex/exocortex/server/inspect"
	mcpserver "github.com/exocortex/exocortex/server/mcp"
	"github.com/exocortex/exocortex/server/memoryapi"
	"github.com/exocortex/exocortex/server/openai"
	"github.com/exocortex/exocortex/server/openapi"
	"github.com/exocortex/exocortex/server/route"
	"github.com/exocortex/exocortex/server/sessions"
	"github.com/exocortex/exocortex/server/tasks"
	"github.com/exocortex/exocortex/server/tools"
)

// restExamples are `serve --help`'s curls for the REST surfaces.
const restExamples = `

  # Memory and state (REST under /api/v1/; writes need the admin key)
  curl -s 'http://127.0.0.1:8765/api/v1/memory/search?q=deploy&k=5&area=main' -H "X-API-KEY: $EXOCORTEX_API_KEY"
  curl -s http://127.0.0.1:8765/api/v1/memory -H "X-API-KEY: $EXOCORTEX_API_KEY" \
    -H 'Content-Type: application/json' -d '{"text": "deploys go out on Tuesdays", "tags": ["ops"]}'
  curl -s http://127.0.0.1:8765/api/v1/memory/compile -H "X-API-KEY: $EXOCORTEX_API_KEY" \
    -H 'Content-Type: application/json' -d '{"query": "deploy", "token_budget": 300}'
  curl -s 'http://127.0.0.1:8765/api/v1/state?ns=main' -H "X-API-KEY: $EXOCORTEX_API_KEY"

  # Deltas: what changed since a sequence number, and the live stream (-N)
  curl -s 'http://127.0.0.1:8765/api/v1/deltas?since=0' -H "X-API-KEY: $EXOCORTEX_API_KEY"
  curl -sN http://127.0.0.1:8765/api/v1/deltas/stream -H "X-API-KEY: $EXOCORTEX_API_KEY" -H 'Last-Event-ID: 0'

  # What the model saw in a session's last turn (?turn=N for another), its wiring as a
  # timeline, the plugins' health, and a plugin reloaded (admin key)
  curl -s http://127.0.0.1:8765/api/v1/saw/NAME -H "X-API-KEY: $EXOCORTEX_API_KEY"
  curl -s 'http://127.0.0.1:8765/api/v1/wiring/NAME?turn=1' -H "X-API-KEY: $EXOCORTEX_API_KEY"
  curl -s http://127.0.0.1:8765/api/v1/plugins -H "X-API-KEY: $EXOCORTEX_API_KEY"
  curl -s -X POST http://127.0.0.1:8765/api/v1/plugins/PLUGIN/reload -H "X-API-KEY: $EXOCORTEX_API_KEY"

  # The tool registry, its health, and the OpenAPI description (no key needed for the last two)
  curl -s 'http://127.0.0.1:8765/tools?category=retrieval' -H "X-API-KEY: $EXOCORTEX_API_KEY"
  curl -s http://127.0.0.1:8765/health
  curl -s http://127.0.0.1:8765/api/v1/openapi.json`

// mountREST mounts memory and state, the deltas and the tool registry on
// srv, as clients of the memory service h's plugins use. The returned func
// stops the deltas' watch.
func mountREST(ctx context.Context, srv *server.Server, h *host.Host, home string) (func(), error) {
	mem, err := h.Services().Memory(ctx)
	if err != nil {
		return nil, fmt.Errorf("serve: the memory service: %w", err)
	}
	reg, err := tools.Open(filepath.Join(home, tools.File), tools.FromHost(h))
	if err != nil {
		return nil, err
	}
	// The registered tools are the agent's too, called like a plugin's.
	h.AddToolProvider(reg)
	d := deltas.New(mem, deltas.Options{})
	for _, routes := range [][]route.Route{memoryapi.New(mem), d.Routes(), reg.Routes()} {
		if err := srv.Mount(routes...); err != nil {
			d.Close()
			return nil, err
		}
	}
	return func() { d.Close() }, nil
}

// mountOpenAPI mounts the OpenAPI description of every surface on srv; it
// goes last, after every surface is mounted. Each surface's Ops are listed
// here: a route mounted without them makes the description refuse to serve
// (TestServeRESTSurfaces checks it).
func mountOpenAPI(srv *server.Server, version string) error {
	return srv.Mount(openapi.Route(openapi.Info{Title: "Exocortex", Version: version,
		Description: "The agent and its memory over HTTP (exocortex serve). docs/api.md describes each surface."},
		srv.Routes, agentzero.Ops(), openai.Ops(), sessions.ApprovalOps(), sessions.ChatOps(), tasks.Ops(),
		memoryapi.Ops(), deltas.Ops(), tools.Ops(), mcpserver.Ops(), server.SignInOps(), dashboard.Ops(), inspect.Ops()))
}

// inspectSurface is the dashboard's inspection routes: what the model saw
// and the wiring of a turn (from the sessions' recordings in dir, or, for
// sessions in the shared bucket, from the bucket's recording: every
// replica's turns), and the plugins of h, reloaded at once when no session
// of m is mid-turn.
func inspectSurface(h *host.Host, m *sessions.Manager, dir string) *inspect.Inspect {
	busy := func() bool {
		running := false
		m.Each(func(l *sessions.Live) { running = running || l.Busy() })
		return running
	}
	opts := inspect.Options{Dir: dir, Sessions: m.Store(), Plugins: h, Busy: busy}
	if shared, ok := m.Store().(replay.Shared); ok {
		opts.Recording = sharedRecording(shared, dir)
	}
	return inspect.New(opts)
}

// sharedRecording is the inspector's Recording on a shared store: a copy of
// each session's shared recording under dir/.shared, brought up to date on
// every look.
func sharedRecording(src replay.Shared, dir string) func(ctx context.Context, name string) (string, error) {
	var mu sync.Mutex
	return func(ctx context.Context, name string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		local := filepath.Join(dir, ".shared", name+replay.DirSuffix)
		return local, replay.Sync(ctx, src, name, local)
	}
}
