// Command goplugin is the conformance plugin written with the Go SDK. The Python
// plugin in ../pyplugin is the same plugin written with the Python SDK; the suite in
// sdk/conformance runs against both and expects the same answers.
//
// Extensions (what each is for in the suite):
//
//	echo              every hook: answers each from its request, writes conformance_seen
//	counter           typed state: failure_tracker, loop_active, the plugin key
//	nosy              undeclared reads and writes (reply "read", "write", "reset")
//	repeat_watch      signals: reacts to a message carrying signals.Repeat
//	fragile           errors (reply "boom", "fail", "status")
//	undeclared_blocks prompt blocks without InjectsPrompt
//	sleepy            timeouts (user message "sleep")
//	relay_a, _b, _c   batches (message_loop_end, after fragile): state passed along
//	                  a batch, and each extension's own copy of the request
//	prompt_reader,    batches (system_prompt, message_loop_prompts_after): the
//	prompt_skimmer    prompt so far reaches only the extension declaring ReadsPrompt
//
// Tools: shout, failing, panicky, stateful, delegate (the host's services).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/signals"
)

func seen() sdk.Key[*wrapperspb.StringValue] {
	return sdk.NewKey[*wrapperspb.StringValue]("conformance_seen", exocortexv1.Scope_SCOPE_SESSION,
		"The last hook echo answered, with the call's message id.")
}
func tracker() sdk.Key[*exocortexv1.FailureTracker] { return sdk.KeyOf[*exocortexv1.FailureTracker]() }
func loopActive() sdk.Key[*exocortexv1.LoopActive]  { return sdk.KeyOf[*exocortexv1.LoopActive]() }

func ptr(s string) *string { return &s }

// echo answers every hook from its request.
type echo struct{}

func (e echo) Spec() sdk.Spec {
	return sdk.Spec{
		Name:          "echo",
		Hooks:         []sdk.Hook{sdk.AgentInit(e), sdk.MonologueStart(e), sdk.HistAddBefore(e), sdk.MessageLoopStart(e), sdk.MessageLoopPromptsBefore(e), sdk.SystemPrompt(e), sdk.MessageLoopPromptsAfter(e), sdk.BeforeMainLLMCall(e), sdk.ResponseStreamChunk(e), sdk.ResponseStreamEnd(e), sdk.ErrorFormat(e), sdk.ToolExecuteBefore(e), sdk.ToolExecuteAfter(e), sdk.MessageLoopEnd(e), sdk.MonologueEnd(e), sdk.ChatModelCallBefore(e), sdk.ChatModelCallAfter(e), sdk.UtilModelCallBefore(e), sdk.UtilModelCallAfter(e), sdk.ReasoningStreamChunk(e), sdk.ReasoningStream(e), sdk.ReasoningStreamEnd(e), sdk.ResponseStream(e), sdk.MessageLoopException(e), sdk.ProcessChainEnd(e), sdk.HistAddToolResult(e), sdk.ToolOutputUpdate(e), sdk.TextEditorReadAfter(e), sdk.TextEditorWriteBefore(e), sdk.TextEditorWriteAfter(e), sdk.TextEditorPatchBefore(e), sdk.TextEditorPatchAfter(e), sdk.EmbeddingModelChanged(e), sdk.HistoryCompressBefore(e), sdk.ToolApprovalRequest(e), sdk.OperatorNotification(e)},
		Order:         10,
		HookOrder:     map[exocortexv1.Hook]int{exocortexv1.Hook_HOOK_SYSTEM_PROMPT: 15},
		Writes:        []sdk.KeyRef{seen()},
		InjectsPrompt: true,
		ReadsHistory:  true,
		ReadsPrompt:   true,
		Description:   "Answers every hook from its request.",
	}
}

// mark records the hook and the call's message id in conformance_seen.
func mark(c *sdk.Call) {
	seen().Set(c, wrapperspb.String(sdk.HookName(c.Hook())+":"+c.Context().GetMessageId()))
}

func block(format string, args ...any) []*exocortexv1.PromptBlock {
	return []*exocortexv1.PromptBlock{{Title: "ECHO", Content: fmt.Sprintf(format, args...)}}
}

