// Package servertest holds what the tests of serve's surfaces share: a real
// memory service on a fresh home, and a mux that mounts routes the way the
// server does (method, pattern, and the caller its authentication found),
// so a surface is tested on its own over a real HTTP connection.
package servertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/exocortex/exocortex/memory/service"
	"github.com/exocortex/exocortex/server/route"
)

// Memory starts the memory service of a fresh home (short enough for a unix
// socket) and returns its client, closed at the test's end.
func Memory(t testing.TB) *service.Client {
	t.Helper()
	home, err := os.MkdirTemp("", "exoapi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	c, err := service.Connect(context.Background(), service.Config{Dir: filepath.Join(home, "memory")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Mux registers routes on a ServeMux; each request carries the caller whose
// key the request's X-Role header names ("admin" or the agent role), and a
// route needing more than the caller's role is refused with 403, as the
// server refuses it.
func Mux(routes []route.Route) *http.ServeMux {
	mux := http.NewServeMux()
	for _, r := range routes {
		pattern := r.Pattern
		if r.Method != "" {
			pattern = r.Method + " " + r.Pattern
		}
		mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			c := route.Caller{Key: "test-agent", Role: route.Agent}
			if req.Header.Get("X-Role") == "admin" {
				c = route.Caller{Key: "test-admin", Role: route.Admin}
			}
			if !c.Role.Allows(r.Role) {
				route.Error(w, http.StatusForbidden, route.Problem{Code: route.CodeForbidden, Message: "this needs the " + r.Role.String() + " role"})
				return
			}
			r.Handler.ServeHTTP(w, req.WithContext(route.WithCaller(req.Context(), c)))
		}))
	}
	return mux
}

// Serve serves routes on a loopback port for the test's duration.
func Serve(t testing.TB, routes []route.Route) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(Mux(routes))
	t.Cleanup(srv.Close)
	return srv
}
