package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/exocortex/exocortex/server/route"
)

func checkEndpoint(e string) error {
	if e == "" {
		return &FieldError{"endpoint", "missing: the http(s) URL that serves the tool"}
	}
	u, err := url.Parse(e)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &FieldError{"endpoint", fmt.Sprintf("%q is not an http or https URL", e)}
	}
	return nil
}

// ListReply is the answer of GET /tools.
type ListReply struct {
	Tools []Definition `json:"tools"`
	Count int          `json:"count"`
}

// Health is the answer of GET /health.
type Health struct {
	Status string `json:"status"`
	// Tools counts every tool; Plugin and Registered each kind.
	Tools      int `json:"tools"`
	Plugin     int `json:"plugin"`
	Registered int `json:"registered"`
}

// Routes are the registry's routes.
func (r *Registry) Routes() []route.Route {
	h := func(f http.HandlerFunc) http.Handler { return f }
	return []route.Route{
		{Method: "GET", Pattern: "/tools", Role: route.Agent, Summary: "List the tools, by agent and category", Handler: h(r.list)},
		{Method: "GET", Pattern: "/tools/{id}", Role: route.Agent, Summary: "One tool's definition", Handler: h(r.get)},
		{Method: "POST", Pattern: "/tools", Role: route.Admin, Summary: "Register (or replace) a tool", Handler: h(r.register)},
		{Method: "DELETE", Pattern: "/tools/{id}", Role: route.Admin, Summary: "Remove a registered tool", Handler: h(r.remove)},
		{Method: "GET", Pattern: "/health", Role: route.Public, Summary: "The tool registry's health", Handler: h(r.health)},
	}
}

func (r *Registry) list(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	defs := r.List(req.Context(), q.Get("agent"), q.Get("category"))
	route.JSON(w, http.StatusOK, ListReply{Tools: defs, Count: len(defs)})
}

func (r *Registry) get(w http.ResponseWriter, req *http.Request) {
	d, err := r.Get(req.Context(), req.PathValue("id"))
	if err != nil {
		answerError(w, err)
		return
	}
	route.JSON(w, http.StatusOK, d)
}

func (r *Registry) register(w http.ResponseWriter, req *http.Request) {
	b, err := io.ReadAll(req.Body)
	var maxBytes *http.MaxBytesError
	if errors.As(err, &maxBytes) {
		route.Error(w, http.StatusRequestEntityTooLarge, route.Problem{Code: route.CodeBodyTooLarge, Message: fmt.Sprintf("the body is larger than %d bytes", maxBytes.Limit)})
		return
	}
	var d Definition
	if err == nil {
		err = json.Unmarshal(b, &d)
	}
	if err != nil {
		p := route.Problem{Code: route.CodeInvalidField, Message: "the body is not a tool definition (a JSON object): " + err.Error()}
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			p.Field, p.Message = typ.Field, fmt.Sprintf("%s is a JSON %s, but must be %s", typ.Field, typ.Value, typ.Type.Kind())
		}
		route.Error(w, http.StatusBadRequest, p)
		return
	}
	isNew, err := r.Register(req.Context(), d)
	if err != nil {
		answerError(w, err)
		return
	}
	status := http.StatusOK
	if isNew {
		status = http.StatusCreated
	}
	d, _ = r.Get(req.Context(), d.ID)
	route.JSON(w, status, d)
}

func (r *Registry) remove(w http.ResponseWriter, req *http.Request) {
	if err := r.Remove(req.Context(), req.PathValue("id")); err != nil {
		answerError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *Registry) health(w http.ResponseWriter, req *http.Request) {
	h := Health{Status: "ok"}
	for _, d := range r.List(req.Context(), "", "") {
		h.Tools++
		if d.Source == SourcePlugin {
			h.Plugin++
		} else {
			h.Registered++
		}
	}
	route.JSON(w, http.StatusOK, h)
}

func answerError(w http.ResponseWriter, err error) {
	var fe *FieldError
	switch {
	case errors.As(err, &fe):
		route.Error(w, http.StatusBadRequest, route.Problem{Code: route.CodeInvalidField, Field: fe.Field, Message: fe.Error()})
	case errors.Is(err, ErrNotFound):
		route.Error(w, http.StatusNotFound, route.Problem{Code: route.CodeNotFound, Field: "id", Message: err.Error() + " (GET /tools lists them)"})
	case errors.Is(err, ErrPluginTool):
		route.Error(w, http.StatusConflict, route.Problem{Code: route.CodeConflict, Field: "id", Message: err.Error()})
	default:
		route.Error(w, http.StatusInternalServerError, route.Problem{Code: route.CodeInternal, Message: err.Error()})
	}
}
