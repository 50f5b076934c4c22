package tasks

import (
	"errors"
	"net/http"

	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/server"
	"github.com/exocortex/exocortex/server/route"
)

// Routes are the tasks' endpoints (the package doc lists them).
func (ts *Tasks) Routes() []route.Route {
	return []route.Route{
		{Method: "POST", Pattern: "/api/v1/tasks", Role: route.Agent, Summary: "start a long task; answers at once with its id", Handler: http.HandlerFunc(ts.create)},
		{Method: "GET", Pattern: "/api/v1/tasks", Role: route.Agent, Summary: "the tasks, newest first",
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				route.JSON(w, http.StatusOK, List{Tasks: ts.List(r.URL.Query().Get("session"))})
			})},
		{Method: "GET", Pattern: "/api/v1/tasks/{id}", Role: route.Agent, Summary: "a task's status, progress and result", Handler: http.HandlerFunc(ts.get)},
		{Method: "DELETE", Pattern: "/api/v1/tasks/{id}", Role: route.Agent, Summary: "cancel a task", Handler: http.HandlerFunc(ts.cancel)},
	}
}

func (ts *Tasks) create(w http.ResponseWriter, r *http.Request) {
	var b CreateRequest
	if be := server.Decode(r, &b); be != nil {
		route.Error(w, be.Status, be.Problem)
		return
	}
	if msg := validMessage(b.Message); msg != "" {
		route.Error(w, http.StatusBadRequest, route.Problem{Code: route.CodeMissingField, Field: "message", Message: msg})
		return
	}
	if b.Session != "" {
		if err := session.ValidateName(b.Session); err != nil {
			route.Error(w, http.StatusBadRequest, route.Problem{Code: route.CodeInvalidField, Field: "session", Message: err.Error()})
			return
		}
	}
	t, err := ts.Start(b.Session, b.Message)
	if err != nil {
		route.Error(w, http.StatusServiceUnavailable, route.Problem{Code: route.CodeUnavailable, Message: err.Error()})
		return
	}
	w.Header().Set("Location", "/api/v1/tasks/"+t.ID)
	route.JSON(w, http.StatusAccepted, Created{ID: t.ID, Session: t.Session, Status: t.Status})
}

func (ts *Tasks) answer(w http.ResponseWriter, t Task, err error) {
	if errors.Is(err, ErrNotFound) {
		route.Error(w, http.StatusNotFound, route.Problem{Code: route.CodeNotFound, Message: err.Error() + " (GET /api/v1/tasks lists them)"})
		return
	}
	route.JSON(w, http.StatusOK, t)
}

func (ts *Tasks) get(w http.ResponseWriter, r *http.Request) {
	t, err := ts.Get(r.PathValue("id"))
	ts.answer(w, t, err)
}

func (ts *Tasks) cancel(w http.ResponseWriter, r *http.Request) {
	t, err := ts.Cancel(r.PathValue("id"))
	ts.answer(w, t, err)
}
