package agentzero

import (
	"github.com/exocortex/exocortex/server/openapi"
	"github.com/exocortex/exocortex/server/sessions"
)

// MessageReply is api_message's answer.
type MessageReply struct {
	ContextID string `json:"context_id"`
	Response  string `json:"response"`
}

// LogReply is api_log_get's answer.
type LogReply struct {
	ContextID string           `json:"context_id"`
	Log       sessions.LogView `json:"log"`
}

// ContextReply is api_reset_chat's and api_terminate_chat's answer.
type ContextReply struct {
	Success   bool   `json:"success"`
	Message   string `json:"message"`
	ContextID string `json:"context_id"`
}

// ErrorReply is Agent Zero's error shape.
type ErrorReply struct {
	Error string `json:"error"`
}

type filesBody struct {
	Paths     []string `json:"paths"`
	ContextID string   `json:"context_id,omitempty"`
}

type logBody struct {
	ContextID string `json:"context_id"`
	Length    int    `json:"length,omitempty"`
}

// Ops describes the API's routes (each at /api/NAME and /NAME) for the
// OpenAPI document.
func Ops() []openapi.Op {
	logQuery := []openapi.Param{
		{Name: "context_id", Required: true, Description: "the session (its name)"},
		{Name: "length", Type: "integer", Description: "the last this many items (default 100)"},
	}
	ops := []openapi.Op{
		{Method: "POST", Pattern: "api_message", Body: messageBody{}, Reply: MessageReply{},
			Description: "Blocks until the monologue ends. The key may come as api_key in the body. lifetime_hours (default 24) expires the idle session."},
		{Method: "GET", Pattern: "api_log_get", Query: logQuery, Reply: LogReply{}},
		{Method: "POST", Pattern: "api_log_get", Body: logBody{}, Reply: LogReply{}},
		{Method: "POST", Pattern: "api_reset_chat", Body: contextBody{}, Reply: ContextReply{}},
		{Method: "POST", Pattern: "api_terminate_chat", Body: contextBody{}, Reply: ContextReply{}},
		{Method: "POST", Pattern: "api_files_get", Body: filesBody{}, Reply: map[string]string{},
			Description: "Each file's base name and its content in base64; only a session's own files (its attachments), any other path refused (403) by name."},
	}
	var out []openapi.Op
	for _, o := range ops {
		o.ErrorReply = ErrorReply{}
		for _, prefix := range []string{"/api/", "/"} {
			p := o
			p.Pattern = prefix + o.Pattern
			out = append(out, p)
		}
	}
	return out
}
