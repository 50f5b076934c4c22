package loop

import (
	"context"
	"encoding/json"

	"github.com/exocortex/exocortex/core/llm"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/secrets"
)

// Events a recording needs beyond the rest (Options.RecordRequests): what a
// replay (the replay package) feeds back and compares.
const (
	// EventRequest carries the whole request of an iteration (Request), as it
	// goes to the model, after the prompt hooks and the budget.
	EventRequest = "request"
	// EventToolExecuted carries what the tool itself returned (before
	// tool_execute_after): the tool, its final arguments, the result, its
	// error and whether it ended the monologue. A replay serves it instead of
	// running the tool again.
	EventToolExecuted = "tool_executed"
)

// Request is one model request as sent: the base system prompt (main prompt,
// tool list, secrets line) before any block, the prompt blocks with the
// extension and hook that made them, and every message.
type Request struct {
	System   string           `json:"system"`
	Blocks   []RequestBlock   `json:"blocks,omitempty"`
	Messages []RequestMessage `json:"messages"`
}

// RequestBlock is a prompt block that reached the request.
type RequestBlock struct {
	Hook      string `json:"hook"`
	Extension string `json:"extension"`
	Plugin    string `json:"plugin,omitempty"`
	Title     string `json:"title,omitempty"`
	Content   string `json:"content"`
}

// Parts of a request a message belongs to.
const (
	PartSystem  = "system"  // the system prompt with the system_prompt blocks
	PartSummary = "summary" // a part of the summary of compressed turns
	PartBlocks  = "blocks"  // the blocks of message_loop_prompts_before or _after
	PartHistory = "history" // the verbatim history (with pinned inserts)
)

// RequestMessage is one message of a request. A recording keeps Content once
// per Hash (sha256 of Content) and leaves it out where it repeats.
type RequestMessage struct {
	Role    string `json:"role"`
	Part    string `json:"part"`
	Content string `json:"content,omitempty"`
	Hash    string `json:"hash,omitempty"`
}

// ToolExecutor stands in for running a tool (Options.ToolExecutor): it
// returns the result to use, or nil to run the tool.
type ToolExecutor func(ctx context.Context, iteration int, call *exocortexv1.ToolCall) (*exocortexv1.ToolResult, error)

var blockHooks = [3]string{"system_prompt", "message_loop_prompts_before", "message_loop_prompts_after"}

// emitRequest reports a request about to be sent (when recording).
func (a *Agent) emitRequest(t *turn, system string, blocks []*promptBlock, msgs []llm.Message, parts []string) {
	if !a.opts.RecordRequests {
		return
	}
	r := &Request{System: system}
	for _, b := range blocks {
		rb := RequestBlock{Hook: blockHooks[b.where], Title: b.GetTitle(), Content: b.GetContent(), Extension: b.GetSource()}
		if b.ext != nil {
			rb.Extension, rb.Plugin = b.ext.Name(), b.ext.Plugin.Name()
		}
		r.Blocks = append(r.Blocks, rb)
	}
	for i, m := range msgs {
		r.Messages = append(r.Messages, RequestMessage{Role: m.Role, Part: parts[i], Content: m.Content})
	}
	a.emit(Event{Type: EventRequest, Iteration: t.iteration, Request: r})
}

// execute runs the tool, or takes its result from Options.ToolExecutor, and
// reports what the tool returned (when recording).
func (a *Agent) execute(ctx context.Context, t *turn, tool toolRunner, tc *exocortexv1.ToolCall) (*exocortexv1.ToolResult, error) {
	var result *exocortexv1.ToolResult
	var err error
	if a.opts.ToolExecutor != nil {
		result, err = a.opts.ToolExecutor(ctx, t.iteration, tc)
	}
	if result == nil && err == nil {
		var resp *exocortexv1.ExecuteToolResponse
		resp, err = tool(ctx)
		result = resp.GetResult()
	}
	if err == nil && result != nil && a.opts.RecordRequests {
		a.emit(Event{Type: EventToolExecuted, Iteration: t.iteration, Tool: tc.GetName(), Args: json.RawMessage(orEmpty([]byte(tc.GetArgsJson()))),
			Result: result.GetContent(), Error: result.GetError(), BreakLoop: result.GetBreakLoop()})
	}
	return result, err
}

type toolRunner func(ctx context.Context) (*exocortexv1.ExecuteToolResponse, error)

// maskRequest masks every text of a request (a copy when anything changes).
func maskRequest(mk *secrets.Masker, r *Request) *Request {
	if r == nil {
		return nil
	}
	c := &Request{System: mk.Mask(r.System)}
	for _, b := range r.Blocks {
		b.Title, b.Content = mk.Mask(b.Title), mk.Mask(b.Content)
		c.Blocks = append(c.Blocks, b)
	}
	for _, m := range r.Messages {
		m.Content = mk.Mask(m.Content)
		c.Messages = append(c.Messages, m)
	}
	return c
}

// partsOf appends n copies of part to parts.
func partsOf(parts []string, part string, n int) []string {
	for range n {
		parts = append(parts, part)
	}
	return parts
}

// NativeCall is a native tool call of a reply, as llm_reply reports it.
type NativeCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

func nativeCalls(tcs []llm.ToolCall) []NativeCall {
	var out []NativeCall
	for _, tc := range tcs {
		out = append(out, NativeCall{Name: tc.Name, Arguments: json.RawMessage(orEmpty(tc.Arguments))})
	}
	return out
}
