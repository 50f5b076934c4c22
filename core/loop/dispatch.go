package loop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/core/host"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// turn is the state of one monologue that the hooks' contexts are built from.
type turn struct {
	requestID string
	userMsg   *exocortexv1.Message
	iteration int
	// message is the message the current call concerns (hist_add_before).
	message *exocortexv1.Message
	// added holds the messages added in the current iteration.
	added []*exocortexv1.Message
	// tool is the tool being called, at tool_execute_before/after (for_tools).
	tool string
	// resumed counts how many times message_loop_end's resume kept this
	// monologue going after its final response (resume.go).
	resumed int
	// usage is each extension's time against its budget (timebudget.go).
	usage map[string]*usage
	// asked is the context of the plugin call a utility-model call came from
	// (utility.go): the hooks around it get that context, not one built from
	// the agent's history, which the agent may be changing meanwhile.
	asked *exocortexv1.Context
	// gate is the first failure of a fail-closed extension at the gating hook
	// being fired (failclosed.go); the caller stops the action.
	gate *gateFailure
	// only, when set, limits the extensions called to those it selects (the
	// operator's own tool calls: OperatorCall).
	only func(*host.Extension) bool
}

type changer interface {
	proto.Message
	GetChanges() *exocortexv1.StateChanges
}

type blocker interface {
	GetPromptBlocks() []*exocortexv1.PromptBlock
}

// HookError is an extension's response that its hook or its declaration does not
// allow; the response is discarded, state changes included.
type HookError struct {
	Plugin, Extension, Hook, Problem string
}

func (e *HookError) Error() string {
	return fmt.Sprintf("plugin %s, extension %s at %s: %s", e.Plugin, e.Extension, e.Hook, e.Problem)
}

// RequiredError is the failure of an extension that declared itself required:
// the turn stops with it. Err is the extension's own failure.
type RequiredError struct {
	Plugin, Extension, Hook string
	Err                     error
}

func (e *RequiredError) Error() string {
	return fmt.Sprintf("required extension %s (plugin %s) failed at %s, so the turn stops: %v", e.Extension, e.Plugin, e.Hook, e.Err)
}

func (e *RequiredError) Unwrap() error { return e.Err }

// settle takes one extension's outcome: it checks and applies the response,
// emits the hook event, and applies the failure policy. accepted says the
// response was taken; stop is non-nil when the hook must stop (a cancel, or a
// required extension that failed).
func settle[Resp changer](
	ctx context.Context, a *Agent, t *turn, ext *host.Extension, call *exocortexv1.HookCall, ctxJSON []byte,
	resp Resp, err error, start time.Time, pos, batch int, handle func(*host.Extension, Resp) error,
) (accepted bool, stop error) {
	if err == nil {
		err = checkResponse(ext, resp)
	}
	var writes []string
	if err == nil {
		ch := resp.GetChanges()
		if err = a.store.Apply(ext.Access, ch); err == nil {
			for _, w := range ch.GetWrites() {
				writes = append(writes, w.GetKey())
			}
			writes = append(writes, ch.GetResets()...)
		}
	}
	if err == nil && handle != nil {
		err = handle(ext, resp)
	}
	order := ext.Spec.GetOrder()
	ev := Event{
		Type: EventHook, Iteration: t.iteration, Hook: ext.Hook.Name, Extension: ext.Name(),
		Plugin: ext.Plugin.Name(), Order: &order, DurationUS: time.Since(start).Microseconds(),
		Writes: writes, Context: ctxJSON,
	}
	if batch > 1 {
		ev.Batch, ev.BatchIndex = batch, pos+1
	}
	for _, e := range call.GetState() {
		ev.Reads = append(ev.Reads, e.GetKey())
	}
	if err != nil {
		ev.Error, ev.ErrorKind = err.Error(), errorKind(err)
	}
	a.emit(ev)
	if err != nil {
		var ce *host.CallError
		if errors.As(err, &ce) && ce.Kind == host.Canceled {
			return false, ctx.Err()
		}
		if ext.Spec.GetRequired() {
			return false, &RequiredError{Plugin: ext.Plugin.Name(), Extension: ext.Name(), Hook: ext.Hook.Name, Err: err}
		}
		if t.failClosed(ext, err) {
			a.log.Warn("guard failed: the action is stopped", "extension", ext.Name(), "plugin", ext.Plugin.Name(), "hook", ext.Hook.Name, "err", err)
			return false, nil
		}
		a.log.Warn("extension skipped", "extension", ext.Name(), "plugin", ext.Plugin.Name(), "hook", ext.Hook.Name, "err", err)
		return false, nil
	}
	if ext.Spec.GetOncePerSession() {
		a.mu.Lock()
		a.once[onceKey(ext)] = true
		a.mu.Unlock()
	}
	return true, nil
}

