package sdk

import (
	"context"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// The Plugin service's hook methods: each finds the extension named in the HookCall
// and calls its method for the hook through handle.

func (s *server) AgentInit(ctx context.Context, req *exocortexv1.AgentInitRequest) (*exocortexv1.AgentInitResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_AGENT_INIT, req, func(e Extension, c *Call) (*exocortexv1.AgentInitResponse, error) {
		return e.(AgentInitHook).AgentInit(ctx, c, req)
	})
}

func (s *server) MonologueStart(ctx context.Context, req *exocortexv1.MonologueStartRequest) (*exocortexv1.MonologueStartResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_MONOLOGUE_START, req, func(e Extension, c *Call) (*exocortexv1.MonologueStartResponse, error) {
		return e.(MonologueStartHook).MonologueStart(ctx, c, req)
	})
}

func (s *server) HistAddBefore(ctx context.Context, req *exocortexv1.HistAddBeforeRequest) (*exocortexv1.HistAddBeforeResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_HIST_ADD_BEFORE, req, func(e Extension, c *Call) (*exocortexv1.HistAddBeforeResponse, error) {
		return e.(HistAddBeforeHook).HistAddBefore(ctx, c, req)
	})
}

func (s *server) MessageLoopStart(ctx context.Context, req *exocortexv1.MessageLoopStartRequest) (*exocortexv1.MessageLoopStartResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_MESSAGE_LOOP_START, req, func(e Extension, c *Call) (*exocortexv1.MessageLoopStartResponse, error) {
		return e.(MessageLoopStartHook).MessageLoopStart(ctx, c, req)
	})
}

func (s *server) MessageLoopPromptsBefore(ctx context.Context, req *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE, req, func(e Extension, c *Call) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
		return e.(MessageLoopPromptsBeforeHook).MessageLoopPromptsBefore(ctx, c, req)
	})
}

func (s *server) SystemPrompt(ctx context.Context, req *exocortexv1.SystemPromptRequest) (*exocortexv1.SystemPromptResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_SYSTEM_PROMPT, req, func(e Extension, c *Call) (*exocortexv1.SystemPromptResponse, error) {
		return e.(SystemPromptHook).SystemPrompt(ctx, c, req)
	})
}

func (s *server) MessageLoopPromptsAfter(ctx context.Context, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER, req, func(e Extension, c *Call) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
		return e.(MessageLoopPromptsAfterHook).MessageLoopPromptsAfter(ctx, c, req)
	})
}

func (s *server) BeforeMainLLMCall(ctx context.Context, req *exocortexv1.BeforeMainLLMCallRequest) (*exocortexv1.BeforeMainLLMCallResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL, req, func(e Extension, c *Call) (*exocortexv1.BeforeMainLLMCallResponse, error) {
		return e.(BeforeMainLLMCallHook).BeforeMainLLMCall(ctx, c, req)
	})
}

func (s *server) ResponseStreamChunk(ctx context.Context, req *exocortexv1.ResponseStreamChunkRequest) (*exocortexv1.ResponseStreamChunkResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_RESPONSE_STREAM_CHUNK, req, func(e Extension, c *Call) (*exocortexv1.ResponseStreamChunkResponse, error) {
		return e.(ResponseStreamChunkHook).ResponseStreamChunk(ctx, c, req)
	})
}

func (s *server) ResponseStreamEnd(ctx context.Context, req *exocortexv1.ResponseStreamEndRequest) (*exocortexv1.ResponseStreamEndResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_RESPONSE_STREAM_END, req, func(e Extension, c *Call) (*exocortexv1.ResponseStreamEndResponse, error) {
		return e.(ResponseStreamEndHook).ResponseStreamEnd(ctx, c, req)
	})
}

func (s *server) ErrorFormat(ctx context.Context, req *exocortexv1.ErrorFormatRequest) (*exocortexv1.ErrorFormatResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_ERROR_FORMAT, req, func(e Extension, c *Call) (*exocortexv1.ErrorFormatResponse, error) {
		return e.(ErrorFormatHook).ErrorFormat(ctx, c, req)
	})
}

func (s *server) ToolExecuteBefore(ctx context.Context, req *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE, req, func(e Extension, c *Call) (*exocortexv1.ToolExecuteBeforeResponse, error) {
		return e.(ToolExecuteBeforeHook).ToolExecuteBefore(ctx, c, req)
	})
}

