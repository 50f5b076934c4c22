// Package hooks describes the hooks of the agent loop, derived from the protocol
// rather than written down a second time: a hook's name comes from the Hook enum, its
// RPC from the Plugin service, and whether it may add prompt text from whether its
// response message has the prompt_blocks field (number 15). The loop, the host and
// the wiring lint all read this table, so none of them can disagree about it.
package hooks

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// PromptBlocksField is the field number of prompt_blocks in the responses of the
// prompt-assembly hooks, reserved in every other response.
const PromptBlocksField protoreflect.FieldNumber = 15

// Stage says how often a hook fires.
type Stage int

const (
	// PerSession hooks fire once when the agent is created.
	PerSession Stage = iota
	// PerMonologue hooks fire once per user request.
	PerMonologue
	// PerMessage hooks fire for every message added to the history.
	PerMessage
	// PerIteration hooks fire in every iteration of the message loop.
	PerIteration
)

func (s Stage) String() string {
	switch s {
	case PerSession:
		return "session"
	case PerMonologue:
		return "monologue"
	case PerMessage:
		return "message"
	case PerIteration:
		return "iteration"
	}
	return fmt.Sprintf("Stage(%d)", int(s))
}

// Info describes one hook.
type Info struct {
	Hook exocortexv1.Hook
	// Name is the snake_case name, e.g. "message_loop_prompts_after".
	Name string
	// Method is the Plugin service RPC, e.g. "MessageLoopPromptsAfter".
	Method string
	Stage  Stage
	// InjectsPrompt is true for the hooks whose response can carry prompt blocks:
	// they fire while the prompt is assembled, so their text reaches the model.
	InjectsPrompt bool
	// FeedsNext lists the response fields the host folds into the next
	// extension's request (option feeds_next in hooks.proto). At a hook without
	// any, an extension's request depends on the ones before it only through the
	// state they write.
	FeedsNext []protoreflect.FieldDescriptor
	// CarriesHistory: the request has the whole conversation (history, or the
	// prompt's messages), which only extensions declaring reads_history get.
	CarriesHistory bool
	// ThreadsPrompt: the request has the prompt as the extensions before left
	// it (a prompt-assembly hook whose blocks feed the next request), which only
	// extensions declaring reads_prompt get.
	ThreadsPrompt bool
	// ForTools: the hook fires for one tool call, so an extension's for_tools
	// limits it to calls of the tools named (tool_execute_before and _after,
	// hist_add_tool_result, tool_output_update).
	ForTools bool
	// Gates: the response can stop the action the hook precedes (it has a
	// block or a refuse field: tool_execute_before, text_editor_write_before,
	// text_editor_patch_before). An extension that fails there stops the
	// action unless it declares fail_open (core/loop: failClosed).
	Gates bool
	// Request and Response are the hook's message types.
	Request, Response protoreflect.MessageDescriptor
}

// table is computed once: the hooks are fixed by the generated protocol, and the
// loop looks them up on hot paths.
var table = sync.OnceValue(build)

// All returns every hook in firing order, in a new slice: the order in which
// the hooks first fire in a monologue (firingOrder). For the first fifteen it
// is the Hook enum's, but for hist_add_before (3), which fires for the
// operator's message before monologue_start (2).
func All() []Info { return slices.Clone(table()) }