func (echo) AgentInit(_ context.Context, c *sdk.Call, _ *exocortexv1.AgentInitRequest) (*exocortexv1.AgentInitResponse, error) {
	mark(c)
	return nil, nil
}

func (echo) MonologueStart(_ context.Context, c *sdk.Call, _ *exocortexv1.MonologueStartRequest) (*exocortexv1.MonologueStartResponse, error) {
	mark(c)
	return nil, nil
}

func (echo) HistAddBefore(_ context.Context, c *sdk.Call, req *exocortexv1.HistAddBeforeRequest) (*exocortexv1.HistAddBeforeResponse, error) {
	mark(c)
	return &exocortexv1.HistAddBeforeResponse{Content: ptr("echo:" + req.GetMessage().GetContent())}, nil
}

func (echo) MessageLoopStart(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopStartRequest) (*exocortexv1.MessageLoopStartResponse, error) {
	mark(c)
	return nil, nil
}

func (echo) MessageLoopPromptsBefore(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
	mark(c)
	return &exocortexv1.MessageLoopPromptsBeforeResponse{PromptBlocks: block("before %d %d", req.GetIteration(), len(req.GetHistory()))}, nil
}

func (echo) SystemPrompt(_ context.Context, c *sdk.Call, req *exocortexv1.SystemPromptRequest) (*exocortexv1.SystemPromptResponse, error) {
	mark(c)
	var tools []string
	for _, t := range req.GetTools() {
		tools = append(tools, t.GetName())
	}
	return &exocortexv1.SystemPromptResponse{PromptBlocks: block("system %s [%s]", req.GetSystemPrompt(), strings.Join(tools, ","))}, nil
}

func (echo) MessageLoopPromptsAfter(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	mark(c)
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: block("after %d %d %d/%d",
		req.GetIteration(), len(req.GetExtras()), req.GetPromptTokens(), req.GetNumCtx())}, nil
}

func (echo) BeforeMainLLMCall(_ context.Context, c *sdk.Call, _ *exocortexv1.BeforeMainLLMCallRequest) (*exocortexv1.BeforeMainLLMCallResponse, error) {
	mark(c)
	return nil, nil
}

func (echo) ResponseStreamChunk(_ context.Context, c *sdk.Call, req *exocortexv1.ResponseStreamChunkRequest) (*exocortexv1.ResponseStreamChunkResponse, error) {
	mark(c)
	return &exocortexv1.ResponseStreamChunkResponse{Display: ptr(strings.ToUpper(req.GetText()) + "|" + req.GetDelta())}, nil
}

func (echo) ResponseStreamEnd(_ context.Context, c *sdk.Call, req *exocortexv1.ResponseStreamEndRequest) (*exocortexv1.ResponseStreamEndResponse, error) {
	mark(c)
	return &exocortexv1.ResponseStreamEndResponse{Display: ptr("end:" + req.GetText())}, nil
}

func (echo) ErrorFormat(_ context.Context, c *sdk.Call, req *exocortexv1.ErrorFormatRequest) (*exocortexv1.ErrorFormatResponse, error) {
	mark(c)
	return &exocortexv1.ErrorFormatResponse{Correction: ptr(fmt.Sprintf("fix %s (%s, tool %q)", req.GetError(), req.GetSignal(), req.GetToolName()))}, nil
}

func (echo) ToolExecuteBefore(_ context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error) {
	mark(c)
	tc := req.GetToolCall()
	if tc.GetName() == "forbidden" {
		return &exocortexv1.ToolExecuteBeforeResponse{Block: &exocortexv1.ToolBlock{
			Reason: "forbidden by echo", NeedsApproval: true, Action: tc.GetName() + " " + tc.GetArgsJson()}}, nil
	}
	return &exocortexv1.ToolExecuteBeforeResponse{ArgsJson: ptr(fmt.Sprintf(`{"wrapped":%s}`, tc.GetArgsJson()))}, nil
}

func (echo) ToolExecuteAfter(_ context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	mark(c)
	return &exocortexv1.ToolExecuteAfterResponse{
		Annotations: []string{"echo:" + req.GetToolCall().GetName()},
		Content:     ptr(strings.ToUpper(req.GetResult().GetContent())),
	}, nil
}