func (s *server) ToolExecuteAfter(ctx context.Context, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER, req, func(e Extension, c *Call) (*exocortexv1.ToolExecuteAfterResponse, error) {
		return e.(ToolExecuteAfterHook).ToolExecuteAfter(ctx, c, req)
	})
}

func (s *server) MessageLoopEnd(ctx context.Context, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, req, func(e Extension, c *Call) (*exocortexv1.MessageLoopEndResponse, error) {
		return e.(MessageLoopEndHook).MessageLoopEnd(ctx, c, req)
	})
}

func (s *server) MonologueEnd(ctx context.Context, req *exocortexv1.MonologueEndRequest) (*exocortexv1.MonologueEndResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_MONOLOGUE_END, req, func(e Extension, c *Call) (*exocortexv1.MonologueEndResponse, error) {
		return e.(MonologueEndHook).MonologueEnd(ctx, c, req)
	})
}

func (s *server) ChatModelCallBefore(ctx context.Context, req *exocortexv1.ChatModelCallBeforeRequest) (*exocortexv1.ChatModelCallBeforeResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_CHAT_MODEL_CALL_BEFORE, req, func(e Extension, c *Call) (*exocortexv1.ChatModelCallBeforeResponse, error) {
		return e.(ChatModelCallBeforeHook).ChatModelCallBefore(ctx, c, req)
	})
}

func (s *server) ChatModelCallAfter(ctx context.Context, req *exocortexv1.ChatModelCallAfterRequest) (*exocortexv1.ChatModelCallAfterResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_CHAT_MODEL_CALL_AFTER, req, func(e Extension, c *Call) (*exocortexv1.ChatModelCallAfterResponse, error) {
		return e.(ChatModelCallAfterHook).ChatModelCallAfter(ctx, c, req)
	})
}

func (s *server) UtilModelCallBefore(ctx context.Context, req *exocortexv1.UtilModelCallBeforeRequest) (*exocortexv1.UtilModelCallBeforeResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_BEFORE, req, func(e Extension, c *Call) (*exocortexv1.UtilModelCallBeforeResponse, error) {
		return e.(UtilModelCallBeforeHook).UtilModelCallBefore(ctx, c, req)
	})
}

func (s *server) UtilModelCallAfter(ctx context.Context, req *exocortexv1.UtilModelCallAfterRequest) (*exocortexv1.UtilModelCallAfterResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_AFTER, req, func(e Extension, c *Call) (*exocortexv1.UtilModelCallAfterResponse, error) {
		return e.(UtilModelCallAfterHook).UtilModelCallAfter(ctx, c, req)
	})
}

func (s *server) ReasoningStreamChunk(ctx context.Context, req *exocortexv1.ReasoningStreamChunkRequest) (*exocortexv1.ReasoningStreamChunkResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_REASONING_STREAM_CHUNK, req, func(e Extension, c *Call) (*exocortexv1.ReasoningStreamChunkResponse, error) {
		return e.(ReasoningStreamChunkHook).ReasoningStreamChunk(ctx, c, req)
	})
}

func (s *server) ReasoningStream(ctx context.Context, req *exocortexv1.ReasoningStreamRequest) (*exocortexv1.ReasoningStreamResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_REASONING_STREAM, req, func(e Extension, c *Call) (*exocortexv1.ReasoningStreamResponse, error) {
		return e.(ReasoningStreamHook).ReasoningStream(ctx, c, req)
	})
}

func (s *server) ReasoningStreamEnd(ctx context.Context, req *exocortexv1.ReasoningStreamEndRequest) (*exocortexv1.ReasoningStreamEndResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_REASONING_STREAM_END, req, func(e Extension, c *Call) (*exocortexv1.ReasoningStreamEndResponse, error) {
		return e.(ReasoningStreamEndHook).ReasoningStreamEnd(ctx, c, req)
	})
}

func (s *server) ResponseStream(ctx context.Context, req *exocortexv1.ResponseStreamRequest) (*exocortexv1.ResponseStreamResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_RESPONSE_STREAM, req, func(e Extension, c *Call) (*exocortexv1.ResponseStreamResponse, error) {
		return e.(ResponseStreamHook).ResponseStream(ctx, c, req)
	})
}

