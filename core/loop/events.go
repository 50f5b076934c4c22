package loop

import (
	"encoding/json"
	"time"
)

// Event kinds, in the order a monologue produces them. `exocortex run --json`
// writes one Event per line.
const (
	EventMonologueStart = "monologue_start"
	EventIteration      = "iteration"
	EventHook           = "hook"
	// EventHookDone closes the calls of one hook firing: its wall time and how
	// many round trips to plugins it took (some at once). The hook events'
	// durations overlap where extensions of different plugins ran at once.
	EventHookDone = "hook_done"
	EventMessage  = "message"
	EventSignal   = "signal"
	EventLLMChunk = "llm_chunk"
	// EventReasoning carries a piece of a thinking model's reasoning, as it
	// streams (Ollama's thinking, an OpenAI-compatible server's
	// reasoning_content, or a leading <think> block of the reply text). It is
	// for the operator to see: it is never parsed as the reply and never kept
	// in the history sent back to the model.
	EventReasoning = "reasoning"
	EventLLMReply  = "llm_reply"
	// EventDisplay carries what a response_stream extension wants the operator to
	// see of the reply so far, instead of the raw text.
	EventDisplay = "display"
	// EventReasoningDisplay carries what a reasoning_stream_chunk or
	// reasoning_stream_end extension wants the operator to see of the reasoning
	// instead of the raw text (a masked piece, a summary).
	EventReasoningDisplay = "reasoning_display"
	EventToolCall         = "tool_call"
	EventToolResult       = "tool_result"
	// EventToolOutput carries what the operator is shown of a running tool's
	// output so far (after tool_output_update).
	EventToolOutput   = "tool_output"
	EventApproval     = "approval"
	EventNotice       = "notice"
	EventResponse     = "response"
	EventMonologueEnd = "monologue_end"
	// EventBudget sizes each request (Budget): the window, every part's
	// tokens, the fill, and what was left out and why.
	EventBudget = "budget"
	// EventCompression reports a history compression (Compression).
	EventCompression = "compression"
	// EventContext is the state of the context window after a monologue
	// (ContextReport), written by `run --json` last.
	EventContext = "context"
)

// Event is something the loop did. Fields that do not apply to a kind are empty.
type Event struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	// Agent names a subordinate agent ("profile#depth"); empty for the operator's.
	Agent     string `json:"agent,omitempty"`
	Iteration int    `json:"iteration,omitempty"`

	// Hook calls.
	Hook       string   `json:"hook,omitempty"`
	Extension  string   `json:"extension,omitempty"`
	Plugin     string   `json:"plugin,omitempty"`
	Order      *int32   `json:"order,omitempty"`
	DurationUS int64    `json:"duration_us,omitempty"`
	Reads      []string `json:"reads,omitempty"`
	Writes     []string `json:"writes,omitempty"`
	Skipped    bool     `json:"skipped,omitempty"`
	// Batch is the number of extensions that shared this call's round trip
	// (RunBatch), and BatchIndex this one's place among them, from 1; both are
	// empty for a call of its own. The round trip's cost is in the first one's
	// duration.
	Batch      int `json:"batch,omitempty"`
	BatchIndex int `json:"batch_index,omitempty"`
	// RoundTrips, on hook_done, counts the calls to plugins the firing took.
	RoundTrips int `json:"round_trips,omitempty"`
	// BudgetUS and Per, on budget, are the time budget the extension exceeded
	// and what it covers ("call" or "iteration").
	BudgetUS int64  `json:"budget_us,omitempty"`
	Per      string `json:"per,omitempty"`
	Error    string `json:"error,omitempty"`
	// ErrorKind, on a hook event with an error, classifies it: "error" (the
	// extension or its SDK answered with an error: a changed request, an
	// undeclared key), "refused" (the host refused the response: a state
	// write or a prompt block its declaration does not allow), "crashed",
	// "timed_out", "unavailable" or "canceled" (host.FailureKind).
	ErrorKind string `json:"error_kind,omitempty"`
	// Context is the ACP context object the extension received (when
	// Options.EmitContext is set).
	Context json.RawMessage `json:"context,omitempty"`

	// Code, on a notice about an extension's behaviour, names the finding
	// (NoticeRepeatedBlock); Plugin and Extension name the extension.
	Code string `json:"code,omitempty"`

	// Messages, signals, model output.
	Role   string `json:"role,omitempty"`
	Signal string `json:"signal,omitempty"`
	Text   string `json:"text,omitempty"`

	// Tool calls and results.
	Tool   string          `json:"tool,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`
	Result string          `json:"result,omitempty"`

	// NativeCalls, on llm_reply, are the reply's native tool calls.
	NativeCalls []NativeCall `json:"native_tool_calls,omitempty"`

	// Model usage, on llm_reply.
	PromptTokens int     `json:"prompt_tokens,omitempty"`
	OutputTokens int     `json:"output_tokens,omitempty"`
	TokensPerSec float64 `json:"tokens_per_second,omitempty"`
	ContextFill  float64 `json:"context_fill,omitempty"`

	// BreakLoop, on tool_executed, says the tool ended the monologue.
	BreakLoop bool `json:"break_loop,omitempty"`

	// Monologue end.
	StopReason string `json:"stop_reason,omitempty"`

	// Request is the payload of EventRequest (record.go).
	Request *Request `json:"request,omitempty"`

	// The prompt budget.
	Budget      *Budget      `json:"budget,omitempty"`
	Compression *Compression `json:"compression,omitempty"`
	// ContextReport is the payload of EventContext.
	ContextReport *ContextReport `json:"context_report,omitempty"`
}
