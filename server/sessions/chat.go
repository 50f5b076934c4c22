package sessions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/exocortex/exocortex/core/session"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/server"
	"github.com/exocortex/exocortex/server/route"
	"github.com/exocortex/exocortex/tui/stream"
)

// NoticeApprovalWaiting is the Code of the notice a session emits when one
// of its tool calls is held for the operator; its Args are the [Pending] call.
const NoticeApprovalWaiting = "approval_waiting"

// SessionInfo is one session of GET /api/v1/sessions: the terminal's
// sessions, the same files `exocortex --resume NAME` opens.
type SessionInfo struct {
	Name     string    `json:"name"`
	Modified time.Time `json:"modified"`
	Size     int64     `json:"size"`
	// Open says serve holds the session now; Busy that a turn runs in it.
	Open bool `json:"open"`
	Busy bool `json:"busy"`
}

// SessionList is GET /api/v1/sessions's reply.
type SessionList struct {
	Sessions []SessionInfo `json:"sessions"`
	// Store names where the sessions live: the sessions directory, or the
	// shared bucket on NATS JetStream that several serve replicas share.
	Store string `json:"store"`
}

// NewSession is POST /api/v1/sessions's body.
type NewSession struct {
	// Name is the new session's name ("" picks one from the time).
	Name string `json:"name,omitempty"`
}

// RenameRequest is POST /api/v1/sessions/{name}/rename's body.
type RenameRequest struct {
	Name string `json:"name"`
}

// Named is the reply naming one session.
type Named struct {
	Name string `json:"name"`
}

// Message is one message of a session's history, as the chat shows it: an
// assistant reply is read as the reply format (its thoughts, the tool it
// calls and that tool's arguments, and the answer text of the response tool).
type Message struct {
	No      int    `json:"no"`
	Role    string `json:"role"`
	Content string `json:"content"`
	// ToolName names the tool whose result a tool message is.
	ToolName string `json:"tool_name,omitempty"`
	// Text, Thoughts, Headline, Tool and Args are an assistant reply read.
	Text     string            `json:"text,omitempty"`
	Thoughts []string          `json:"thoughts,omitempty"`
	Headline string            `json:"headline,omitempty"`
	Tool     string            `json:"tool,omitempty"`
	Args     map[string]string `json:"args,omitempty"`
	Think    string            `json:"think,omitempty"`
}

// MessageList is GET /api/v1/sessions/{name}/messages's reply.
type MessageList struct {
	Session string `json:"session"`
	// Total counts the history's messages; Messages are the last limit of them.
	Total    int       `json:"total"`
	Messages []Message `json:"messages"`
	Busy     bool      `json:"busy"`
	// Approvals are the session's calls held now.
	Approvals []Pending `json:"approvals"`
}

// ReadReply is an assistant message's text read as the reply format.
func ReadReply(no int, role, content, tool string) Message {
	msg := Message{No: no, Role: role, Content: content, ToolName: tool}
	if role != "assistant" {
		return msg
	}
	r := stream.Parse(content)
	msg.Text, msg.Thoughts, msg.Headline, msg.Tool, msg.Think = r.Text, r.Thoughts, r.Headline, r.Tool, r.Think
	if len(r.Args) > 0 {
		msg.Args = map[string]string{}
		for _, a := range r.Args {
			msg.Args[a.Key] = a.Value
		}
	}
	return msg
}