// ErrorRefused is the ErrorKind of a response the host itself refused (a
// HookError, a state access its declaration does not allow).
const ErrorRefused = "refused"

// errorKind classifies a failed hook call for its event's ErrorKind.
func errorKind(err error) string {
	var ce *host.CallError
	if errors.As(err, &ce) {
		return string(ce.Kind)
	}
	return ErrorRefused
}

// batchField is the field of a BatchRequest or BatchResult oneof that holds
// hook's message: it is named for the hook (its number is the hook's only up to
// 15, since 16 and 17 were taken when hooks were added).
func batchField(m protoreflect.Message, hook exocortexv1.Hook) protoreflect.FieldDescriptor {
	return m.Descriptor().Fields().ByName(protoreflect.Name(hooks.Name(hook)))
}

// stateOnly reports whether a hook response sets nothing but its state changes:
// only then may a batch go on after it.
func stateOnly(m protoreflect.Message) bool {
	only := true
	m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		only = fd.Name() == "changes"
		return only
	})
	return only && len(m.GetUnknown()) == 0
}

// checkResponse rejects what the hook's type or the extension's declaration does
// not allow. Prompt blocks at a hook that fires after the prompt is built arrive
// as the unknown field 15 (the field is reserved there), from a plugin built
// against a forged or stale schema: they would never reach the model, so the
// response is refused with an error instead of being dropped in silence.
func checkResponse(ext *host.Extension, resp proto.Message) error {
	fail := func(problem string) error {
		return &HookError{Plugin: ext.Plugin.Name(), Extension: ext.Name(), Hook: ext.Hook.Name, Problem: problem}
	}
	if hasField(resp.ProtoReflect().GetUnknown(), hooks.PromptBlocksField) {
		return fail(fmt.Sprintf("returned prompt blocks, but %s fires after the prompt is built, so they would never reach the model; inject at message_loop_prompts_after instead", ext.Hook.Name))
	}
	if b, ok := resp.(blocker); ok && len(b.GetPromptBlocks()) > 0 && !ext.Spec.GetInjectsPrompt() {
		return fail("returned prompt blocks without declaring injects_prompt in its manifest; declare it so the wiring shows who writes the prompt")
	}
	return nil
}

// hasField reports whether raw protobuf bytes hold field num.
func hasField(raw []byte, num protowire.Number) bool {
	for len(raw) > 0 {
		n, typ, l := protowire.ConsumeTag(raw)
		if l < 0 {
			return false
		}
		if n == num {
			return true
		}
		raw = raw[l:]
		m := protowire.ConsumeFieldValue(n, typ, raw)
		if m < 0 {
			return false
		}
		raw = raw[m:]
	}
	return false
}

// hookCall builds what an extension receives: the ACP context and the values of
// the keys it declared it reads.
func (a *Agent) hookCall(t *turn, ext *host.Extension) (*exocortexv1.HookCall, []byte) {
	c := a.context(t, ext.Hook)
	// The hook is tested first: a utility-model call's hooks may run while the
	// agent builds a prompt (utility.go), and they inject nothing.
	if ext.Hook.InjectsPrompt {
		if n, ok := a.blockLimit[ext.Name()]; ok {
			// Its block was cut to fit the window last time: this is what fitted.
			c.ProcessingDirectives.ResponseConstraints.MaxLength = int32(n)
		}
	}
	a.mu.Lock()
	a.lastContext = c
	a.mu.Unlock()
	var ctxJSON []byte
	if a.opts.EmitContext {
		ctxJSON, _ = protojson.Marshal(c)
	}
	return &exocortexv1.HookCall{Extension: ext.Name(), Context: c, State: a.store.Read(ext.Access),
		TimeoutMs: uint32(min(ext.Timeout.Milliseconds(), 1<<32-1))}, ctxJSON
}

