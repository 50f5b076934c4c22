package loop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// The utility model's calls: history compression's summary (compress.go) and
// the plugins' calls through the host (Host.CallUtilityModel, CallUtility
// below) take one path, utilityCall, so both fire util_model_call_before and
// util_model_call_after the same way and reach the same model client.

// errUtilityLate is a utility-model call that missed its own timeout.
var errUtilityLate = errors.New("the utility model did not answer in time")

// utilityModel is the model utility calls use: the configured utility model,
// else the chat model (plugins' calls; compression does not call a model then).
func (a *Agent) utilityModel() string {
	if a.opts.UtilityModel != "" {
		return a.opts.UtilityModel
	}
	return a.opts.Model
}

// utilityCall runs one utility-model completion of system and message,
// firing util_model_call_before (which may change both) and
// util_model_call_after (which may change the response) with purpose. The
// model call alone is bounded by timeout when it is positive (errUtilityLate).
// onDelta, when not nil, gets each piece of the model's text as it arrives. It
// returns the response and the model that answered.
func (a *Agent) utilityCall(ctx context.Context, t *turn, purpose, system, message string, timeout time.Duration, onDelta func(string) error) (string, string, error) {
	model := a.utilityModel()
	client := a.opts.UtilityLLM
	if client == nil {
		client = a.opts.LLM
	}
	if err := fire(ctx, a, t, exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_BEFORE,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.UtilModelCallBeforeRequest {
			return &exocortexv1.UtilModelCallBeforeRequest{Call: c, Iteration: int32(t.iteration), Purpose: purpose, Model: model, System: system, Message: message}
		}, exocortexv1.PluginClient.UtilModelCallBefore,
		func(_ *host.Extension, r *exocortexv1.UtilModelCallBeforeResponse) error {
			if r.System != nil {
				system = r.GetSystem()
			}
			if r.Message != nil {
				message = r.GetMessage()
			}
			return nil
		}); err != nil {
		return "", model, fmt.Errorf("util_model_call_before: %w", err)
	}
	cctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var onChunk func(llm.Chunk) error
	if onDelta != nil {
		onChunk = func(c llm.Chunk) error { return onDelta(c.Content) }
	}
	r, err := client.Chat(cctx, llm.ChatRequest{
		Model: model, NumCtx: min(a.NumCtx(), 8192),
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: system},
			{Role: llm.RoleUser, Content: message},
		},
	}, onChunk)
	switch {
	case timeout > 0 && ctx.Err() == nil && cctx.Err() != nil:
		return "", model, errUtilityLate
	case err != nil:
		return "", model, fmt.Errorf("utility model %s: %w", model, err)
	}
	response := r.Content
	if err := fire(ctx, a, t, exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_AFTER,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.UtilModelCallAfterRequest {
			return &exocortexv1.UtilModelCallAfterRequest{Call: c, Iteration: int32(t.iteration), Purpose: purpose, Model: model,
				System: system, Message: message, Response: response}
		}, exocortexv1.PluginClient.UtilModelCallAfter,
		func(_ *host.Extension, r *exocortexv1.UtilModelCallAfterResponse) error {
			if r.Response != nil {
				response = r.GetResponse()
			}
			return nil
		}); err != nil {
		return "", model, fmt.Errorf("util_model_call_after: %w", err)
	}
	return response, model, nil
}

// CallUtility runs a plugin's utility-model call (Host.CallUtilityModel; plug
// it in with host.Services().SetUtilityRunner): the hooks around it are
// fired by the agent whose request asked (a subordinate's, for a call made
// during its turn), with the asking call's context, and purpose
// "plugin:<name>" unless the plugin names one. The host bounds the call
// (host.UtilityLimits); a call from a utility hook itself is refused, since
// it would fire that hook again without end.
//
// It runs on the host service's goroutine, beside the agent's: the agent is
// usually waiting for the asking plugin's answer, but a plugin's background
// task may call at any time. So it reads nothing of the agent's turn: the
// context comes from the request, the extensions' time is charged to a turn
// of its own, and the agent's shared parts it touches (the state store, the
// once-per-session record, the observer) are locked.
func (a *Agent) CallUtility(ctx context.Context, plugin string, req *exocortexv1.CallUtilityModelRequest, onDelta func(string) error) (string, string, error) {
	asked := req.GetContext()
	switch asked.GetHook() {
	case hooks.Name(exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_BEFORE), hooks.Name(exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_AFTER):
		return "", "", status.Errorf(codes.FailedPrecondition, "plugin %s called the utility model from %s, which every utility-model call fires: it would call itself without end", plugin, asked.GetHook())
	}
	agent := a.fam.asking(asked.GetRequestId())
	if agent == nil {
		agent = a
	}
	if asked == nil {
		asked = &exocortexv1.Context{SessionId: agent.sessionID}
	}
	purpose := req.GetPurpose()
	if purpose == "" {
		purpose = "plugin:" + plugin
	}
	t := &turn{requestID: asked.GetRequestId(), iteration: int(asked.GetIteration()), asked: asked}
	return agent.utilityCall(ctx, t, purpose, req.GetSystem(), req.GetMessage(), 0, onDelta)
}

// askedContext is the context a utility hook receives for a plugin's call:
// the asking call's, with a context id, time, hook and directives of its own.
func askedContext(asked *exocortexv1.Context, h hooks.Info) *exocortexv1.Context {
	c := proto.CloneOf(asked)
	c.ContextId = uuid.NewString()
	c.TimestampUtc = time.Now().UTC().Format(time.RFC3339Nano)
	c.SourceEntity = &exocortexv1.SourceEntity{Id: "exocortex-core", Type: "system_module"}
	c.ProcessingDirectives = &exocortexv1.ProcessingDirectives{
		RequestedAction:     requestedAction(h),
		ResponseConstraints: &exocortexv1.ResponseConstraints{Format: "protobuf:" + string(h.Response.FullName())},
	}
	if c.CustomData == nil {
		c.CustomData = &structpb.Struct{}
	}
	c.Hook = h.Name
	return c
}
