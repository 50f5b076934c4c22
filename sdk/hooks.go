package sdk

import (
	"context"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// One interface per hook. An extension implements the ones it handles; each becomes
// one ExtensionSpec of the manifest. A nil response with a nil error means "no
// change". To have the compiler check a method's spelling, assert the interface:
//
//	var _ sdk.MessageLoopEndHook = (*Supervisor)(nil)

// AgentInitHook runs once, when the agent is created for a session.
type AgentInitHook interface {
	AgentInit(ctx context.Context, c *Call, req *exocortexv1.AgentInitRequest) (*exocortexv1.AgentInitResponse, error)
}

// MonologueStartHook runs when a user message starts a monologue.
type MonologueStartHook interface {
	MonologueStart(ctx context.Context, c *Call, req *exocortexv1.MonologueStartRequest) (*exocortexv1.MonologueStartResponse, error)
}

// HistAddBeforeHook runs before each message is added to the history.
type HistAddBeforeHook interface {
	HistAddBefore(ctx context.Context, c *Call, req *exocortexv1.HistAddBeforeRequest) (*exocortexv1.HistAddBeforeResponse, error)
}

// MessageLoopStartHook runs when an iteration begins.
type MessageLoopStartHook interface {
	MessageLoopStart(ctx context.Context, c *Call, req *exocortexv1.MessageLoopStartRequest) (*exocortexv1.MessageLoopStartResponse, error)
}

// MessageLoopPromptsBeforeHook runs when prompt assembly begins; it may add prompt
// blocks before the history.
type MessageLoopPromptsBeforeHook interface {
	MessageLoopPromptsBefore(ctx context.Context, c *Call, req *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error)
}

// SystemPromptHook runs when the system prompt is assembled; it may append blocks.
type SystemPromptHook interface {
	SystemPrompt(ctx context.Context, c *Call, req *exocortexv1.SystemPromptRequest) (*exocortexv1.SystemPromptResponse, error)
}

// MessageLoopPromptsAfterHook is the last point at which text reaches this LLM call;
// it may add prompt blocks after the history.
type MessageLoopPromptsAfterHook interface {
	MessageLoopPromptsAfter(ctx context.Context, c *Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error)
}

// BeforeMainLLMCallHook runs when the prompt is final: state work only.
type BeforeMainLLMCallHook interface {
	BeforeMainLLMCall(ctx context.Context, c *Call, req *exocortexv1.BeforeMainLLMCallRequest) (*exocortexv1.BeforeMainLLMCallResponse, error)
}

// ResponseStreamChunkHook runs for each streamed piece of the model's reply.
type ResponseStreamChunkHook interface {
	ResponseStreamChunk(ctx context.Context, c *Call, req *exocortexv1.ResponseStreamChunkRequest) (*exocortexv1.ResponseStreamChunkResponse, error)
}

// ResponseStreamEndHook runs when the reply is complete.
type ResponseStreamEndHook interface {
	ResponseStreamEnd(ctx context.Context, c *Call, req *exocortexv1.ResponseStreamEndRequest) (*exocortexv1.ResponseStreamEndResponse, error)
}

// ErrorFormatHook runs when the reply could not be used.
type ErrorFormatHook interface {
	ErrorFormat(ctx context.Context, c *Call, req *exocortexv1.ErrorFormatRequest) (*exocortexv1.ErrorFormatResponse, error)
}

// ToolExecuteBeforeHook runs before a tool runs; it may rewrite the arguments or
// block the call.
type ToolExecuteBeforeHook interface {
	ToolExecuteBefore(ctx context.Context, c *Call, req *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error)
}

// ToolExecuteAfterHook runs after a tool has run.
type ToolExecuteAfterHook interface {
	ToolExecuteAfter(ctx context.Context, c *Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error)
}

// MessageLoopEndHook runs when an iteration is over, even when it failed.
type MessageLoopEndHook interface {
	MessageLoopEnd(ctx context.Context, c *Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error)
}

// MonologueEndHook runs when the monologue is over, even when it failed.
type MonologueEndHook interface {
	MonologueEnd(ctx context.Context, c *Call, req *exocortexv1.MonologueEndRequest) (*exocortexv1.MonologueEndResponse, error)
}

// ChatModelCallBeforeHook runs just before the main model is called, with the request as it is sent: state work only.
type ChatModelCallBeforeHook interface {
	ChatModelCallBefore(ctx context.Context, c *Call, req *exocortexv1.ChatModelCallBeforeRequest) (*exocortexv1.ChatModelCallBeforeResponse, error)
}

// ChatModelCallAfterHook runs when the main model has answered, before the reply is parsed; it may replace the reply's text.
type ChatModelCallAfterHook interface {
	ChatModelCallAfter(ctx context.Context, c *Call, req *exocortexv1.ChatModelCallAfterRequest) (*exocortexv1.ChatModelCallAfterResponse, error)
}

// UtilModelCallBeforeHook runs before a utility model call (history compression's summary); it may rewrite that call's system and user messages.
type UtilModelCallBeforeHook interface {
	UtilModelCallBefore(ctx context.Context, c *Call, req *exocortexv1.UtilModelCallBeforeRequest) (*exocortexv1.UtilModelCallBeforeResponse, error)
}

// UtilModelCallAfterHook runs when the utility model has answered; it may replace the answer.
type UtilModelCallAfterHook interface {
	UtilModelCallAfter(ctx context.Context, c *Call, req *exocortexv1.UtilModelCallAfterRequest) (*exocortexv1.UtilModelCallAfterResponse, error)
}

// ReasoningStreamChunkHook runs for each streamed piece of the model's reasoning.
type ReasoningStreamChunkHook interface {
	ReasoningStreamChunk(ctx context.Context, c *Call, req *exocortexv1.ReasoningStreamChunkRequest) (*exocortexv1.ReasoningStreamChunkResponse, error)
}

// ReasoningStreamHook runs with the reasoning so far, after each reasoning_stream_chunk.
type ReasoningStreamHook interface {
	ReasoningStream(ctx context.Context, c *Call, req *exocortexv1.ReasoningStreamRequest) (*exocortexv1.ReasoningStreamResponse, error)
}

// ReasoningStreamEndHook runs when the model's call is over, with its whole reasoning.
type ReasoningStreamEndHook interface {
	ReasoningStreamEnd(ctx context.Context, c *Call, req *exocortexv1.ReasoningStreamEndRequest) (*exocortexv1.ReasoningStreamEndResponse, error)
}

// ResponseStreamHook runs with the reply so far, after each response_stream_chunk.
type ResponseStreamHook interface {
	ResponseStream(ctx context.Context, c *Call, req *exocortexv1.ResponseStreamRequest) (*exocortexv1.ResponseStreamResponse, error)
}

// MessageLoopExceptionHook runs when an iteration fails with an error; it may mark it handled.
type MessageLoopExceptionHook interface {
	MessageLoopException(ctx context.Context, c *Call, req *exocortexv1.MessageLoopExceptionRequest) (*exocortexv1.MessageLoopExceptionResponse, error)
}

// ProcessChainEndHook runs when the top-level monologue's chain is finished, after monologue_end.
type ProcessChainEndHook interface {
	ProcessChainEnd(ctx context.Context, c *Call, req *exocortexv1.ProcessChainEndRequest) (*exocortexv1.ProcessChainEndResponse, error)
}

// HistAddToolResultHook runs when a tool's result is about to be added to the history; it may change the text stored.
type HistAddToolResultHook interface {
	HistAddToolResult(ctx context.Context, c *Call, req *exocortexv1.HistAddToolResultRequest) (*exocortexv1.HistAddToolResultResponse, error)
}

// ToolOutputUpdateHook runs for each piece of partial output a running tool reports; it may change what the operator sees.
type ToolOutputUpdateHook interface {
	ToolOutputUpdate(ctx context.Context, c *Call, req *exocortexv1.ToolOutputUpdateRequest) (*exocortexv1.ToolOutputUpdateResponse, error)
}

// TextEditorReadAfterHook runs after text_editor read a file; it may change what the model sees of the read.
type TextEditorReadAfterHook interface {
	TextEditorReadAfter(ctx context.Context, c *Call, req *exocortexv1.TextEditorReadAfterRequest) (*exocortexv1.TextEditorReadAfterResponse, error)
}

// TextEditorWriteBeforeHook runs before text_editor writes a file; it may change the content or refuse the write.
type TextEditorWriteBeforeHook interface {
	TextEditorWriteBefore(ctx context.Context, c *Call, req *exocortexv1.TextEditorWriteBeforeRequest) (*exocortexv1.TextEditorWriteBeforeResponse, error)
}

// TextEditorWriteAfterHook runs after text_editor wrote a file.
type TextEditorWriteAfterHook interface {
	TextEditorWriteAfter(ctx context.Context, c *Call, req *exocortexv1.TextEditorWriteAfterRequest) (*exocortexv1.TextEditorWriteAfterResponse, error)
}

// TextEditorPatchBeforeHook runs before text_editor patches a file; it may change the passage, its replacement, or refuse.
type TextEditorPatchBeforeHook interface {
	TextEditorPatchBefore(ctx context.Context, c *Call, req *exocortexv1.TextEditorPatchBeforeRequest) (*exocortexv1.TextEditorPatchBeforeResponse, error)
}

// TextEditorPatchAfterHook runs after text_editor patched a file.
type TextEditorPatchAfterHook interface {
	TextEditorPatchAfter(ctx context.Context, c *Call, req *exocortexv1.TextEditorPatchAfterRequest) (*exocortexv1.TextEditorPatchAfterResponse, error)
}

// EmbeddingModelChangedHook runs when the memory store was built with another embedding model than the configured one.
type EmbeddingModelChangedHook interface {
	EmbeddingModelChanged(ctx context.Context, c *Call, req *exocortexv1.EmbeddingModelChangedRequest) (*exocortexv1.EmbeddingModelChangedResponse, error)
}

// hookDef ties a protocol hook to the Go interface that handles it.
type hookDef struct {
	hook       exocortexv1.Hook
	implements func(Extension) bool
}

func is[I any](e Extension) bool { _, ok := e.(I); return ok }

// hookDefs lists every hook in enum order, which is also the order of an extension's
// entries in the manifest. A function, not a variable: no mutable package state.
func hookDefs() []hookDef {
	return []hookDef{
		{exocortexv1.Hook_HOOK_AGENT_INIT, is[AgentInitHook]},
		{exocortexv1.Hook_HOOK_MONOLOGUE_START, is[MonologueStartHook]},
		{exocortexv1.Hook_HOOK_HIST_ADD_BEFORE, is[HistAddBeforeHook]},
		{exocortexv1.Hook_HOOK_MESSAGE_LOOP_START, is[MessageLoopStartHook]},
		{exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE, is[MessageLoopPromptsBeforeHook]},
		{exocortexv1.Hook_HOOK_SYSTEM_PROMPT, is[SystemPromptHook]},
		{exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER, is[MessageLoopPromptsAfterHook]},
		{exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL, is[BeforeMainLLMCallHook]},
		{exocortexv1.Hook_HOOK_RESPONSE_STREAM_CHUNK, is[ResponseStreamChunkHook]},
		{exocortexv1.Hook_HOOK_RESPONSE_STREAM_END, is[ResponseStreamEndHook]},
		{exocortexv1.Hook_HOOK_ERROR_FORMAT, is[ErrorFormatHook]},
		{exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE, is[ToolExecuteBeforeHook]},
		{exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER, is[ToolExecuteAfterHook]},
		{exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, is[MessageLoopEndHook]},
		{exocortexv1.Hook_HOOK_MONOLOGUE_END, is[MonologueEndHook]},
		{exocortexv1.Hook_HOOK_CHAT_MODEL_CALL_BEFORE, is[ChatModelCallBeforeHook]},
		{exocortexv1.Hook_HOOK_CHAT_MODEL_CALL_AFTER, is[ChatModelCallAfterHook]},
		{exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_BEFORE, is[UtilModelCallBeforeHook]},
		{exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_AFTER, is[UtilModelCallAfterHook]},
		{exocortexv1.Hook_HOOK_REASONING_STREAM_CHUNK, is[ReasoningStreamChunkHook]},
		{exocortexv1.Hook_HOOK_REASONING_STREAM, is[ReasoningStreamHook]},
		{exocortexv1.Hook_HOOK_REASONING_STREAM_END, is[ReasoningStreamEndHook]},
		{exocortexv1.Hook_HOOK_RESPONSE_STREAM, is[ResponseStreamHook]},
		{exocortexv1.Hook_HOOK_MESSAGE_LOOP_EXCEPTION, is[MessageLoopExceptionHook]},
		{exocortexv1.Hook_HOOK_PROCESS_CHAIN_END, is[ProcessChainEndHook]},

		{exocortexv1.Hook_HOOK_HIST_ADD_TOOL_RESULT, is[HistAddToolResultHook]},
		{exocortexv1.Hook_HOOK_TOOL_OUTPUT_UPDATE, is[ToolOutputUpdateHook]},
		{exocortexv1.Hook_HOOK_TEXT_EDITOR_READ_AFTER, is[TextEditorReadAfterHook]},
		{exocortexv1.Hook_HOOK_TEXT_EDITOR_WRITE_BEFORE, is[TextEditorWriteBeforeHook]},
		{exocortexv1.Hook_HOOK_TEXT_EDITOR_WRITE_AFTER, is[TextEditorWriteAfterHook]},
		{exocortexv1.Hook_HOOK_TEXT_EDITOR_PATCH_BEFORE, is[TextEditorPatchBeforeHook]},
		{exocortexv1.Hook_HOOK_TEXT_EDITOR_PATCH_AFTER, is[TextEditorPatchAfterHook]},
		{exocortexv1.Hook_HOOK_EMBEDDING_MODEL_CHANGED, is[EmbeddingModelChangedHook]},
	}
}

// HookName is the snake_case name of a hook as the documentation and the logs use
// it: HOOK_MESSAGE_LOOP_END is "message_loop_end".
func HookName(h exocortexv1.Hook) string {
	return strings.ToLower(strings.TrimPrefix(h.String(), "HOOK_"))
}

// IsToolHook reports whether h fires for one tool call, so that Spec.ForTools
// limits it to calls of the tools named.
func IsToolHook(h exocortexv1.Hook) bool {
	switch h {
	case exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE, exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER,
		exocortexv1.Hook_HOOK_HIST_ADD_TOOL_RESULT, exocortexv1.Hook_HOOK_TOOL_OUTPUT_UPDATE:
		return true
	}
	return false
}

// IsPromptHook reports whether extensions at h may add prompt blocks: only the three
// prompt-assembly hooks' responses have a prompt_blocks field.
func IsPromptHook(h exocortexv1.Hook) bool {
	switch h {
	case exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE,
		exocortexv1.Hook_HOOK_SYSTEM_PROMPT,
		exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER:
		return true
	}
	return false
}