// ChatRoutes are the sessions' REST routes the dashboard's chat uses:
//
//	GET    /api/v1/sessions                   → {sessions}
//	POST   /api/v1/sessions                   {name?} → 201 {name}
//	POST   /api/v1/sessions/{name}/rename     {name} → {name} (admin)
//	DELETE /api/v1/sessions/{name}            → {name} (admin; to the sessions' .trash)
//	GET    /api/v1/sessions/{name}/messages   ?limit= → {session, total, messages, busy, approvals}
//	POST   /api/v1/sessions/{name}/turn       {message, attachments?} → text/event-stream (turn.go's events)
//	POST   /api/v1/sessions/{name}/stop       → {name, stopped}
func (m *Manager) ChatRoutes() []route.Route {
	return []route.Route{
		{Method: "GET", Pattern: "/api/v1/sessions", Role: route.Agent, Summary: "the sessions (the terminal's, which --resume opens)", Handler: http.HandlerFunc(m.list)},
		{Method: "POST", Pattern: "/api/v1/sessions", Role: route.Agent, Summary: "start a session", Handler: http.HandlerFunc(m.create)},
		{Method: "POST", Pattern: "/api/v1/sessions/{name}/rename", Role: route.Admin, Summary: "rename a session", Handler: http.HandlerFunc(m.rename)},
		{Method: "DELETE", Pattern: "/api/v1/sessions/{name}", Role: route.Admin, Summary: "delete a session (moved to the sessions' .trash)", Handler: http.HandlerFunc(m.remove)},
		{Method: "GET", Pattern: "/api/v1/sessions/{name}/messages", Role: route.Agent, Summary: "a session's history, replies read", Handler: http.HandlerFunc(m.messages)},
		{Method: "POST", Pattern: "/api/v1/sessions/{name}/turn", Role: route.Agent, Stream: true, Summary: "send a message; the turn streams back as server-sent events", Handler: http.HandlerFunc(m.streamTurn)},
		{Method: "POST", Pattern: "/api/v1/sessions/{name}/stop", Role: route.Agent, Summary: "stop the session's running turn", Handler: http.HandlerFunc(m.stop)},
	}
}

// sessionError answers err of a session operation.
func sessionError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
		route.Error(w, http.StatusNotFound, route.Problem{Code: route.CodeNotFound, Message: err.Error() + " (GET /api/v1/sessions lists them)"})
	case errors.Is(err, ErrBadName):
		route.Error(w, http.StatusBadRequest, route.Problem{Code: route.CodeInvalidField, Field: "name", Message: err.Error()})
	case errors.Is(err, ErrBusy), errors.Is(err, session.ErrConflict):
		route.Error(w, http.StatusConflict, route.Problem{Code: route.CodeConflict, Message: err.Error()})
	case errors.Is(err, ErrClosed):
		route.Error(w, http.StatusServiceUnavailable, route.Problem{Code: route.CodeUnavailable, Message: err.Error()})
	default:
		route.Error(w, http.StatusInternalServerError, route.Problem{Code: route.CodeInternal, Message: err.Error()})
	}
}

func (m *Manager) list(w http.ResponseWriter, r *http.Request) {
	infos, err := m.opts.Store.List(r.Context())
	if err != nil {
		sessionError(w, err)
		return
	}
	out := SessionList{Sessions: []SessionInfo{}, Store: m.opts.Store.Location()}
	for _, in := range infos {
		si := SessionInfo{Name: in.Name, Modified: in.Modified, Size: in.Size}
		m.mu.Lock()
		l := m.live[in.Name]
		m.mu.Unlock()
		if l != nil {
			si.Open, si.Busy = true, l.Busy()
		}
		out.Sessions = append(out.Sessions, si)
	}
	route.JSON(w, http.StatusOK, out)
}

func (m *Manager) create(w http.ResponseWriter, r *http.Request) {
	var b NewSession
	if r.ContentLength != 0 {
		if be := server.Decode(r, &b); be != nil {
			route.Error(w, be.Status, be.Problem)
			return
		}
	}
	if b.Name == "" {
		b.Name = session.NewName(time.Now())
	}
	if err := session.ValidateName(b.Name); err != nil {
		sessionError(w, fmt.Errorf("%w: %w", ErrBadName, err))
		return
	}
	if m.exists(r.Context(), b.Name) {
		route.Error(w, http.StatusConflict, route.Problem{Code: route.CodeConflict, Field: "name", Message: fmt.Sprintf("session %q exists already; pick another name", b.Name)})
		return
	}
	if _, err := m.Open(r.Context(), b.Name, true, ""); err != nil {
		sessionError(w, err)
		return
	}
	route.JSON(w, http.StatusCreated, Named{Name: b.Name})
}

// ErrBusy is Rename's error for a session whose turn runs.
var ErrBusy = errors.New("the session's turn is running; stop it or wait")

