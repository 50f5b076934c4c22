package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/prompts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/server"
	"github.com/exocortex/exocortex/server/agentzero"
	"github.com/exocortex/exocortex/server/dashboard"
	"github.com/exocortex/exocortex/server/openai"
	"github.com/exocortex/exocortex/server/route"
	"github.com/exocortex/exocortex/server/sessions"
	"github.com/exocortex/exocortex/server/tasks"
)

// serveExamples are `serve --help`'s curls, one per surface; each works as
// written against a server started with `exocortex serve` and the key in
// EXOCORTEX_API_KEY.
const serveExamples = `  export EXOCORTEX_API_KEY=change-me     # optional on loopback; required for --addr 0.0.0.0:8765
  exocortex serve                         # http://127.0.0.1:8765
  exocortex serve --addr 0.0.0.0:8765 --model script:examples/scripts/hello.yaml

  # Agent Zero's external API: a message (the answer when the monologue ends), its log,
  # a reset and the end of the chat
  curl -s http://127.0.0.1:8765/api/api_message -H "X-API-KEY: $EXOCORTEX_API_KEY" \
    -H 'Content-Type: application/json' -d '{"message": "hello"}'
  curl -s 'http://127.0.0.1:8765/api/api_log_get?context_id=NAME&length=20' -H "X-API-KEY: $EXOCORTEX_API_KEY"
  curl -s http://127.0.0.1:8765/api/api_reset_chat -H "X-API-KEY: $EXOCORTEX_API_KEY" \
    -H 'Content-Type: application/json' -d '{"context_id": "NAME"}'
  curl -s http://127.0.0.1:8765/api/api_terminate_chat -H "X-API-KEY: $EXOCORTEX_API_KEY" \
    -H 'Content-Type: application/json' -d '{"context_id": "NAME"}'

  # OpenAI-compatible: the agent as a model, streamed (-N) in session "ops"
  curl -s http://127.0.0.1:8765/v1/models -H "Authorization: Bearer $EXOCORTEX_API_KEY"
  curl -sN http://127.0.0.1:8765/v1/chat/completions -H "Authorization: Bearer $EXOCORTEX_API_KEY" \
    -H 'Content-Type: application/json' \
    -d '{"model": "exocortex", "user": "ops", "stream": true, "messages": [{"role": "user", "content": "hello"}]}'

  # Long tasks: start one (the answer comes at once), then poll it, or cancel it
  curl -s http://127.0.0.1:8765/api/v1/tasks -H "X-API-KEY: $EXOCORTEX_API_KEY" \
    -H 'Content-Type: application/json' -d '{"message": "summarise the notes", "session": "ops"}'
  curl -s http://127.0.0.1:8765/api/v1/tasks/TASK -H "X-API-KEY: $EXOCORTEX_API_KEY"
  curl -s -X DELETE http://127.0.0.1:8765/api/v1/tasks/TASK -H "X-API-KEY: $EXOCORTEX_API_KEY"

  # Approvals: the held tool calls, and an answer (admin key)
  curl -s http://127.0.0.1:8765/api/v1/approvals -H "X-API-KEY: $EXOCORTEX_API_KEY"
  curl -s http://127.0.0.1:8765/api/v1/approvals/ID -H "X-API-KEY: $EXOCORTEX_API_KEY" \
    -H 'Content-Type: application/json' -d '{"decision": "deny", "reason": "not on production"}'`

type serveFlags struct {
	agent agentFlags
	addr  string
}

