package sessions

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/server"
	"github.com/exocortex/exocortex/server/route"
	"github.com/exocortex/exocortex/tui/stream"
)

// TurnRequest is POST /api/v1/sessions/{name}/turn's body.
type TurnRequest struct {
	Message     string           `json:"message"`
	Attachments []TurnAttachment `json:"attachments,omitempty"`
}

// TurnAttachment is a file sent with a message, saved to the session's files.
type TurnAttachment struct {
	Filename string `json:"filename"`
	// Base64 is the file's bytes, standard base64.
	Base64 string `json:"base64"`
}

// TurnEvent is the data of one event of a turn's stream; the SSE event name
// is Type:
//
//   - "session" (Session): the turn's session, first;
//   - "reply" (Iteration, Text, Thoughts, Headline, Tool, Args, Think): the
//     model's reply so far, read as the reply format; each replaces the last
//     of the same iteration;
//   - "reasoning" (Text): a piece of a thinking model's reasoning;
//   - "tool_call" (Tool, RawArgs), "tool_output" (Text), "tool_result"
//     (Tool, Result, Error): a tool runs (secrets are placeholders);
//   - "approval_waiting" (Approval): a call held for the operator
//     (POST /api/v1/approvals/{id}); "approval" (Tool, Result, Text): its answer;
//   - "notice" (Text), "signal" (Signal, Text);
//   - "done" (Text: the answer, StopReason, Iteration) or "error" (Code, Error), last.
type TurnEvent struct {
	Type      string            `json:"type"`
	Session   string            `json:"session,omitempty"`
	Agent     string            `json:"agent,omitempty"`
	Iteration int               `json:"iteration,omitempty"`
	Text      string            `json:"text,omitempty"`
	Thoughts  []string          `json:"thoughts,omitempty"`
	Headline  string            `json:"headline,omitempty"`
	Think     string            `json:"think,omitempty"`
	Tool      string            `json:"tool,omitempty"`
	Args      map[string]string `json:"args,omitempty"`
	RawArgs   json.RawMessage   `json:"raw_args,omitempty"`
	Result    string            `json:"result,omitempty"`
	Error     string            `json:"error,omitempty"`
	Code      string            `json:"code,omitempty"`
	Signal    string            `json:"signal,omitempty"`
	Approval  *Pending          `json:"approval,omitempty"`
	// StopReason, on done, says why the monologue ended.
	StopReason string `json:"stop_reason,omitempty"`
}

// replyEvery is the shortest time between two "reply" events of one
// iteration (the last is always sent).
const replyEvery = 40 * time.Millisecond

// keepAlive is how often a quiet turn stream gets an SSE comment.
const keepAlive = 15 * time.Second

// sseWriter writes events to one response, from several goroutines.
type sseWriter struct {
	mu sync.Mutex
	w  http.ResponseWriter
	rc *http.ResponseController
	// gone is set once a write fails (the browser left): the turn goes on.
	gone bool
}

func (s *sseWriter) send(e TurnEvent) {
	b, _ := json.Marshal(e)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return
	}
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", e.Type, b); err != nil {
		s.gone = true
		return
	}
	_ = s.rc.Flush()
}

func (s *sseWriter) comment(c string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.gone {
		fmt.Fprintf(s.w, ": %s\n\n", c)
		_ = s.rc.Flush()
	}
}

// replies turns the operator's agent's streamed chunks into "reply" events.
type replies struct {
	mu        sync.Mutex
	iteration int
	text      strings.Builder
	sent      time.Time
	dirty     bool
}

func (rp *replies) event() TurnEvent {
	r := stream.Parse(rp.text.String())
	e := TurnEvent{Type: "reply", Iteration: rp.iteration, Text: r.Text, Thoughts: r.Thoughts, Headline: r.Headline, Tool: r.Tool, Think: r.Think}
	if len(r.Args) > 0 {
		e.Args = map[string]string{}
		for _, a := range r.Args {
			e.Args[a.Key] = a.Value
		}
	}
	return e
}

// turnEvent maps a loop event to what the stream sends (false: nothing).
func turnEvent(e loop.Event) (TurnEvent, bool) {
	te := TurnEvent{Type: e.Type, Agent: e.Agent, Iteration: e.Iteration}
	switch e.Type {
	case loop.EventReasoning, loop.EventToolOutput:
		te.Text = e.Text
	case loop.EventToolCall:
		te.Tool, te.RawArgs = e.Tool, e.Args
	case loop.EventToolResult:
		te.Tool, te.Result, te.Error = e.Tool, e.Result, e.Error
	case loop.EventApproval:
		te.Tool, te.Result, te.Text = e.Tool, e.Result, e.Text
	case loop.EventSignal:
		te.Signal, te.Text = e.Signal, e.Text
	case loop.EventNotice:
		if e.Code == NoticeApprovalWaiting {
			var p Pending
			if json.Unmarshal(e.Args, &p) != nil {
				return te, false
			}
			te.Type, te.Approval, te.Tool = NoticeApprovalWaiting, &p, p.Tool
			return te, true
		}
		te.Text, te.Error = e.Text, e.Error
	default:
		return te, false
	}
	return te, true
}

