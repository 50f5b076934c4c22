package llm

import (
	"encoding/json"
	"time"
)

// Roles of chat messages, as Ollama names them.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool" // the result of a native tool call
)

// DefaultNumCtx is the context window requested when a ChatRequest leaves
// NumCtx at zero. Ollama's own default is small enough that an agent's system
// prompt and a few tool results overflow it, and Ollama then drops the start of
// the prompt without saying so; asking explicitly on every request avoids that.
const DefaultNumCtx = 8192

// Message is one message of a chat.
type Message struct {
	Role    string
	Content string
	// Thinking is the reasoning text of a thinking model's earlier reply.
	Thinking string
	// ToolCalls are the native tool calls of an assistant message.
	ToolCalls []ToolCall
	// ToolName names the tool whose result a RoleTool message carries.
	ToolName string
	// ToolCallID is the ID of the call a RoleTool message answers, when the
	// server gave one (OpenAI-compatible servers pair results by it).
	ToolCallID string
}

// ToolCall is one native tool call made by the model.
type ToolCall struct {
	// ID is the call's identifier when the server gives one.
	ID string
	// Name is the tool's name.
	Name string
	// Arguments is a JSON object with the keys in the order the model wrote them.
	Arguments json.RawMessage
}

// Tool describes a tool offered to the model for native tool calling.
type Tool struct {
	Name        string
	Description string
	// Parameters is a JSON Schema object describing the arguments;
	// nil means the tool takes none.
	Parameters json.RawMessage
}

// ChatRequest is one call to the model.
type ChatRequest struct {
	// Model is the model name as Ollama knows it, e.g. "qwen3:8b".
	Model    string
	Messages []Message
	// Tools are offered for native tool calling; nil offers none. Models
	// without native tool support still work through the JSON reply format.
	Tools []Tool
	// NumCtx is the context window in tokens; 0 means DefaultNumCtx (or
	// Options["num_ctx"] when set there). It is sent on every request.
	NumCtx int
	// Options are further Ollama model options (temperature, num_predict, ...).
	// The map is not modified.
	Options map[string]any
	// Format constrains the output: nil for free text, `"json"` for any JSON
	// value, or a JSON Schema object.
	Format json.RawMessage
	// Think turns a thinking model's reasoning on or off; nil leaves the
	// model's default.
	Think *bool
}

// Chunk is one piece of a streamed reply.
type Chunk struct {
	// Content is the new text of the reply since the previous chunk.
	Content string
	// Thinking is the new reasoning text since the previous chunk.
	Thinking string
}

// Reply is a complete model reply.
type Reply struct {
	// Model is the model that answered, as the server names it.
	Model    string
	Content  string
	Thinking string
	// ToolCalls are the native tool calls, in the order the model made them.
	ToolCalls []ToolCall
	// DoneReason is why generation stopped: "stop" (the model finished),
	// "length" (it hit num_predict or the context window), "load", ...
	DoneReason string
	Usage      Usage
}

// Truncated reports whether generation stopped at a length limit rather than
// because the model finished.
func (r Reply) Truncated() bool { return r.DoneReason == "length" }

// Usage is what one call cost, as the server measured it.
type Usage struct {
	// PromptTokens is the number of prompt tokens the server evaluated. When it
	// reuses a cached prefix from the previous call it may count only the new
	// tokens.
	PromptTokens int
	// OutputTokens is the number of tokens generated.
	OutputTokens int
	// NumCtx is the context window the request asked for.
	NumCtx int

	TotalDuration  time.Duration // the whole call, on the server
	LoadDuration   time.Duration // loading the model, if it was not loaded
	PromptDuration time.Duration // evaluating the prompt
	EvalDuration   time.Duration // generating the output
}

// TokensPerSecond is the generation speed, 0 when unknown.
func (u Usage) TokensPerSecond() float64 {
	if u.EvalDuration <= 0 {
		return 0
	}
	return float64(u.OutputTokens) / u.EvalDuration.Seconds()
}

// ContextFill is the share of the context window the prompt and the reply
// used, between 0 and 1 (more when the server truncated), 0 when unknown.
func (u Usage) ContextFill() float64 {
	if u.NumCtx <= 0 {
		return 0
	}
	return float64(u.PromptTokens+u.OutputTokens) / float64(u.NumCtx)
}