func (echo) MessageLoopEnd(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	mark(c)
	resp := &exocortexv1.MessageLoopEndResponse{Intervention: ptr(fmt.Sprintf("end %d %s %d", req.GetIteration(), req.GetReply(), len(req.GetAdded())))}
	if req.GetReply() == "stop" {
		resp.Stop = ptr("echo was asked to stop")
	}
	return resp, nil
}

func (echo) MonologueEnd(_ context.Context, c *sdk.Call, req *exocortexv1.MonologueEndRequest) (*exocortexv1.MonologueEndResponse, error) {
	mark(c)
	return &exocortexv1.MonologueEndResponse{Notices: []string{"final:" + req.GetFinalResponse(), "stop:" + req.GetStopReason()}}, nil
}

func (echo) ChatModelCallBefore(_ context.Context, c *sdk.Call, _ *exocortexv1.ChatModelCallBeforeRequest) (*exocortexv1.ChatModelCallBeforeResponse, error) {
	mark(c)
	return nil, nil
}

func (echo) ChatModelCallAfter(_ context.Context, c *sdk.Call, req *exocortexv1.ChatModelCallAfterRequest) (*exocortexv1.ChatModelCallAfterResponse, error) {
	mark(c)
	return &exocortexv1.ChatModelCallAfterResponse{Response: ptr(fmt.Sprintf("%s (after %s, thought %q)", req.GetResponse(), req.GetModel(), req.GetReasoning()))}, nil
}

func (echo) UtilModelCallBefore(_ context.Context, c *sdk.Call, req *exocortexv1.UtilModelCallBeforeRequest) (*exocortexv1.UtilModelCallBeforeResponse, error) {
	mark(c)
	return &exocortexv1.UtilModelCallBeforeResponse{System: ptr(req.GetSystem() + " Be terse."), Message: ptr(req.GetPurpose() + ": " + req.GetMessage())}, nil
}

func (echo) UtilModelCallAfter(_ context.Context, c *sdk.Call, req *exocortexv1.UtilModelCallAfterRequest) (*exocortexv1.UtilModelCallAfterResponse, error) {
	mark(c)
	return &exocortexv1.UtilModelCallAfterResponse{Response: ptr(strings.ToUpper(req.GetResponse()))}, nil
}

func (echo) ReasoningStreamChunk(_ context.Context, c *sdk.Call, req *exocortexv1.ReasoningStreamChunkRequest) (*exocortexv1.ReasoningStreamChunkResponse, error) {
	mark(c)
	return &exocortexv1.ReasoningStreamChunkResponse{Display: ptr(strings.Repeat("*", len(req.GetDelta())) + "|" + req.GetText())}, nil
}

func (echo) ReasoningStream(_ context.Context, c *sdk.Call, _ *exocortexv1.ReasoningStreamRequest) (*exocortexv1.ReasoningStreamResponse, error) {
	mark(c)
	return nil, nil
}

func (echo) ReasoningStreamEnd(_ context.Context, c *sdk.Call, req *exocortexv1.ReasoningStreamEndRequest) (*exocortexv1.ReasoningStreamEndResponse, error) {
	mark(c)
	return &exocortexv1.ReasoningStreamEndResponse{Display: ptr("thought:" + req.GetText())}, nil
}

func (echo) ResponseStream(_ context.Context, c *sdk.Call, _ *exocortexv1.ResponseStreamRequest) (*exocortexv1.ResponseStreamResponse, error) {
	mark(c)
	return nil, nil
}

func (echo) MessageLoopException(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopExceptionRequest) (*exocortexv1.MessageLoopExceptionResponse, error) {
	mark(c)
	return &exocortexv1.MessageLoopExceptionResponse{Handled: req.GetStage() == "model"}, nil
}

func (echo) ProcessChainEnd(_ context.Context, c *sdk.Call, _ *exocortexv1.ProcessChainEndRequest) (*exocortexv1.ProcessChainEndResponse, error) {
	mark(c)
	return nil, nil
}

func (echo) HistAddToolResult(_ context.Context, c *sdk.Call, req *exocortexv1.HistAddToolResultRequest) (*exocortexv1.HistAddToolResultResponse, error) {
	mark(c)
	return &exocortexv1.HistAddToolResultResponse{Text: ptr(fmt.Sprintf("stored %s: %s", req.GetToolCall().GetName(), req.GetText()))}, nil
}