// Iteration returns the hooks of one iteration of the loop in the order
// core/loop fires them, in a new slice. A hook that fires more than once in an
// iteration is listed each time: hist_add_before where the loop adds the model's
// reply, the tool's result and an intervention queued at message_loop_end, and
// embedding_model_changed after the prompt hooks and after the tool (either can
// open a store built with another embedding model). Which of the hooks fire
// depends on what happens: a reasoning model's stream, a tool call, a
// text_editor action, an error. The wiring lint simulates sessions with it, and
// firing order (All) is derived from it, so the two cannot drift apart.
func Iteration() []exocortexv1.Hook {
	return []exocortexv1.Hook{
		exocortexv1.Hook_HOOK_MESSAGE_LOOP_START,
		// History compression, before the prompt is assembled: announced,
		// then its summary.
		exocortexv1.Hook_HOOK_HISTORY_COMPRESS_BEFORE,
		exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_BEFORE,
		exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_AFTER,
		exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE,
		exocortexv1.Hook_HOOK_SYSTEM_PROMPT,
		exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER,
		// A plugin that opened the memory store (recall, at the hook before)
		// found it built with another embedding model.
		exocortexv1.Hook_HOOK_EMBEDDING_MODEL_CHANGED,
		exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL,
		exocortexv1.Hook_HOOK_CHAT_MODEL_CALL_BEFORE,
		exocortexv1.Hook_HOOK_REASONING_STREAM_CHUNK,
		exocortexv1.Hook_HOOK_REASONING_STREAM,
		exocortexv1.Hook_HOOK_RESPONSE_STREAM_CHUNK,
		exocortexv1.Hook_HOOK_RESPONSE_STREAM,
		exocortexv1.Hook_HOOK_CHAT_MODEL_CALL_AFTER,
		exocortexv1.Hook_HOOK_REASONING_STREAM_END,
		exocortexv1.Hook_HOOK_RESPONSE_STREAM_END,
		exocortexv1.Hook_HOOK_HIST_ADD_BEFORE, // the model's reply
		exocortexv1.Hook_HOOK_ERROR_FORMAT,
		exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE,
		// A call held for approval: offered to the extensions, then the
		// operator is notified when asked.
		exocortexv1.Hook_HOOK_TOOL_APPROVAL_REQUEST,
		exocortexv1.Hook_HOOK_OPERATOR_NOTIFICATION,
		// Around the tool's run: a text_editor call's hooks by its action, the
		// partial output while any tool runs, a store the tool opened
		// re-embedded.
		exocortexv1.Hook_HOOK_TEXT_EDITOR_WRITE_BEFORE,
		exocortexv1.Hook_HOOK_TEXT_EDITOR_PATCH_BEFORE,
		exocortexv1.Hook_HOOK_TOOL_OUTPUT_UPDATE,
		exocortexv1.Hook_HOOK_TEXT_EDITOR_READ_AFTER,
		exocortexv1.Hook_HOOK_TEXT_EDITOR_WRITE_AFTER,
		exocortexv1.Hook_HOOK_TEXT_EDITOR_PATCH_AFTER,
		exocortexv1.Hook_HOOK_EMBEDDING_MODEL_CHANGED,
		exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER,
		// The result on its way into the history.
		exocortexv1.Hook_HOOK_HIST_ADD_TOOL_RESULT,
		exocortexv1.Hook_HOOK_HIST_ADD_BEFORE, // the tool's result
		exocortexv1.Hook_HOOK_MESSAGE_LOOP_EXCEPTION,
		exocortexv1.Hook_HOOK_MESSAGE_LOOP_END,
		exocortexv1.Hook_HOOK_HIST_ADD_BEFORE, // an intervention queued at message_loop_end
	}
}

// firingOrder lists the hooks in the order core/loop first fires them: the
// agent's init, a monologue's opening (the operator's message is added to
// the history before monologue_start, as in Agent Zero), each hook of an iteration where it
// first fires (Iteration), the monologue's end and the chain's. The Hook
// enum's numbers follow it up to monologue_end (15), but for the opening's
// two; hooks added later are
// numbered as they were added, so their place is given here. A hook missing
// here (one added to the protocol and not yet placed) comes last.
func firingOrder() []exocortexv1.Hook {
	order := []exocortexv1.Hook{
		exocortexv1.Hook_HOOK_AGENT_INIT,
		exocortexv1.Hook_HOOK_HIST_ADD_BEFORE, // the operator's message, before the monologue starts
		exocortexv1.Hook_HOOK_MONOLOGUE_START,
	}
	for _, h := range Iteration() {
		if !slices.Contains(order, h) {
			order = append(order, h)
		}
	}
	return append(order,
		exocortexv1.Hook_HOOK_MONOLOGUE_END,
		exocortexv1.Hook_HOOK_PROCESS_CHAIN_END,
	)
}

// gates reports whether a hook's response can stop the action: a field named
// block or refuse.
func gates(resp protoreflect.MessageDescriptor) bool {
	return resp.Fields().ByName("block") != nil || resp.Fields().ByName("refuse") != nil
}