// Rename gives session from the name to: it is closed (not while a turn
// runs), and its files are renamed; the terminal resumes it as to.
func (m *Manager) Rename(ctx context.Context, from, to string) error {
	if err := session.ValidateName(to); err != nil {
		return fmt.Errorf("%w: %w", ErrBadName, err)
	}
	if m.exists(ctx, to) {
		return fmt.Errorf("renaming %s: session %q exists already: %w", from, to, ErrBusy)
	}
	m.mu.Lock()
	l := m.live[from]
	m.mu.Unlock()
	if l != nil && l.Busy() {
		return fmt.Errorf("renaming %s: %w", from, ErrBusy)
	}
	if err := m.drop(ctx, from); err != nil {
		return err
	}
	if err := m.opts.Store.Rename(ctx, from, to); err != nil {
		return err
	}
	src, dst := FilesDir(m.opts.Dir, from), FilesDir(m.opts.Dir, to)
	if err := os.Rename(src, dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("renaming %s to %s: %w", src, dst, err)
	}
	return nil
}

func (m *Manager) rename(w http.ResponseWriter, r *http.Request) {
	var b RenameRequest
	if be := server.Decode(r, &b); be != nil {
		route.Error(w, be.Status, be.Problem)
		return
	}
	if b.Name == "" {
		be := server.Missing("name", "the session's new name")
		route.Error(w, be.Status, be.Problem)
		return
	}
	if err := m.Rename(r.Context(), r.PathValue("name"), b.Name); err != nil {
		if errors.Is(err, ErrBusy) {
			route.Error(w, http.StatusConflict, route.Problem{Code: route.CodeConflict, Field: "name", Message: err.Error()})
			return
		}
		sessionError(w, err)
		return
	}
	route.JSON(w, http.StatusOK, Named{Name: b.Name})
}

func (m *Manager) remove(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := m.Terminate(r.Context(), name); err != nil {
		if session.ValidateName(name) != nil {
			err = fmt.Errorf("session %q: %w", name, ErrNotFound)
		}
		sessionError(w, err)
		return
	}
	route.JSON(w, http.StatusOK, Named{Name: name})
}

func (m *Manager) messages(w http.ResponseWriter, r *http.Request) {
	limit := 500
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100000 {
			route.Error(w, http.StatusBadRequest, route.Problem{Code: route.CodeInvalidField, Field: "limit", Message: fmt.Sprintf("limit is %q: give a whole number from 1 to 100000", s)})
			return
		}
		limit = n
	}
	l, err := m.Get(r.Context(), r.PathValue("name"))
	if err != nil {
		sessionError(w, err)
		return
	}
	l.freshIfIdle(r.Context())
	hist := l.Agent().History()
	out := MessageList{Session: l.name, Total: len(hist), Messages: []Message{}, Busy: l.Busy(), Approvals: m.opts.Approvals.List(l.name)}
	if out.Approvals == nil {
		out.Approvals = []Pending{}
	}
	start := max(0, len(hist)-limit)
	for i, h := range hist[start:] {
		out.Messages = append(out.Messages, messageOf(start+i, h))
	}
	route.JSON(w, http.StatusOK, out)
}

func messageOf(no int, h *exocortexv1.Message) Message {
	return ReadReply(no, h.GetRole(), h.GetContent(), h.GetToolName())
}

// Stop cancels the session's running turn and reports whether one ran.
func (l *Live) Stop() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cancel == nil {
		return false
	}
	l.stopped = true
	l.cancel()
	return true
}

// takeStopped reports whether Stop ended the last turn, and forgets it.
func (l *Live) takeStopped() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stopped
	l.stopped = false
	return s
}

// StopReply is POST /api/v1/sessions/{name}/stop's reply.
type StopReply struct {
	Name string `json:"name"`
	// Stopped says a turn was running and is told to stop.
	Stopped bool `json:"stopped"`
}

func (m *Manager) stop(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	m.mu.Lock()
	l := m.live[name]
	m.mu.Unlock()
	if l == nil {
		if !m.exists(r.Context(), name) {
			sessionError(w, fmt.Errorf("session %q: %w", name, ErrNotFound))
			return
		}
		route.JSON(w, http.StatusOK, StopReply{Name: name})
		return
	}
	route.JSON(w, http.StatusOK, StopReply{Name: name, Stopped: l.Stop()})
}