func (echo) ToolOutputUpdate(_ context.Context, c *sdk.Call, req *exocortexv1.ToolOutputUpdateRequest) (*exocortexv1.ToolOutputUpdateResponse, error) {
	mark(c)
	return &exocortexv1.ToolOutputUpdateResponse{Display: ptr(req.GetDelta() + "|" + strings.ToUpper(req.GetOutput()))}, nil
}

func (echo) TextEditorReadAfter(_ context.Context, c *sdk.Call, req *exocortexv1.TextEditorReadAfterRequest) (*exocortexv1.TextEditorReadAfterResponse, error) {
	mark(c)
	return &exocortexv1.TextEditorReadAfterResponse{Content: ptr(fmt.Sprintf("read %s %d-%d: %s", req.GetPath(), req.GetLineFrom(), req.GetLineTo(), req.GetContent()))}, nil
}

func (echo) TextEditorWriteBefore(_ context.Context, c *sdk.Call, req *exocortexv1.TextEditorWriteBeforeRequest) (*exocortexv1.TextEditorWriteBeforeResponse, error) {
	mark(c)
	if req.GetPath() == "forbidden.txt" {
		return &exocortexv1.TextEditorWriteBeforeResponse{Refuse: ptr("echo refuses " + req.GetPath())}, nil
	}
	return &exocortexv1.TextEditorWriteBeforeResponse{Content: ptr(strings.ToUpper(req.GetContent()))}, nil
}

func (echo) TextEditorWriteAfter(_ context.Context, c *sdk.Call, _ *exocortexv1.TextEditorWriteAfterRequest) (*exocortexv1.TextEditorWriteAfterResponse, error) {
	mark(c)
	return nil, nil
}

func (echo) TextEditorPatchBefore(_ context.Context, c *sdk.Call, req *exocortexv1.TextEditorPatchBeforeRequest) (*exocortexv1.TextEditorPatchBeforeResponse, error) {
	mark(c)
	if req.GetPath() == "forbidden.txt" {
		return &exocortexv1.TextEditorPatchBeforeResponse{Refuse: ptr("echo refuses " + req.GetPath())}, nil
	}
	return &exocortexv1.TextEditorPatchBeforeResponse{NewText: ptr(strings.ToUpper(req.GetNewText()))}, nil
}

func (echo) TextEditorPatchAfter(_ context.Context, c *sdk.Call, _ *exocortexv1.TextEditorPatchAfterRequest) (*exocortexv1.TextEditorPatchAfterResponse, error) {
	mark(c)
	return nil, nil
}

func (echo) EmbeddingModelChanged(_ context.Context, c *sdk.Call, _ *exocortexv1.EmbeddingModelChangedRequest) (*exocortexv1.EmbeddingModelChangedResponse, error) {
	mark(c)
	return nil, nil
}

func (echo) HistoryCompressBefore(_ context.Context, c *sdk.Call, req *exocortexv1.HistoryCompressBeforeRequest) (*exocortexv1.HistoryCompressBeforeResponse, error) {
	mark(c)
	return &exocortexv1.HistoryCompressBeforeResponse{Keep: []string{fmt.Sprintf("keep %d %s", len(req.GetLeaving()), req.GetTrigger())}}, nil
}

func (echo) ToolApprovalRequest(_ context.Context, c *sdk.Call, req *exocortexv1.ToolApprovalRequestRequest) (*exocortexv1.ToolApprovalRequestResponse, error) {
	mark(c)
	if req.GetToolCall().GetName() == "forbidden" {
		r := "echo refuses forbidden in " + req.GetMode()
		return &exocortexv1.ToolApprovalRequestResponse{Refuse: &r}, nil
	}
	return &exocortexv1.ToolApprovalRequestResponse{Allow: true}, nil
}

func (echo) OperatorNotification(_ context.Context, c *sdk.Call, _ *exocortexv1.OperatorNotificationRequest) (*exocortexv1.OperatorNotificationResponse, error) {
	mark(c)
	return nil, nil
}

