// Package route is the small contract between `exocortex serve`'s HTTP server
// and the surfaces it mounts (the Agent Zero API, the OpenAI-compatible
// endpoint, REST under /api/v1/, the tool registry, deltas, MCP, the
// dashboard): a surface is a list of routes, each naming the role a caller's
// API key must have; the server registers them behind its authentication,
// body limit, rate limit and timeouts, so a surface never checks a key itself.
//
// Errors leave every surface in one JSON shape, written by [Error]:
//
//	{"error": {"code": "invalid_field", "message": "…", "field": "k"}}
package route

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// Role is what an API key may do. The zero value is [Agent].
type Role int

const (
	// Agent may chat, read and search.
	Agent Role = iota
	// Admin may also write, archive, restore, delete, register tools and approve.
	Admin
	// Public needs no key at all (health checks, the OpenAPI description).
	Public Role = -1
)

// String names the role as config and errors spell it.
func (r Role) String() string {
	switch r {
	case Agent:
		return "agent"
	case Admin:
		return "admin"
	case Public:
		return "public"
	}
	return "unknown"
}

// Allows reports whether a caller holding role r may call a route that needs need.
func (r Role) Allows(need Role) bool { return need == Public || r >= need }

// Route is one endpoint of a surface.
type Route struct {
	// Method and Pattern as net/http's ServeMux takes them, for example
	// "GET" and "/api/v1/memory/{id}"; an empty Method matches every method.
	Method, Pattern string
	// Role is the least role a caller's key must have.
	Role Role
	// Summary is one line for the OpenAPI description and `serve --help`.
	Summary string
	// Stream marks a long-lived response (server-sent events, a streamed
	// completion): the server applies no write timeout to it.
	Stream  bool
	Handler http.Handler
}

// Caller is who made a request, as the server's authentication found it.
type Caller struct {
	// Key names the API key (its configured name, never the key itself).
	Key  string
	Role Role
}

type callerKey struct{}

// WithCaller returns ctx carrying c; the server calls it once per request.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller the server stored in ctx, and false when the
// request did not pass through the server's authentication (a test calling a
// handler directly).
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// Problem is the body of every error answer.
type Problem struct {
	// Code is one of [Codes].
	Code    string `json:"code"`
	Message string `json:"message"`
	// Field names the request field at fault, when one is.
	Field string `json:"field,omitempty"`
}

// Error writes {"error": p} with status.
func Error(w http.ResponseWriter, status int, p Problem) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		Error Problem `json:"error"`
	}{p})
}

// JSON writes v as JSON with status. The body is encoded whole first, so it
// goes out with its Content-Length in one write (not chunked, as an answer
// over net/http's buffer is when encoded straight to the connection).
func JSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		Error(w, http.StatusInternalServerError, Problem{Code: CodeInternal, Message: fmt.Sprintf("encoding the answer: %v", err)})
		return
	}
	b = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
