// Package openai makes the agent look like a model to any OpenAI client
// (Open WebUI, the official SDKs):
//
//	GET  /v1/models            → {object: "list", data: [{id: "exocortex", ...}]}
//	POST /v1/chat/completions  {model, messages, stream?, user?}
//
// Each completion is one monologue of the agent on the last user message, in
// the session named by the X-Session-Id header or else the user field (a
// new session when neither is given; its name comes back in X-Session-Id).
// The session keeps the history, so the earlier messages a client resends
// are not fed again.
//
// Streamed (stream: true), the answer is server-sent events of
// chat.completion.chunk objects ending with "data: [DONE]"; what the agent
// does on the way (its tool calls, their results, approvals it waits for)
// arrives as reasoning_content deltas, the field reasoning models use, so a
// client shows it as the model's thinking; the answer arrives as content.
package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/server"
	"github.com/exocortex/exocortex/server/route"
	"github.com/exocortex/exocortex/server/sessions"
)

// ModelID is the model the endpoint lists: the agent.
const ModelID = "exocortex"

// SessionHeader names the session of a completion, and answers it.
const SessionHeader = "X-Session-Id"

// API is the OpenAI-compatible endpoint over a session manager.
type API struct{ m *sessions.Manager }

// New returns the endpoint over m.
func New(m *sessions.Manager) *API { return &API{m: m} }

// Routes are the endpoint's routes.
func (a *API) Routes() []route.Route {
	return []route.Route{
		{Method: "GET", Pattern: "/v1/models", Role: route.Agent, Summary: "OpenAI-compatible: the models (the agent)", Handler: http.HandlerFunc(a.models)},
		{Method: "POST", Pattern: "/v1/chat/completions", Role: route.Agent, Stream: true,
			Summary: "OpenAI-compatible: a monologue of the agent, streamed or not", Handler: http.HandlerFunc(a.completions)},
	}
}

func (a *API) models(w http.ResponseWriter, _ *http.Request) {
	route.JSON(w, http.StatusOK, ModelList{Object: "list", Data: []Model{{ID: ModelID, Object: "model", OwnedBy: "exocortex"}}})
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type request struct {
	Model    string    `json:"model"`
	Messages []message `json:"messages"`
	Stream   bool      `json:"stream,omitempty"`
	User     string    `json:"user,omitempty"`
}

// text is a message's content: a string, or the text parts of an array.
func (m message) text() (string, error) {
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", errors.New("content must be a string or an array of {type: text, text} parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

func bad(w http.ResponseWriter, field, msg string) {
	route.Error(w, http.StatusBadRequest, route.Problem{Code: route.CodeInvalidField, Field: field, Message: msg})
}

func (a *API) completions(w http.ResponseWriter, r *http.Request) {
	var req request
	if be := server.Decode(r, &req); be != nil {
		route.Error(w, be.Status, be.Problem)
		return
	}
	last := -1
	for i, m := range req.Messages {
		if m.Role == "user" {
			last = i
		}
	}
	if last < 0 {
		bad(w, "messages", "messages has no message with role user; send the user's message last")
		return
	}
	text, err := req.Messages[last].text()
	if err != nil {
		bad(w, fmt.Sprintf("messages[%d].content", last), fmt.Sprintf("messages[%d].content: %v", last, err))
		return
	}
	if strings.TrimSpace(text) == "" {
		bad(w, fmt.Sprintf("messages[%d].content", last), "the last user message is empty")
		return
	}
	name, from := r.Header.Get(SessionHeader), SessionHeader
	if name == "" {
		name, from = req.User, "user"
	}
	if name != "" {
		if err := session.ValidateName(name); err != nil {
			bad(w, from, from+": "+err.Error())
			return
		}
	}
	model := req.Model
	if model == "" {
		model = ModelID
	}
	c := completion{id: "chatcmpl-" + uuid.NewString(), created: time.Now().Unix(), model: model}
	turn := sessions.Turn{Session: name, Create: true, Message: text}
	if !req.Stream {
		turn.Before = func(l *sessions.Live) { w.Header().Set(SessionHeader, l.Name()) }
		_, res, err := a.m.Run(r.Context(), turn)
		if res == nil {
			fail(w, err)
			return
		}
		route.JSON(w, http.StatusOK, c.whole(res))
		return
	}
	a.stream(w, r, c, turn)
}

// fail answers a turn that did not run.
func fail(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, sessions.ErrClosed):
		status = http.StatusServiceUnavailable
	case errors.Is(err, sessions.ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(err, session.ErrConflict):
		status = http.StatusConflict // another replica wrote meanwhile; send again
	}
	route.Error(w, status, route.Problem{Code: route.CodeTurnFailed, Message: err.Error()})
}

// completion is what every answer of one request shares.
type completion struct {
	id      string
	created int64
	model   string
}

func finish(res *loop.Result) string {
	if res.StopReason == "max_iterations" {
		return "length"
	}
	return "stop"
}

func (c completion) whole(res *loop.Result) Completion {
	return Completion{ID: c.id, Object: "chat.completion", Created: c.created, Model: c.model,
		Choices: []Choice{{Message: ChoiceMessage{Role: "assistant", Content: res.Response}, FinishReason: finish(res)}}}
}

// chunk is one streamed event; finish is nil until the last.
func (c completion) chunk(delta Delta, finish *string) Chunk {
	return Chunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model,
		Choices: []ChunkChoice{{Delta: delta, FinishReason: finish}}}
}
