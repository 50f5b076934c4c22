package historyreaders

import (
	"context"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// PromptDeclared reads the system prompt so far and says so.
type PromptDeclared struct{}

func (e PromptDeclared) Spec() sdk.Spec {
	return sdk.Spec{Name: "prompt_declared", Hooks: []sdk.Hook{sdk.SystemPrompt(e)}, ReadsPrompt: true}
}

func (PromptDeclared) SystemPrompt(_ context.Context, _ *sdk.Call, req *exocortexv1.SystemPromptRequest) (*exocortexv1.SystemPromptResponse, error) {
	_ = len(req.GetSystemPrompt())
	return nil, nil
}

// TokensUndeclared measures the prompt so far without saying so.
type TokensUndeclared struct{}

func (e TokensUndeclared) Spec() sdk.Spec {
	return sdk.Spec{Hooks: []sdk.Hook{sdk.MessageLoopPromptsAfter(e)}, Name: "tokens_undeclared"}
}

func (TokensUndeclared) MessageLoopPromptsAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	_ = req.GetNumCtx()
	_ = req.PromptTokens
	return nil, nil
}

// ExtrasViaHelper reads the extras in a function it passes the request to.
type ExtrasViaHelper struct{}

func (e ExtrasViaHelper) Spec() sdk.Spec {
	return sdk.Spec{Hooks: []sdk.Hook{sdk.MessageLoopPromptsAfter(e)}, Name: "extras_via_helper"}
}

func (ExtrasViaHelper) MessageLoopPromptsAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	_ = titles(req)
	return nil, nil
}

func titles(req *exocortexv1.MessageLoopPromptsAfterRequest) []string {
	var out []string
	for _, b := range req.GetExtras() {
		out = append(out, b.GetTitle())
	}
	return out
}

// Mixed declares the conversation only, and reads it and the extras in one
// helper: each declaration is checked on its own.
type Mixed struct{}

func (e Mixed) Spec() sdk.Spec {
	return sdk.Spec{Name: "mixed", Hooks: []sdk.Hook{sdk.MessageLoopPromptsAfter(e)}, ReadsHistory: true}
}

func (Mixed) MessageLoopPromptsAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	_ = seenSoFar(req)
	return nil, nil
}

func seenSoFar(req *exocortexv1.MessageLoopPromptsAfterRequest) int {
	return len(req.GetHistory()) + len(req.Extras)
}

// Ungoverned reads what no declaration governs at its hooks: the tools at
// system_prompt, the context size and iteration at message_loop_prompts_after,
// the tokens of the final prompt at before_main_llm_call.
type Ungoverned struct{}

func (e Ungoverned) Spec() sdk.Spec {
	return sdk.Spec{Hooks: []sdk.Hook{sdk.SystemPrompt(e), sdk.MessageLoopPromptsAfter(e), sdk.BeforeMainLLMCall(e)}, Name: "ungoverned"}
}

func (Ungoverned) SystemPrompt(_ context.Context, _ *sdk.Call, req *exocortexv1.SystemPromptRequest) (*exocortexv1.SystemPromptResponse, error) {
	_ = req.GetTools()
	return nil, nil
}

func (Ungoverned) MessageLoopPromptsAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	_ = req.GetNumCtx() + req.GetIteration()
	return nil, nil
}

func (Ungoverned) BeforeMainLLMCall(_ context.Context, _ *sdk.Call, req *exocortexv1.BeforeMainLLMCallRequest) (*exocortexv1.BeforeMainLLMCallResponse, error) {
	_ = req.GetPromptTokens() + req.NumCtx
	return nil, nil
}

// PromptNeedless declares the prompt so far, but reads only the context size.
type PromptNeedless struct{}

func (e PromptNeedless) Spec() sdk.Spec {
	return sdk.Spec{Name: "prompt_needless", Hooks: []sdk.Hook{sdk.MessageLoopPromptsAfter(e)}, ReadsPrompt: true}
}

func (PromptNeedless) MessageLoopPromptsAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	_ = req.GetNumCtx()
	return nil, nil
}
