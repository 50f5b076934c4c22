package agentzero

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/server/route"
	"github.com/exocortex/exocortex/server/sessions"
)

type attachment struct {
	Filename string `json:"filename"`
	Base64   string `json:"base64"`
}

type messageBody struct {
	Message       string       `json:"message"`
	ContextID     string       `json:"context_id,omitempty"`
	Attachments   []attachment `json:"attachments,omitempty"`
	LifetimeHours *float64     `json:"lifetime_hours,omitempty"`
	ProjectName   string       `json:"project_name,omitempty"`
	AgentProfile  string       `json:"agent_profile,omitempty"`
}

// message is api_message: one monologue, answered when it ends.
func (a *API) message(w http.ResponseWriter, r *http.Request) {
	var b messageBody
	if !decode(w, r, &b) {
		return
	}
	if b.Message == "" {
		fail(w, http.StatusBadRequest, "Message is required")
		return
	}
	lifetime := sessions.DefaultLifetime
	if b.LifetimeHours != nil {
		if *b.LifetimeHours <= 0 {
			fail(w, http.StatusBadRequest, fmt.Sprintf("lifetime_hours is %v; give a number of hours above 0 (24 by default)", *b.LifetimeHours))
			return
		}
		lifetime = time.Duration(*b.LifetimeHours * float64(time.Hour))
	}
	var files []sessions.Attachment
	for i, at := range b.Attachments {
		if at.Filename == "" {
			fail(w, http.StatusBadRequest, fmt.Sprintf("attachments[%d].filename is required", i))
			return
		}
		if _, err := sessions.SafeFilename(at.Filename); err != nil {
			fail(w, http.StatusBadRequest, fmt.Sprintf("attachments[%d]: %v", i, err))
			return
		}
		data, err := base64.StdEncoding.DecodeString(at.Base64)
		if err != nil {
			fail(w, http.StatusBadRequest, fmt.Sprintf("attachments[%d].base64 (%s) is not base64: %v", i, at.Filename, err))
			return
		}
		files = append(files, sessions.Attachment{Filename: at.Filename, Data: data})
	}
	turn := sessions.Turn{Session: b.ContextID, Message: b.Message, Attachments: files, Lifetime: lifetime, Profile: b.AgentProfile}
	name, res, err := a.m.Run(r.Context(), turn)
	var stop *loop.StopError
	if err != nil && !(errors.As(err, &stop) && res != nil) {
		status, msg := failure(err, "Context not found")
		fail(w, status, msg)
		return
	}
	route.JSON(w, http.StatusOK, MessageReply{ContextID: name, Response: res.Response})
}

// failure is the status and Agent Zero's message for a manager's error;
// notFound is the message Agent Zero gives an unknown context at this call.
func failure(err error, notFound string) (int, string) {
	switch {
	case errors.Is(err, sessions.ErrNotFound):
		return http.StatusNotFound, notFound
	case errors.Is(err, sessions.ErrProfile):
		return http.StatusBadRequest, "Cannot override agent profile on existing context"
	case errors.Is(err, sessions.ErrBadName):
		return http.StatusBadRequest, err.Error()
	case errors.Is(err, sessions.ErrClosed):
		return http.StatusServiceUnavailable, err.Error()
	case errors.Is(err, session.ErrConflict):
		// Another replica wrote to the session during this turn: the next
		// message continues on the fresh copy.
		return http.StatusConflict, err.Error()
	}
	return http.StatusInternalServerError, err.Error()
}

// logGet is api_log_get: the last length items of a session's log.
func (a *API) logGet(w http.ResponseWriter, r *http.Request) {
	var b struct {
		ContextID string `json:"context_id"`
		Length    *int   `json:"length"`
	}
	if r.Method == http.MethodGet {
		b.ContextID = r.URL.Query().Get("context_id")
		if s := r.URL.Query().Get("length"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				fail(w, http.StatusBadRequest, fmt.Sprintf("length %q is not a whole number", s))
				return
			}
			b.Length = &n
		}
	} else if !decode(w, r, &b) {
		return
	}
	if b.ContextID == "" {
		fail(w, http.StatusBadRequest, "context_id is required")
		return
	}
	length := 100
	if b.Length != nil {
		length = *b.Length
	}
	l, err := a.m.Get(r.Context(), b.ContextID)
	if err != nil {
		status, msg := failure(err, "Context not found")
		fail(w, status, msg)
		return
	}
	route.JSON(w, http.StatusOK, LogReply{ContextID: l.Name(), Log: l.Log().Last(length)})
}