func (s *server) MessageLoopException(ctx context.Context, req *exocortexv1.MessageLoopExceptionRequest) (*exocortexv1.MessageLoopExceptionResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_MESSAGE_LOOP_EXCEPTION, req, func(e Extension, c *Call) (*exocortexv1.MessageLoopExceptionResponse, error) {
		return e.(MessageLoopExceptionHook).MessageLoopException(ctx, c, req)
	})
}

func (s *server) ProcessChainEnd(ctx context.Context, req *exocortexv1.ProcessChainEndRequest) (*exocortexv1.ProcessChainEndResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_PROCESS_CHAIN_END, req, func(e Extension, c *Call) (*exocortexv1.ProcessChainEndResponse, error) {
		return e.(ProcessChainEndHook).ProcessChainEnd(ctx, c, req)
	})
}

func (s *server) HistAddToolResult(ctx context.Context, req *exocortexv1.HistAddToolResultRequest) (*exocortexv1.HistAddToolResultResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_HIST_ADD_TOOL_RESULT, req, func(e Extension, c *Call) (*exocortexv1.HistAddToolResultResponse, error) {
		return e.(HistAddToolResultHook).HistAddToolResult(ctx, c, req)
	})
}

func (s *server) ToolOutputUpdate(ctx context.Context, req *exocortexv1.ToolOutputUpdateRequest) (*exocortexv1.ToolOutputUpdateResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_TOOL_OUTPUT_UPDATE, req, func(e Extension, c *Call) (*exocortexv1.ToolOutputUpdateResponse, error) {
		return e.(ToolOutputUpdateHook).ToolOutputUpdate(ctx, c, req)
	})
}

func (s *server) TextEditorReadAfter(ctx context.Context, req *exocortexv1.TextEditorReadAfterRequest) (*exocortexv1.TextEditorReadAfterResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_TEXT_EDITOR_READ_AFTER, req, func(e Extension, c *Call) (*exocortexv1.TextEditorReadAfterResponse, error) {
		return e.(TextEditorReadAfterHook).TextEditorReadAfter(ctx, c, req)
	})
}

func (s *server) TextEditorWriteBefore(ctx context.Context, req *exocortexv1.TextEditorWriteBeforeRequest) (*exocortexv1.TextEditorWriteBeforeResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_TEXT_EDITOR_WRITE_BEFORE, req, func(e Extension, c *Call) (*exocortexv1.TextEditorWriteBeforeResponse, error) {
		return e.(TextEditorWriteBeforeHook).TextEditorWriteBefore(ctx, c, req)
	})
}

func (s *server) TextEditorWriteAfter(ctx context.Context, req *exocortexv1.TextEditorWriteAfterRequest) (*exocortexv1.TextEditorWriteAfterResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_TEXT_EDITOR_WRITE_AFTER, req, func(e Extension, c *Call) (*exocortexv1.TextEditorWriteAfterResponse, error) {
		return e.(TextEditorWriteAfterHook).TextEditorWriteAfter(ctx, c, req)
	})
}

func (s *server) TextEditorPatchBefore(ctx context.Context, req *exocortexv1.TextEditorPatchBeforeRequest) (*exocortexv1.TextEditorPatchBeforeResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_TEXT_EDITOR_PATCH_BEFORE, req, func(e Extension, c *Call) (*exocortexv1.TextEditorPatchBeforeResponse, error) {
		return e.(TextEditorPatchBeforeHook).TextEditorPatchBefore(ctx, c, req)
	})
}

func (s *server) TextEditorPatchAfter(ctx context.Context, req *exocortexv1.TextEditorPatchAfterRequest) (*exocortexv1.TextEditorPatchAfterResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_TEXT_EDITOR_PATCH_AFTER, req, func(e Extension, c *Call) (*exocortexv1.TextEditorPatchAfterResponse, error) {
		return e.(TextEditorPatchAfterHook).TextEditorPatchAfter(ctx, c, req)
	})
}

func (s *server) EmbeddingModelChanged(ctx context.Context, req *exocortexv1.EmbeddingModelChangedRequest) (*exocortexv1.EmbeddingModelChangedResponse, error) {
	return handle(s, exocortexv1.Hook_HOOK_EMBEDDING_MODEL_CHANGED, req, func(e Extension, c *Call) (*exocortexv1.EmbeddingModelChangedResponse, error) {
		return e.(EmbeddingModelChangedHook).EmbeddingModelChanged(ctx, c, req)
	})
}