func build() []Info {
	enum := exocortexv1.Hook(0).Descriptor().Values()
	svc := exocortexv1.File_exocortex_v1_plugin_proto.Services().ByName("Plugin")
	out := make([]Info, 0, enum.Len()-1)
	for i := 0; i < enum.Len(); i++ {
		h := exocortexv1.Hook(enum.Get(i).Number())
		if h == exocortexv1.Hook_HOOK_UNSPECIFIED {
			continue
		}
		name := strings.ToLower(strings.TrimPrefix(string(enum.Get(i).Name()), "HOOK_"))
		method := camel(name)
		m := svc.Methods().ByName(protoreflect.Name(method))
		if m == nil {
			// The protocol is generated from one file; a missing RPC is a build-time bug.
			panic(fmt.Sprintf("hooks: Plugin service has no RPC %s for hook %s", method, name))
		}
		out = append(out, Info{
			Hook:           h,
			Name:           name,
			Method:         method,
			Stage:          stageOf(h),
			InjectsPrompt:  m.Output().Fields().ByNumber(PromptBlocksField) != nil,
			FeedsNext:      feedsNext(m.Output()),
			CarriesHistory: carriesHistory(m.Input()),
			ThreadsPrompt:  m.Output().Fields().ByNumber(PromptBlocksField) != nil && len(feedsNext(m.Output())) > 0,
			ForTools:       forTools(h),
			Gates:          gates(m.Output()),
			Request:        m.Input(),
			Response:       m.Output(),
		})
	}
	pos := map[exocortexv1.Hook]int{}
	for i, h := range firingOrder() {
		pos[h] = i + 1
	}
	place := func(h exocortexv1.Hook) int {
		if p, ok := pos[h]; ok {
			return p
		}
		return len(pos) + int(h) // not placed yet: after the placed ones, by number
	}
	slices.SortStableFunc(out, func(a, b Info) int { return place(a.Hook) - place(b.Hook) })
	return out
}

// Lookup returns the hook with the given snake_case name.
func Lookup(name string) (Info, bool) {
	for _, in := range table() {
		if in.Name == name {
			return in, true
		}
	}
	return Info{}, false
}

// Of returns the description of h.
func Of(h exocortexv1.Hook) (Info, bool) {
	for _, in := range table() {
		if in.Hook == h {
			return in, true
		}
	}
	return Info{}, false
}

// Name returns the snake_case name of h, or its enum string if it is unknown.
func Name(h exocortexv1.Hook) string {
	if in, ok := Of(h); ok {
		return in.Name
	}
	return h.String()
}

func feedsNext(resp protoreflect.MessageDescriptor) []protoreflect.FieldDescriptor {
	var out []protoreflect.FieldDescriptor
	fields := resp.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if opts, ok := fd.Options().(*descriptorpb.FieldOptions); ok && proto.GetExtension(opts, exocortexv1.E_FeedsNext).(bool) {
			out = append(out, fd)
		}
	}
	return out
}

// carriesHistory reports whether a request has the conversation: a repeated
// Message field named history or prompt.
func carriesHistory(req protoreflect.MessageDescriptor) bool {
	for _, name := range []protoreflect.Name{"history", "prompt"} {
		fd := req.Fields().ByName(name)
		if fd != nil && fd.IsList() && fd.Message() != nil && fd.Message().FullName() == "exocortex.v1.Message" {
			return true
		}
	}
	return false
}

func forTools(h exocortexv1.Hook) bool {
	switch h {
	case exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE, exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER,
		exocortexv1.Hook_HOOK_HIST_ADD_TOOL_RESULT, exocortexv1.Hook_HOOK_TOOL_OUTPUT_UPDATE,
		exocortexv1.Hook_HOOK_TOOL_APPROVAL_REQUEST:
		return true
	}
	return false
}

func stageOf(h exocortexv1.Hook) Stage {
	switch h {
	case exocortexv1.Hook_HOOK_AGENT_INIT:
		return PerSession
	case exocortexv1.Hook_HOOK_MONOLOGUE_START, exocortexv1.Hook_HOOK_MONOLOGUE_END,
		exocortexv1.Hook_HOOK_PROCESS_CHAIN_END:
		return PerMonologue
	case exocortexv1.Hook_HOOK_HIST_ADD_BEFORE:
		return PerMessage
	case exocortexv1.Hook_HOOK_EMBEDDING_MODEL_CHANGED:
		// Fires when a plugin opens the memory store and finds it built with
		// another model: at most once per store opening.
		return PerSession
	}
	return PerIteration
}

func camel(snake string) string {
	var b strings.Builder
	for _, part := range strings.Split(snake, "_") {
		switch part {
		case "llm":
			b.WriteString("LLM")
		default:
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// Gating returns the names of the hooks whose response can stop an action
// (Info.Gates), in firing order.
func Gating() []string {
	var out []string
	for _, in := range table() {
		if in.Gates {
			out = append(out, in.Name)
		}
	}
	return out
}
