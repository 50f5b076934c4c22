// Package agentzero is Agent Zero's external API (v1.7) over Exocortex's
// sessions, wire-compatible so that an Agent Zero API client works
// unchanged: its context_id is an Exocortex session's name, so a chat begun
// over the API is one the terminal lists and resumes (`exocortex --resume
// NAME`).
//
//	POST /api/api_message         {message, context_id?, attachments?: [{filename, base64}],
//	                               lifetime_hours? (24), project_name?, agent_profile?}
//	                              → {context_id, response}, when the monologue ends
//	GET|POST /api/api_log_get     (context_id, length 100) → {context_id, log: {guid, total_items,
//	                               returned_items, start_position, progress, progress_active, items}}
//	POST /api/api_reset_chat      {context_id} → {success, message, context_id}
//	POST /api/api_terminate_chat  {context_id} → {success, message, context_id}
//	POST /api/api_files_get       {paths, context_id?} → {name: base64}
//
// Every route is served at /api/NAME and, for older clients, at /NAME. The
// key comes as X-API-KEY or api_key in the body (the server checks it);
// errors are Agent Zero's {"error": "message"}, with its statuses: 400 for a
// missing field, 401 "API key required" / "Invalid API key", 404 for an
// unknown context.
//
// One difference is deliberate: Agent Zero's api_files_get reads any path
// the server can; ours hands back only a session's own files (the
// attachments of its messages, under sessions/NAME.files) and refuses any
// other path, naming it.
package agentzero

import (
	"context"
	"net/http"
	"path/filepath"

	"github.com/exocortex/exocortex/server"
	"github.com/exocortex/exocortex/server/route"
	"github.com/exocortex/exocortex/server/sessions"
)

// API serves Agent Zero's external API over a session manager.
type API struct {
	m *sessions.Manager
	// dir is the sessions directory, whose NAME.files directories hold the
	// only files api_files_get hands back.
	dir string
}

// New returns the API over m, whose sessions live in dir.
func New(m *sessions.Manager, dir string) *API {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return &API{m: m, dir: dir}
}

// Routes are the API's routes, each at /api/NAME and /NAME; mount them with
// server.MountWith(agentzero.WriteError, ...).
func (a *API) Routes() []route.Route {
	type ep struct {
		method, name string
		role         route.Role
		summary      string
		h            http.HandlerFunc
	}
	eps := []ep{
		{"POST", "api_message", route.Agent, "Agent Zero: send a message, wait for the answer", a.message},
		{"GET", "api_log_get", route.Agent, "Agent Zero: a session's log", a.logGet},
		{"POST", "api_log_get", route.Agent, "Agent Zero: a session's log", a.logGet},
		{"POST", "api_reset_chat", route.Admin, "Agent Zero: empty a session's history", a.reset},
		{"POST", "api_terminate_chat", route.Admin, "Agent Zero: end and remove a session", a.terminate},
		{"POST", "api_files_get", route.Agent, "Agent Zero: a session's files, base64", a.filesGet},
	}
	var out []route.Route
	for _, e := range eps {
		for _, prefix := range []string{"/api/", "/"} {
			out = append(out, route.Route{Method: e.method, Pattern: prefix + e.name, Role: e.role, Summary: e.summary, Handler: e.h})
		}
	}
	return out
}

// WriteError writes Agent Zero's error shape, {"error": "message"}.
func WriteError(w http.ResponseWriter, status int, p route.Problem) {
	fail(w, status, p.Message)
}

func fail(w http.ResponseWriter, status int, msg string) {
	route.JSON(w, status, ErrorReply{Error: msg})
}

// decode reads the body into v, answering Agent Zero's error when it cannot.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if be := server.Decode(r, v); be != nil {
		fail(w, be.Status, be.Problem.Message)
		return false
	}
	return true
}

// contextBody is the body of the calls that name only a context.
type contextBody struct {
	ContextID string `json:"context_id"`
}

func (a *API) reset(w http.ResponseWriter, r *http.Request) {
	a.contextCall(w, r, "Chat reset successfully", a.m.Reset)
}

func (a *API) terminate(w http.ResponseWriter, r *http.Request) {
	a.contextCall(w, r, "Chat deleted successfully", a.m.Terminate)
}

func (a *API) contextCall(w http.ResponseWriter, r *http.Request, done string, fn func(ctx context.Context, name string) error) {
	var b contextBody
	if !decode(w, r, &b) {
		return
	}
	if b.ContextID == "" {
		fail(w, http.StatusBadRequest, "context_id is required")
		return
	}
	if err := fn(r.Context(), b.ContextID); err != nil {
		status, msg := failure(err, "Chat context not found")
		fail(w, status, msg)
		return
	}
	route.JSON(w, http.StatusOK, ContextReply{Success: true, Message: done, ContextID: b.ContextID})
}