func (m *Manager) streamTurn(w http.ResponseWriter, r *http.Request) {
	var b TurnRequest
	if be := server.Decode(r, &b); be != nil {
		route.Error(w, be.Status, be.Problem)
		return
	}
	if strings.TrimSpace(b.Message) == "" && len(b.Attachments) == 0 {
		be := server.Missing("message", "the message to send")
		route.Error(w, be.Status, be.Problem)
		return
	}
	turn := Turn{Session: r.PathValue("name"), Create: true, Message: b.Message}
	for i, a := range b.Attachments {
		data, err := base64.StdEncoding.DecodeString(a.Base64)
		if err != nil {
			route.Error(w, http.StatusBadRequest, route.Problem{Code: route.CodeInvalidField, Field: fmt.Sprintf("attachments[%d].base64", i),
				Message: fmt.Sprintf("attachment %q is not standard base64: %v", a.Filename, err)})
			return
		}
		if _, err := SafeFilename(a.Filename); err != nil {
			route.Error(w, http.StatusBadRequest, route.Problem{Code: route.CodeInvalidField, Field: fmt.Sprintf("attachments[%d].filename", i), Message: err.Error()})
			return
		}
		turn.Attachments = append(turn.Attachments, Attachment{Filename: a.Filename, Data: data})
	}
	out := &sseWriter{w: w, rc: http.NewResponseController(w)}
	var started bool
	var startMu sync.Mutex
	var live *Live
	rp := &replies{}
	flushReply := func(force bool) {
		rp.mu.Lock()
		if !rp.dirty || (!force && time.Since(rp.sent) < replyEvery) {
			rp.mu.Unlock()
			return
		}
		e := rp.event()
		rp.dirty, rp.sent = false, time.Now()
		rp.mu.Unlock()
		out.send(e)
	}
	turn.Before = func(l *Live) {
		startMu.Lock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		started = true
		live = l
		startMu.Unlock()
		out.send(TurnEvent{Type: "session", Session: l.Name()})
	}
	turn.OnEvent = func(e loop.Event) {
		if e.Agent == "" {
			switch e.Type {
			case loop.EventIteration:
				flushReply(true)
				rp.mu.Lock()
				rp.iteration = e.Iteration
				rp.text.Reset()
				rp.dirty = false
				rp.mu.Unlock()
				return
			case loop.EventLLMChunk:
				rp.mu.Lock()
				rp.iteration = e.Iteration
				rp.text.WriteString(e.Text)
				rp.dirty = true
				rp.mu.Unlock()
				flushReply(false)
				return
			case loop.EventLLMReply:
				rp.mu.Lock()
				rp.text.Reset()
				rp.text.WriteString(e.Text)
				rp.dirty = true
				rp.mu.Unlock()
				flushReply(true)
				return
			}
		}
		if te, ok := turnEvent(e); ok {
			flushReply(true)
			out.send(te)
		}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(keepAlive)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				startMu.Lock()
				ok := started
				startMu.Unlock()
				if ok {
					out.comment("keep-alive")
				}
			}
		}
	}()
	// The turn outlives the browser's connection (a reload, another view):
	// POST .../stop ends it, as does serve's shutdown.
	_, res, err := m.Run(context.WithoutCancel(r.Context()), turn)
	close(done)
	startMu.Lock()
	ok := started
	startMu.Unlock()
	if !ok {
		sessionError(w, err)
		return
	}
	flushReply(true)
	var stop *loop.StopError
	switch {
	case live.takeStopped() && err != nil:
		out.send(TurnEvent{Type: "error", Code: "stopped", Error: "the turn was stopped (POST .../stop)"})
	case err != nil && res == nil:
		out.send(TurnEvent{Type: "error", Code: route.CodeTurnFailed, Error: err.Error()})
	case errors.As(err, &stop):
		out.send(TurnEvent{Type: "done", Text: res.Response, StopReason: res.StopReason, Iteration: res.Iterations, Error: err.Error()})
	default:
		e := TurnEvent{Type: "done", Text: res.Response, StopReason: res.StopReason, Iteration: res.Iterations}
		if err != nil {
			e.Error = err.Error()
		}
		out.send(e)
	}
}