func newHTTPServeCmd() *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the agent over HTTP: Agent Zero's API, an OpenAI-compatible endpoint, approvals",
		Long: `serve runs one long-lived process: the plugins load once (and hot-reload), the
memory is reached through the home's memory service, and many sessions run at
once, each kept apart (history, session state, approvals, files). Sessions are
the terminal's: a chat begun over HTTP is listed by /sessions and resumed with
exocortex --resume NAME. A session's monologues run one after another.

It listens on 127.0.0.1:8765 unless --addr (or serve.addr) says otherwise; any
address other than loopback is refused until an API key is configured
(serve.api_key or EXOCORTEX_API_KEY for the admin role, serve.agent_key for the
agent role). Keys are sent as X-API-KEY or Authorization: Bearer. A held tool
call waits for POST /api/v1/approvals/{id} up to serve.approval_timeout, then
is refused. Stop it with Ctrl+C or SIGTERM: running turns may finish within
serve.shutdown_timeout. docs/api.md describes every endpoint.`,
		Example: serveExamples + restExamples,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return runHTTPServe(cmd, f) },
	}
	cmd.Flags().StringVar(&f.addr, "addr", "", "address to listen on, host:port (default serve.addr, 127.0.0.1:8765)")
	f.agent.register(cmd)
	_ = cmd.Flags().MarkHidden("session")
	return cmd
}

// serveKeys are the configured API keys, by the name of their setting.
func (a *app) serveKeys() []server.Key {
	var keys []server.Key
	if k := a.cfg.Serve.APIKey; k != "" {
		keys = append(keys, server.Key{Name: "api_key", Secret: k, Role: route.Admin})
	}
	if k := a.cfg.Serve.AgentKey; k != "" {
		keys = append(keys, server.Key{Name: "agent_key", Secret: k, Role: route.Agent})
	}
	return keys
}

