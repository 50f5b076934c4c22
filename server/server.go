package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/exocortex/exocortex/server/route"
)

// Defaults for the zero values of [Options].
const (
	DefaultAddr            = "127.0.0.1:8765"
	DefaultMaxBodyBytes    = 8 << 20
	DefaultRequestTimeout  = 10 * time.Minute
	DefaultRate            = 20 // requests a second, per key
	DefaultBurst           = 40
	DefaultShutdownTimeout = 30 * time.Second
)

// Key is one API key the server accepts.
type Key struct {
	// Name is how logs and [route.Caller] name the key; never the secret.
	Name string
	// Secret is what the caller sends.
	Secret string
	Role   route.Role
}

// Options configure a [Server]. Zero values take the defaults above.
type Options struct {
	// Addr is host:port to listen on; port 0 picks a free one ([Server.Addr]).
	Addr string
	// Keys are the accepted API keys. Without any, Addr must be a loopback
	// address and every caller is an admin named "local".
	Keys []Key
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int64
	// RequestTimeout bounds a request, except on route.Stream routes.
	RequestTimeout time.Duration
	// Rate and Burst are each key's token bucket: requests a second and at once.
	Rate  float64
	Burst int
	// ShutdownTimeout is how long running requests and [Server.Go] work may
	// take to finish after Serve's context ends.
	ShutdownTimeout time.Duration
	Logger          *slog.Logger
}

// ErrNeedsKey is New's error for a non-loopback address with no key configured.
var ErrNeedsKey = errors.New("an address other than loopback needs at least one API key")

// Server is the HTTP server. Mount every surface before Serve.
type Server struct {
	opts Options
	log  *slog.Logger
	ln   net.Listener
	mux  *http.ServeMux
	hs   *http.Server

	// base is every request's parent context; stop cancels it at the end of
	// the shutdown deadline.
	base context.Context
	stop context.CancelFunc
	work sync.WaitGroup

	// keyHashes are the SHA-256 of opts.Keys' secrets, in order (guard.go's match).
	keyHashes [][sha256.Size]byte

	mu       sync.Mutex
	routes   []route.Route
	limiters map[string]*rate.Limiter
	closing  bool

	// web are the browsers signed in to the dashboard (websession.go).
	web webSessions
}

// New checks opts and listens on opts.Addr. The server answers nothing until
// Serve.
func New(ctx context.Context, opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = DefaultAddr
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.Rate <= 0 {
		opts.Rate = DefaultRate
	}
	if opts.Burst <= 0 {
		opts.Burst = DefaultBurst
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	for i, k := range opts.Keys {
		if k.Secret == "" || k.Name == "" {
			return nil, fmt.Errorf("server: key %d (%q) has an empty name or secret", i, k.Name)
		}
		if k.Role != route.Agent && k.Role != route.Admin {
			return nil, fmt.Errorf("server: key %q has role %s; give it agent or admin", k.Name, k.Role)
		}
	}
	loop, err := isLoopback(opts.Addr)
	if err != nil {
		return nil, err
	}
	if !loop && len(opts.Keys) == 0 {
		return nil, fmt.Errorf("server: listening on %s: %w (set serve.api_key or serve.agent_key in config.yaml, or EXOCORTEX_API_KEY, or listen on 127.0.0.1)", opts.Addr, ErrNeedsKey)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("server: listening on %s: %w", opts.Addr, err)
	}
	base, stop := context.WithCancel(context.WithoutCancel(ctx))
	s := &Server{opts: opts, log: opts.Logger, ln: ln, mux: http.NewServeMux(), base: base, stop: stop, limiters: map[string]*rate.Limiter{}}
	for _, k := range opts.Keys {
		s.keyHashes = append(s.keyHashes, sha256.Sum256([]byte(k.Secret)))
	}
	s.hs = &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return s.base },
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		route.Error(w, http.StatusNotFound, route.Problem{Code: route.CodeNotFound, Message: fmt.Sprintf("no route %s %s; GET /api/v1/openapi.json lists them", r.Method, r.URL.Path)})
	})
	return s, nil
}

// isLoopback reports whether addr's host is a loopback address (or localhost).
func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("server: address %q: %w (write host:port, e.g. 127.0.0.1:8765)", addr, err)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// Addr is the address the server listens on, with the port it got.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the server's base URL, http://Addr.
func (s *Server) URL() string { return "http://" + s.Addr() }

// Authenticated reports whether the server has keys (so callers must send one).
func (s *Server) Authenticated() bool { return len(s.opts.Keys) > 0 }

// Mount registers routes behind the server's checks, with errors in
// route.Error's shape. A pattern mounted twice is an error, as ServeMux's.
func (s *Server) Mount(routes ...route.Route) error { return s.MountWith(route.Error, routes...) }

// ErrorWriter writes an error answer; [route.Error] is the default.
type ErrorWriter func(w http.ResponseWriter, status int, p route.Problem)

// MountWith is Mount with errs writing the server's own error answers
// (authentication, rate limit, timeout) for these routes.
func (s *Server) MountWith(errs ErrorWriter, routes ...route.Route) (err error) {
	defer func() {
		// ServeMux panics on a conflicting pattern: make it an error.
		if p := recover(); p != nil {
			err = fmt.Errorf("server: mounting: %v", p)
		}
	}()
	for _, rt := range routes {
		if rt.Handler == nil || rt.Pattern == "" {
			return fmt.Errorf("server: route %s %q has no handler or pattern", rt.Method, rt.Pattern)
		}
		pattern := rt.Pattern
		if rt.Method != "" {
			pattern = rt.Method + " " + rt.Pattern
		}
		s.mux.Handle(pattern, s.guard(rt, errs))
		s.mu.Lock()
		s.routes = append(s.routes, rt)
		s.mu.Unlock()
	}
	return nil
}

// Routes lists the mounted routes, in mounting order (for `serve --help`
// and the OpenAPI description).
func (s *Server) Routes() []route.Route {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.routes)
}

// Handler is the server's handler, for tests that drive it without a socket.
func (s *Server) Handler() http.Handler { return s.mux }

// Context is the parent of every request's context: it ends when the
// shutdown deadline passes. Work that outlives a request derives from it.
func (s *Server) Context() context.Context { return s.base }

// Go runs fn beside the requests (a long task), with the server's context;
// a graceful shutdown waits for it as for a request. It reports false, and
// runs nothing, once the shutdown has begun.
func (s *Server) Go(fn func(ctx context.Context)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.work.Add(1)
	go func() {
		defer s.work.Done()
		fn(s.base)
	}()
	return true
}

// Serve answers requests until ctx ends, then shuts down gracefully: no new
// connection is accepted, and running requests and [Server.Go] work have
// Options.ShutdownTimeout to finish before their contexts are cancelled.
func (s *Server) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.hs.Serve(s.ln) }()
	select {
	case err := <-errc:
		s.stop()
		return err
	case <-ctx.Done():
	}
	return s.Shutdown()
}

// Shutdown stops the server as Serve does when its context ends.
func (s *Server) Shutdown() error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	deadline, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	s.log.Info("serve: shutting down; running turns may finish", "deadline", s.opts.ShutdownTimeout)
	err := s.hs.Shutdown(deadline)
	done := make(chan struct{})
	go func() { s.work.Wait(); close(done) }()
	select {
	case <-done:
	case <-deadline.Done():
		s.log.Warn("serve: the shutdown deadline passed; cancelling what still runs")
	}
	s.stop()
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.hs.Close()
	}
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