// context builds the ACP context object for one call.
func (a *Agent) context(t *turn, h hooks.Info) *exocortexv1.Context {
	if t.asked != nil {
		return askedContext(t.asked, h)
	}
	msgID := ""
	switch {
	case t.message != nil:
		msgID = t.message.GetId()
	case t.userMsg != nil:
		msgID = t.userMsg.GetId()
	}
	recent := a.history
	summary := a.summaryText()
	if n := len(recent) - a.opts.RecentMessages; n > 0 {
		recent = recent[n:]
		if summary == "" {
			summary = fmt.Sprintf("%d earlier messages of this session are not included.", n)
		}
	}
	return &exocortexv1.Context{
		ContextId:    uuid.NewString(),
		SessionId:    a.sessionID,
		MessageId:    msgID,
		RequestId:    t.requestID,
		TimestampUtc: time.Now().UTC().Format(time.RFC3339Nano),
		SourceEntity: &exocortexv1.SourceEntity{Id: "exocortex-core", Type: "system_module"},
		InteractionHistory: &exocortexv1.InteractionHistory{
			RecentMessages:          recent,
			PreviousExchangeSummary: summary,
		},
		ProcessingDirectives: &exocortexv1.ProcessingDirectives{
			RequestedAction:     requestedAction(h),
			ResponseConstraints: &exocortexv1.ResponseConstraints{Format: "protobuf:" + string(h.Response.FullName())},
		},
		// The host's token estimate, so a plugin counts text as the context
		// budget does (the Python SDK's Agent Zero tokens stand-in reads it):
		// tokens = message_overhead + ceil(bytes * tokens_per_byte) a message.
		CustomData:   a.customData(),
		Hook:         h.Name,
		Iteration:    int32(t.iteration),
		AgentProfile: a.opts.AgentProfile,
		Model:        a.opts.Model,
	}
}

// customData is the custom_data of a hook call's context. Its values change
// only when the token count is calibrated or the window is learnt, so the
// message is built once for each set of values and shared by the contexts
// that carry it (nothing changes a context once built: askedContext clones),
// instead of five allocations and a map for every call.
func (a *Agent) customData() *structpb.Struct {
	key := customKey{perByte: a.perByte(), window: a.window, depth: a.depth}
	if c := a.custom.Load(); c != nil && c.key == key {
		return c.data
	}
	c := &customEntry{key: key, data: &structpb.Struct{Fields: map[string]*structpb.Value{
		CustomTokensPerByte:   structpb.NewNumberValue(key.perByte),
		CustomMessageOverhead: structpb.NewNumberValue(messageOverhead),
		CustomNumCtx:          structpb.NewNumberValue(float64(key.window)),
		CustomAgentDepth:      structpb.NewNumberValue(float64(key.depth)),
	}}}
	a.custom.Store(c)
	return c.data
}

type customKey struct {
	perByte       float64
	window, depth int
}

type customEntry struct {
	key  customKey
	data *structpb.Struct
}

// The keys of the custom_data every hook call's context carries.
const (
	// CustomTokensPerByte is the factor the host counts tokens with now
	// (calibrated from the model server's counts after its first reply).
	CustomTokensPerByte = "exocortex_tokens_per_byte"
	// CustomMessageOverhead is the tokens the host adds per message.
	CustomMessageOverhead = "exocortex_message_overhead"
	// CustomNumCtx is the context window of the model calls (0 before it is known).
	CustomNumCtx = "exocortex_num_ctx"
	// CustomAgentDepth is 0 for the operator's agent, 1 for its subordinates,
	// and so on (the command bridge tells Stop from SubagentStop by it).
	CustomAgentDepth = "exocortex_agent_depth"
)

func requestedAction(h hooks.Info) string {
	switch {
	case h.InjectsPrompt:
		return "prepare_prompt"
	case h.Hook == exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE:
		return "review_tool_call"
	case h.Hook == exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER:
		return "review_tool_result"
	case h.Hook == exocortexv1.Hook_HOOK_ERROR_FORMAT:
		return "correct_reply"
	}
	return "update_state"
}

// toolHook is the context description for a tool call, which is not a hook.
func toolHook() hooks.Info {
	in, _ := hooks.Of(exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE)
	in.Name = "execute_tool"
	return in
}

// ifFull is msgs for an extension that declared reads_history, and nothing for
// the others: they have the recent messages in their context.
func ifFull(full bool, msgs []*exocortexv1.Message) []*exocortexv1.Message {
	if !full {
		return nil
	}
	return msgs
}