func runHTTPServe(cmd *cobra.Command, f *serveFlags) error {
	a, err := loadApp()
	if err != nil {
		return err
	}
	defer a.close()
	if err := f.agent.apply(a); err != nil {
		return &exitError{2, err}
	}
	mode, err := loop.ParseApprovalMode(a.cfg.Approval)
	if err != nil {
		return &exitError{2, err}
	}
	sc := a.cfg.Serve
	if f.addr != "" {
		sc.Addr = f.addr
	}
	ctx := cmd.Context()
	// The address is checked first: a refused one costs no plugin start.
	srv, err := server.New(ctx, server.Options{
		Addr: sc.Addr, Keys: a.serveKeys(), MaxBodyBytes: int64(sc.MaxBodyBytes), RequestTimeout: time.Duration(sc.RequestTimeout),
		Rate: float64(sc.RatePerSecond), Burst: sc.RateBurst, ShutdownTimeout: time.Duration(sc.ShutdownTimeout), Logger: a.log,
	})
	if err != nil {
		return &exitError{2, err}
	}
	client, model, stopModel, err := a.model()
	if err != nil {
		return err
	}
	defer stopModel()
	h, err := a.openLiveHost(ctx, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	loader := prompts.NewLoader(a.promptDirs(cwd())...)
	dir := filepath.Join(a.home, "sessions")
	store, closeStore, err := sessionStore(ctx, a.home, journalSetting(a.cfg), a.log)
	if err != nil {
		return err
	}
	defer closeStore()
	m := sessions.NewManager(sessions.Options{
		Dir: dir, Store: store, Approvals: sessions.NewApprovals(time.Duration(sc.ApprovalTimeout)), Logger: a.log,
		NewAgent: func(_ context.Context, spec sessions.AgentSpec) (*loop.Agent, error) {
			opts := a.agentOptions(h, client, loader, model)
			opts.Session, opts.ApprovalMode, opts.Approver, opts.Observer = spec.Session, mode, spec.Approver, spec.Observer
			opts.AgentProfile = spec.Profile
			if err := a.record(&opts); err != nil {
				return nil, err
			}
			return loop.New(opts)
		},
	})
	routeServices(h, m)
	ts, err := tasks.Open(m, dir, srv, a.log)
	if err != nil {
		return err
	}
	if err := mountSurfaces(srv, m, dir); err != nil {
		return err
	}
	if err := srv.Mount(ts.Routes()...); err != nil {
		return err
	}
	if err := srv.Mount(inspectSurface(h, m, dir).Routes()...); err != nil {
		return err
	}
	stopREST, err := mountREST(ctx, srv, h, a.home)
	if err != nil {
		return err
	}
	defer stopREST()
	stopMCP, err := mountMCP(ctx, srv, a, h)
	if err != nil {
		return err
	}
	defer stopMCP()
	if err := mountOpenAPI(srv, versionText()); err != nil {
		return err
	}
	announce(cmd.ErrOrStderr(), srv, model)
	fmt.Fprintf(cmd.ErrOrStderr(), "exocortex serve: sessions in %s\n", store.Location())
	go expireSessions(ctx, m, time.Minute)
	err = srv.Serve(ctx)
	closeCtx, cancel := context.WithTimeout(context.Background(), time.Duration(sc.ShutdownTimeout))
	defer cancel()
	if cerr := m.Close(closeCtx); cerr != nil {
		a.log.Warn("serve: closing the sessions", "err", cerr)
	}
	return err
}

// mountSurfaces mounts every surface on srv.
func mountSurfaces(srv *server.Server, m *sessions.Manager, dir string) error {
	if err := srv.MountWith(agentzero.WriteError, agentzero.New(m, dir).Routes()...); err != nil {
		return err
	}
	if err := srv.Mount(openai.New(m).Routes()...); err != nil {
		return err
	}
	if err := srv.Mount(append(m.Approvals().Routes(), m.ChatRoutes()...)...); err != nil {
		return err
	}
	dash, err := dashboard.New()
	if err != nil {
		return err
	}
	return srv.Mount(append(srv.SignInRoutes(), dash.Routes()...)...)
}

// announce says where the server listens and who may call it.
func announce(w io.Writer, srv *server.Server, model string) {
	fmt.Fprintf(w, "exocortex serve: listening on %s (model %s)\n", srv.URL(), model)
	if srv.Authenticated() {
		fmt.Fprintln(w, "exocortex serve: every request needs an API key (X-API-KEY or Authorization: Bearer)")
	} else {
		fmt.Fprintln(w, "exocortex serve: no API key is configured, so it listens on loopback only and every local caller is an admin; set EXOCORTEX_API_KEY to require one")
	}
}

// routeServices sends the plugins' calls that need an agent (subordinates,
// utility-model calls, embedding changes) to the agent of the session that
// made them.
func routeServices(h *host.Host, m *sessions.Manager) {
	// A subordinate has a session id of its own: its calls (a nested
	// call_subordinate, a utility call) are matched to its session by the
	// request it runs (sessions.Manager.ByContext).
	find := func(c *exocortexv1.Context) (*loop.Agent, error) {
		if l := m.ByContext(c); l != nil {
			return l.Agent(), nil
		}
		return nil, status.Errorf(codes.FailedPrecondition, "no served session has id %q or runs request %q", c.GetSessionId(), c.GetRequestId())
	}
	h.Services().SetSubordinateRunner(func(ctx context.Context, req *exocortexv1.RunSubordinateRequest) (*exocortexv1.RunSubordinateResponse, error) {
		agent, err := find(req.GetContext())
		if err != nil {
			return nil, err
		}
		return agent.RunSubordinate(ctx, req)
	})
	h.Services().SetUtilityRunner(func(ctx context.Context, plugin string, req *exocortexv1.CallUtilityModelRequest, onDelta func(string) error) (string, string, error) {
		agent, err := find(req.GetContext())
		if err != nil {
			return "", "", err
		}
		return agent.CallUtility(ctx, plugin, req, onDelta)
	})
	h.Services().SetEmbeddingSink(func(c *host.EmbeddingChange) {
		// The report names no session: every open session's agent hears it.
		m.Each(func(l *sessions.Live) { l.Agent().ReportEmbeddingChange(c) })
	})
}

// expireSessions ends the sessions idle past their lifetime, every period.
func expireSessions(ctx context.Context, m *sessions.Manager, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if gone := m.Expire(ctx, now); len(gone) > 0 {
				fmt.Fprintln(os.Stderr, "exocortex serve: sessions past their lifetime ended:", gone)
			}
		}
	}
}