// counter counts consecutive failures per tool and clears loop_active.
type counter struct{}

func (e counter) Spec() sdk.Spec {
	return sdk.Spec{
		Name:        "counter",
		Hooks:       []sdk.Hook{sdk.ToolExecuteAfter(e)},
		Order:       20,
		Reads:       []sdk.KeyRef{tracker(), loopActive(), seen()},
		Writes:      []sdk.KeyRef{tracker(), loopActive()},
		Resets:      []sdk.KeyRef{loopActive()},
		Required:    true,
		Timeout:     1500 * time.Millisecond,
		ForTools:    []string{"shell", "failing", "shell"},
		Description: "Counts consecutive failures per tool.",
	}
}

func (counter) ToolExecuteAfter(_ context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	ft, ok := tracker().Get(c)
	if !ok {
		ft = &exocortexv1.FailureTracker{}
	}
	if ft.Failures == nil {
		ft.Failures = map[string]int32{}
	}
	name := req.GetToolCall().GetName()
	if req.GetResult().GetError() != "" {
		ft.Failures[name]++
	} else {
		delete(ft.Failures, name)
	}
	tracker().Set(c, ft)
	if la, ok := loopActive().Get(c); ok && la.GetActive() {
		loopActive().Reset(c)
	}
	s := "none"
	if v, ok := seen().Get(c); ok {
		s = v.GetValue()
	}
	c.Logger().Info("counted", "tool", name, "failures", ft.Failures[name])
	return &exocortexv1.ToolExecuteAfterResponse{Annotations: []string{
		fmt.Sprintf("failures=%d", ft.Failures[name]), "seen=" + s}}, nil
}

// nosy touches keys it did not declare, as its request's reply says.
type nosy struct{}

func (e nosy) Spec() sdk.Spec {
	return sdk.Spec{Name: "nosy", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 30, Reads: []sdk.KeyRef{seen()}, Description: "Touches keys it did not declare."}
}

func (nosy) MessageLoopEnd(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	switch req.GetReply() {
	case "read":
		tracker().Get(c)
	case "write":
		tracker().Set(c, &exocortexv1.FailureTracker{})
	case "reset":
		loopActive().Reset(c)
	}
	return &exocortexv1.MessageLoopEndResponse{Intervention: ptr("nosy did nothing wrong")}, nil
}

// repeatWatch reacts to a repeated reply.
type repeatWatch struct{}

func (e repeatWatch) Spec() sdk.Spec {
	return sdk.Spec{Name: "repeat_watch", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 40, ConsumesSignals: []string{signals.Repeat},
		Description: "Asks for another approach when the model repeats itself."}
}

func (repeatWatch) MessageLoopEnd(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	for _, m := range req.GetAdded() {
		if m.GetSignal() == signals.Repeat {
			return &exocortexv1.MessageLoopEndResponse{Intervention: ptr("repeat noticed in " + m.GetId() + "; try another approach")}, nil
		}
	}
	return nil, nil
}

// fragile fails as its request's reply says.
type fragile struct{}

func (e fragile) Spec() sdk.Spec {
	return sdk.Spec{Name: "fragile", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 50, Description: "Fails on request."}
}

func (fragile) MessageLoopEnd(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	switch req.GetReply() {
	case "boom":
		panic("fragile was asked to blow up")
	case "fail":
		return nil, errors.New("disk full")
	case "status":
		return nil, status.Error(codes.ResourceExhausted, "slow down")
	}
	return &exocortexv1.MessageLoopEndResponse{Intervention: ptr("fragile is fine")}, nil
}

// undeclaredBlocks returns prompt blocks without declaring InjectsPrompt.
type undeclaredBlocks struct{}

func (e undeclaredBlocks) Spec() sdk.Spec {
	return sdk.Spec{Name: "undeclared_blocks", Hooks: []sdk.Hook{sdk.MessageLoopPromptsAfter(e)}, Order: 60, Description: "Adds prompt blocks it did not declare."}
}

func (undeclaredBlocks) MessageLoopPromptsAfter(_ context.Context, _ *sdk.Call, _ *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: block("undeclared")}, nil
}

// sleepy hangs when asked to, past its own deadline.
type sleepy struct{}

