// Package server is `exocortex serve`'s HTTP server: one listener, one
// [net/http.ServeMux] (Go 1.22 patterns such as "POST /api/v1/approvals/{id}"),
// and in front of every route the same checks, in this order:
//
//   - authentication: the caller's API key, sent as X-API-KEY, as
//     "Authorization: Bearer KEY" (what OpenAI and MCP clients send) or, for
//     Agent Zero's clients, as "api_key" in a JSON body, is compared in
//     constant time with every configured key; the key itself is never
//     logged, only its configured name. A key has a role ([route.Agent] or
//     [route.Admin]); a route needs one, and [route.Public] routes need none.
//     With no key configured the server only listens on a loopback address
//     and every local caller is an admin called "local"; any other address is
//     refused at start until at least one key is configured. A browser
//     signed in to the dashboard (POST /api/v1/auth/login, [Server.SignInRoutes])
//     sends instead an HttpOnly, SameSite=Strict session cookie standing for
//     its key, and on every state-changing request the session's CSRF token
//     as X-CSRF-Token (websession.go).
//   - a rate limit per key (a token bucket, golang.org/x/time/rate): a caller
//     over it is answered 429 with Retry-After.
//   - a body size limit ([net/http.MaxBytesReader]): a larger body is
//     answered 413 by [Decode].
//   - a per-request timeout, except on [route.Route.Stream] routes
//     (server-sent events, streamed completions).
//
// A surface is a list of [route.Route] values mounted with [Server.Mount]:
//
//	srv, err := server.New(ctx, server.Options{Addr: "127.0.0.1:8765", Keys: keys})
//	if err != nil { ... }
//	srv.Mount(route.Route{Method: "GET", Pattern: "/health", Role: route.Public, Handler: h})
//	err = srv.Serve(ctx) // until ctx ends, then a graceful shutdown
//
// Errors leave in [route.Error]'s shape unless the routes were mounted with
// [Server.MountWith] and another writer (Agent Zero's clients read
// {"error": "message"}).
//
// Shutdown is graceful: when Serve's context ends, the listener closes, and
// the requests under way (a turn of api_message, a streamed completion) and
// the work started with [Server.Go] (long tasks) have until
// Options.ShutdownTimeout to finish; then their contexts are cancelled.
package server
