// Package historyreaders is the fixture of TestHistoryScanFindsReaders: every
// way an extension can read, or declare, the conversation (this file) and the
// prompt so far (prompt.go).
package historyreaders

import (
	"context"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Declared reads the history and says so.
type Declared struct{}

func (e Declared) Spec() sdk.Spec {
	return sdk.Spec{Name: "declared", Hooks: []sdk.Hook{sdk.MonologueEnd(e)}, ReadsHistory: true}
}

func (Declared) MonologueEnd(_ context.Context, _ *sdk.Call, req *exocortexv1.MonologueEndRequest) (*exocortexv1.MonologueEndResponse, error) {
	_ = len(req.GetHistory())
	return nil, nil
}

// Undeclared reads the history without saying so.
type Undeclared struct{}

func (e Undeclared) Spec() sdk.Spec {
	return sdk.Spec{
		Name:  "undeclared",
		Hooks: []sdk.Hook{sdk.MessageLoopPromptsAfter(e)},
		Order: 1,
	}
}

func (Undeclared) MessageLoopPromptsAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	_ = req.History
	return nil, nil
}

// ViaHelper reads the prompt in a function it passes the request to.
type ViaHelper struct{}

func (e *ViaHelper) Spec() sdk.Spec {
	return sdk.Spec{Hooks: []sdk.Hook{sdk.BeforeMainLLMCall(e)}, Name: "via_helper"}
}

func (v *ViaHelper) BeforeMainLLMCall(_ context.Context, _ *sdk.Call, r *exocortexv1.BeforeMainLLMCallRequest) (*exocortexv1.BeforeMainLLMCallResponse, error) {
	_ = last(0, r)
	return nil, nil
}

func last(_ int, req *exocortexv1.BeforeMainLLMCallRequest) *exocortexv1.Message {
	return tail(req)
}

func tail(req *exocortexv1.BeforeMainLLMCallRequest) *exocortexv1.Message {
	if p := req.GetPrompt(); len(p) > 0 {
		return p[len(p)-1]
	}
	return nil
}

// Recent uses the context's recent messages, and its own request's other fields.
type Recent struct{}

func (e Recent) Spec() sdk.Spec {
	return sdk.Spec{Hooks: []sdk.Hook{sdk.MessageLoopPromptsBefore(e)}, Name: "recent"}
}

func (Recent) MessageLoopPromptsBefore(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
	_ = c.Context().GetInteractionHistory().GetRecentMessages()
	_ = req.GetIteration()
	return nil, nil
}

// Needless declares what it does not read.
type Needless struct{}

func (e Needless) Spec() sdk.Spec {
	return sdk.Spec{Name: "needless", Hooks: []sdk.Hook{sdk.MonologueEnd(e)}, ReadsHistory: true}
}

func (Needless) MonologueEnd(_ context.Context, _ *sdk.Call, req *exocortexv1.MonologueEndRequest) (*exocortexv1.MonologueEndResponse, error) {
	_ = req.GetFinalResponse()
	return nil, nil
}