func (e sleepy) Spec() sdk.Spec {
	return sdk.Spec{Name: "sleepy", Hooks: []sdk.Hook{sdk.MonologueStart(e)}, Order: 70, Timeout: 300 * time.Millisecond, OncePerSession: true,
		Description: "Hangs on request."}
}

func (sleepy) MonologueStart(ctx context.Context, _ *sdk.Call, req *exocortexv1.MonologueStartRequest) (*exocortexv1.MonologueStartResponse, error) {
	if req.GetUserMessage().GetContent() == "sleep" {
		time.Sleep(30 * time.Second) // ignores ctx on purpose: a hung extension
	}
	return nil, nil
}

// relay passes a note along a batch: it takes away the note of the relay before
// it, and otherwise leaves its own, saying what it saw.
type relay struct {
	name  string
	order int
}

func (r relay) Spec() sdk.Spec {
	return sdk.Spec{Name: r.name, Hooks: []sdk.Hook{sdk.MessageLoopEnd(r)}, Order: r.order, Reads: []sdk.KeyRef{seen()}, Writes: []sdk.KeyRef{seen()},
		Resets: []sdk.KeyRef{seen()}, Description: "Passes a note along a batch."}
}

func (r relay) MessageLoopEnd(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	saw := "nothing"
	if v, ok := seen().Get(c); ok {
		saw = v.GetValue()
	}
	if strings.HasPrefix(saw, "relay") {
		seen().Reset(c)
	} else {
		seen().Set(c, wrapperspb.String(fmt.Sprintf("%s saw %s at iteration %d", r.name, saw, req.GetIteration())))
	}
	return nil, nil
}

// porter changes its request in place, as a port of an Agent Zero extension
// that mutates loop_data would, and returns nothing: each call must fail,
// naming the field and the response field that does the job.
type porter struct{}

func (e porter) Spec() sdk.Spec {
	return sdk.Spec{Name: "porter", Hooks: []sdk.Hook{sdk.MonologueStart(e), sdk.HistAddBefore(e), sdk.MessageLoopPromptsBefore(e), sdk.BeforeMainLLMCall(e), sdk.ToolExecuteAfter(e), sdk.MessageLoopEnd(e)}, Order: 64, Description: "Changes its requests instead of answering."}
}

func (porter) MonologueStart(_ context.Context, _ *sdk.Call, req *exocortexv1.MonologueStartRequest) (*exocortexv1.MonologueStartResponse, error) {
	req.UserMessage.Content = "[ported] " + req.GetUserMessage().GetContent()
	return nil, nil
}

func (porter) HistAddBefore(_ context.Context, _ *sdk.Call, req *exocortexv1.HistAddBeforeRequest) (*exocortexv1.HistAddBeforeResponse, error) {
	req.Message.Content = strings.ReplaceAll(req.GetMessage().GetContent(), "secret", "[redacted]")
	return nil, nil
}

func (porter) MessageLoopPromptsBefore(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
	req.History = req.History[1:]
	return nil, nil
}

func (porter) BeforeMainLLMCall(_ context.Context, _ *sdk.Call, req *exocortexv1.BeforeMainLLMCallRequest) (*exocortexv1.BeforeMainLLMCallResponse, error) {
	req.Prompt = append(req.Prompt, &exocortexv1.Message{Role: "system", Content: "Be brief."})
	return nil, nil
}

func (porter) ToolExecuteAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	req.Result.Content += "\n(checked by porter)"
	return nil, nil
}

func (porter) MessageLoopEnd(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	req.Iteration += 100
	return nil, nil
}

// promptWatch says which of the prompt's fields its request carried, in state only
// (so a batch goes on past it): in a batch, system_prompt, extras and prompt_tokens
// reach it only when it declares ReadsPrompt, and the other fields always.
type promptWatch struct {
	name  string
	order int
	reads bool
}

func (w promptWatch) Spec() sdk.Spec {
	return sdk.Spec{Name: w.name, Hooks: []sdk.Hook{sdk.SystemPrompt(w), sdk.MessageLoopPromptsAfter(w)}, Order: w.order, Writes: []sdk.KeyRef{seen()}, ReadsPrompt: w.reads,
		Description: "Says which of the prompt's fields it was given."}
}

