// Command nullsuite serves a built-in plugin's extensions with their exact
// declarations (names, hooks, orders, keys read and written) but methods that do
// nothing. The suite benchmark runs it beside the real plugins: the difference is
// the extensions' own work, the rest is the cost of dispatching the calls.
//
//	nullsuite NAME
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/exocortex/exocortex/extensions/builtin"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

func main() {
	p, ok := builtin.Plugins()[os.Args[len(os.Args)-1]]
	if !ok {
		fmt.Fprintln(os.Stderr, "nullsuite: no built-in plugin", os.Args[len(os.Args)-1])
		os.Exit(2)
	}
	var exts []sdk.Extension
	for _, e := range p.Extensions {
		s := e.Spec()
		s.HookOrder = nil
		for _, h := range hooksOf(e) {
			hs := s
			if o, ok := e.Spec().HookOrder[h]; ok {
				hs.Order = o
			}
			exts = append(exts, nullAt(h, hs))
		}
	}
	sdk.Serve(sdk.Plugin{Name: p.Name, Version: p.Version, Extensions: exts, Files: p.Files})
}

func hooksOf(e sdk.Extension) []exocortexv1.Hook {
	var hs []exocortexv1.Hook
	for _, h := range e.Spec().Hooks {
		hs = append(hs, h.ID())
	}
	return hs
}

type spec struct{ s sdk.Spec }

func (n spec) Spec() sdk.Spec { return n.s }

// at is n declaring the one hook h (a no-op handler's).
func (n spec) at(h sdk.Hook) spec { n.s.Hooks = []sdk.Hook{h}; return n }

type (
	nHist   struct{ spec }
	nStart  struct{ spec }
	nBefore struct{ spec }
	nSys    struct{ spec }
	nAfter  struct{ spec }
	nLLM    struct{ spec }
	nChunk  struct{ spec }
	nEnd    struct{ spec }
	nFormat struct{ spec }
	nTB     struct{ spec }
	nTA     struct{ spec }
	nLEnd   struct{ spec }
	nMEnd   struct{ spec }
)

func (nHist) HistAddBefore(context.Context, *sdk.Call, *exocortexv1.HistAddBeforeRequest) (*exocortexv1.HistAddBeforeResponse, error) {
	return nil, nil
}
func (nStart) MessageLoopStart(context.Context, *sdk.Call, *exocortexv1.MessageLoopStartRequest) (*exocortexv1.MessageLoopStartResponse, error) {
	return nil, nil
}
func (nBefore) MessageLoopPromptsBefore(context.Context, *sdk.Call, *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
	return nil, nil
}
func (nSys) SystemPrompt(context.Context, *sdk.Call, *exocortexv1.SystemPromptRequest) (*exocortexv1.SystemPromptResponse, error) {
	return nil, nil
}
func (nAfter) MessageLoopPromptsAfter(context.Context, *sdk.Call, *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	return nil, nil
}
func (nLLM) BeforeMainLLMCall(context.Context, *sdk.Call, *exocortexv1.BeforeMainLLMCallRequest) (*exocortexv1.BeforeMainLLMCallResponse, error) {
	return nil, nil
}
func (nChunk) ResponseStreamChunk(context.Context, *sdk.Call, *exocortexv1.ResponseStreamChunkRequest) (*exocortexv1.ResponseStreamChunkResponse, error) {
	return nil, nil
}
func (nEnd) ResponseStreamEnd(context.Context, *sdk.Call, *exocortexv1.ResponseStreamEndRequest) (*exocortexv1.ResponseStreamEndResponse, error) {
	return nil, nil
}
func (nFormat) ErrorFormat(context.Context, *sdk.Call, *exocortexv1.ErrorFormatRequest) (*exocortexv1.ErrorFormatResponse, error) {
	return nil, nil
}
func (nTB) ToolExecuteBefore(context.Context, *sdk.Call, *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error) {
	return nil, nil
}
func (nTA) ToolExecuteAfter(context.Context, *sdk.Call, *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	return nil, nil
}
func (nLEnd) MessageLoopEnd(context.Context, *sdk.Call, *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	return nil, nil
}
func (nMEnd) MonologueEnd(context.Context, *sdk.Call, *exocortexv1.MonologueEndRequest) (*exocortexv1.MonologueEndResponse, error) {
	return nil, nil
}

// nullAt returns a no-op extension at hook h with spec s.
func nullAt(h exocortexv1.Hook, s sdk.Spec) sdk.Extension {
	sp := spec{s}
	switch h {
	case exocortexv1.Hook_HOOK_HIST_ADD_BEFORE:
		return nHist{sp.at(sdk.HistAddBefore(nHist{}))}
	case exocortexv1.Hook_HOOK_MESSAGE_LOOP_START:
		return nStart{sp.at(sdk.MessageLoopStart(nStart{}))}
	case exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE:
		return nBefore{sp.at(sdk.MessageLoopPromptsBefore(nBefore{}))}
	case exocortexv1.Hook_HOOK_SYSTEM_PROMPT:
		return nSys{sp.at(sdk.SystemPrompt(nSys{}))}
	case exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER:
		return nAfter{sp.at(sdk.MessageLoopPromptsAfter(nAfter{}))}
	case exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL:
		return nLLM{sp.at(sdk.BeforeMainLLMCall(nLLM{}))}
	case exocortexv1.Hook_HOOK_RESPONSE_STREAM_CHUNK:
		return nChunk{sp.at(sdk.ResponseStreamChunk(nChunk{}))}
	case exocortexv1.Hook_HOOK_RESPONSE_STREAM_END:
		return nEnd{sp.at(sdk.ResponseStreamEnd(nEnd{}))}
	case exocortexv1.Hook_HOOK_ERROR_FORMAT:
		return nFormat{sp.at(sdk.ErrorFormat(nFormat{}))}
	case exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE:
		return nTB{sp.at(sdk.ToolExecuteBefore(nTB{}))}
	case exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER:
		return nTA{sp.at(sdk.ToolExecuteAfter(nTA{}))}
	case exocortexv1.Hook_HOOK_MESSAGE_LOOP_END:
		return nLEnd{sp.at(sdk.MessageLoopEnd(nLEnd{}))}
	}
	return nMEnd{sp.at(sdk.MonologueEnd(nMEnd{}))}
}
