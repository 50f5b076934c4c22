package sessions

import (
	"errors"
	"net/http"

	"github.com/exocortex/exocortex/server"
	"github.com/exocortex/exocortex/server/route"
)

// Routes are the approval endpoints:
//
//	GET  /api/v1/approvals[?session=NAME]  → {approvals: [Pending]}
//	POST /api/v1/approvals/{id}            {decision: allow_once|allow_session|deny, reason?}
//	                                       → {approval: Pending, decision}
//
// Answering needs the admin role.
func (a *Approvals) Routes() []route.Route {
	return []route.Route{
		{Method: "GET", Pattern: "/api/v1/approvals", Role: route.Agent, Summary: "the held tool calls waiting for an answer",
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				route.JSON(w, http.StatusOK, ApprovalList{Approvals: a.List(r.URL.Query().Get("session")), Timeout: a.timeout.String()})
			})},
		{Method: "POST", Pattern: "/api/v1/approvals/{id}", Role: route.Admin, Summary: "grant or refuse a held tool call",
			Handler: http.HandlerFunc(a.answer)},
	}
}

func (a *Approvals) answer(w http.ResponseWriter, r *http.Request) {
	var b AnswerRequest
	if be := server.Decode(r, &b); be != nil {
		route.Error(w, be.Status, be.Problem)
		return
	}
	if b.Decision == "" {
		be := server.Missing("decision", "allow_once, allow_session or deny")
		route.Error(w, be.Status, be.Problem)
		return
	}
	d, err := ParseDecision(b.Decision)
	if err != nil {
		route.Error(w, http.StatusBadRequest, route.Problem{Code: route.CodeInvalidField, Field: "decision", Message: err.Error()})
		return
	}
	by := "?"
	if c, ok := route.CallerFrom(r.Context()); ok {
		by = c.Key
	}
	p, err := a.Answer(r.PathValue("id"), d, b.Reason, by)
	if errors.Is(err, ErrNoApproval) {
		route.Error(w, http.StatusNotFound, route.Problem{Code: route.CodeNotFound, Message: err.Error() + " (it was answered, timed out, or never asked; GET /api/v1/approvals lists those waiting)"})
		return
	}
	route.JSON(w, http.StatusOK, AnswerReply{Approval: p, Decision: d.String()})
}