func (w promptWatch) SystemPrompt(_ context.Context, c *sdk.Call, req *exocortexv1.SystemPromptRequest) (*exocortexv1.SystemPromptResponse, error) {
	seen().Set(c, wrapperspb.String(fmt.Sprintf("%s saw system_prompt [%s], %d tools", w.name, req.GetSystemPrompt(), len(req.GetTools()))))
	return nil, nil
}

func (w promptWatch) MessageLoopPromptsAfter(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	seen().Set(c, wrapperspb.String(fmt.Sprintf("%s saw %d extras, prompt_tokens %d, num_ctx %d, iteration %d, history %d",
		w.name, len(req.GetExtras()), req.GetPromptTokens(), req.GetNumCtx(), req.GetIteration(), len(req.GetHistory()))))
	return nil, nil
}

func main() {
	sdk.Serve(sdk.Plugin{
		Name:    "conformance",
		Version: "1.0.0",
		Extensions: []sdk.Extension{
			echo{}, counter{}, nosy{}, repeatWatch{}, fragile{}, undeclaredBlocks{}, sleepy{},
			relay{"relay_a", 61}, relay{"relay_b", 62}, relay{"relay_c", 63}, porter{},
			promptWatch{"prompt_skimmer", 80, false}, promptWatch{"prompt_reader", 81, true},
		},
		Tools: []sdk.Tool{
			{
				Name:        "shout",
				Description: "Repeats its text argument, loudly.",
				Parameters:  `{"type":"object","properties":{"text":{"type":"string"}}}`,
				PromptFile:  "agent.system.tool.shout.md",
				Run: func(_ context.Context, c *sdk.Call, args json.RawMessage) (*exocortexv1.ToolResult, error) {
					var a struct{ Text string }
					if err := json.Unmarshal(args, &a); err != nil {
						return nil, err
					}
					return &exocortexv1.ToolResult{Content: strings.ToUpper(a.Text) + "! (" + c.Context().GetSessionId() + ")"}, nil
				},
			},
			{
				Name:        "failing",
				Description: "Fails with partial output.",
				Run: func(context.Context, *sdk.Call, json.RawMessage) (*exocortexv1.ToolResult, error) {
					return &exocortexv1.ToolResult{Content: "partial output"}, errors.New("exit status 2")
				},
			},
			{
				Name:        "panicky",
				Description: "Has a bug.",
				Run: func(context.Context, *sdk.Call, json.RawMessage) (*exocortexv1.ToolResult, error) {
					panic("tool bug")
				},
			},
			{
				Name:        "stateful",
				Description: "Reads state, which tools may not.",
				Run: func(_ context.Context, c *sdk.Call, _ json.RawMessage) (*exocortexv1.ToolResult, error) {
					tracker().Get(c)
					return nil, nil
				},
			},
			{
				Name:        "delegate",
				Description: "Hands its task to a subordinate agent, through the host's services.",
				Parameters:  `{"type":"object","properties":{"task":{"type":"string"}}}`,
				Run: func(ctx context.Context, c *sdk.Call, args json.RawMessage) (*exocortexv1.ToolResult, error) {
					var a struct{ Task string }
					if err := json.Unmarshal(args, &a); err != nil {
						return nil, err
					}
					hc, err := c.Host()
					if err != nil {
						return nil, err
					}
					resp, err := hc.RunSubordinate(ctx, &exocortexv1.RunSubordinateRequest{Context: c.Context(), Message: a.Task})
					if err != nil {
						return nil, fmt.Errorf("the host refused: %s", status.Convert(err).Message())
					}
					return &exocortexv1.ToolResult{Content: fmt.Sprintf("%s (%d iterations)", resp.GetResponse(), resp.GetIterations())}, nil
				},
			},
		},
		Files: []*exocortexv1.FileSpec{
			{Id: "shout_log", Path: "$EXOCORTEX_HOME/shout.log", Access: exocortexv1.Access_ACCESS_WRITE, User: "shout", Doc: "What was shouted."},
			{Id: "catalog", Path: "$PROJECT/catalog.json", Access: exocortexv1.Access_ACCESS_READ, User: "echo"},
		},
	})
}
