package cmdhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// spec is a command hook's extension declaration: its own name and order,
// a deadline past the hook's own (so the hook's timeout is the one that
// fires, and is reported as such), and fail_open when the entry says so.
func spec(h Hook, at sdk.Hook) sdk.Spec {
	return sdk.Spec{Name: h.Ext(), Hooks: []sdk.Hook{at}, Order: Order + h.Index, Timeout: h.Timeout + 5*time.Second,
		FailOpen: h.FailOpen && (h.Event == PreToolUse || h.Event == PermissionRequest), Description: describe(h)}
}

// status reports the bridge's configuration problems once per session: a
// file that is not JSON, an event with no Exocortex hook, an entry that
// cannot run. Its error is the host's to show (run's stderr, --json, the
// terminal); the untrusted project's files are a warning.
type status struct{ b *Bridge }

func (s status) Spec() sdk.Spec {
	return sdk.Spec{Name: "command_hooks", Hooks: []sdk.Hook{sdk.AgentInit(s)}, Order: Order, Description: "Reports the command-hook configurations that cannot be used (docs/command-hooks.md)."}
}

func (s status) AgentInit(_ context.Context, c *sdk.Call, _ *exocortexv1.AgentInitRequest) (*exocortexv1.AgentInitResponse, error) {
	e := s.b.env(c)
	if len(s.b.Hooks) > 0 {
		// The transcript exists from the start, empty, as the hooks expect.
		if err := touch(e.TranscriptPath); err != nil {
			return nil, err
		}
	}
	for _, f := range s.b.Settings.Skipped {
		warn(c, fmt.Sprintf("command hooks in %s are not run: the project is not trusted (exocortex trust %s)", f.Path, s.b.Project))
	}
	for _, h := range s.b.Hooks {
		if p := CheckEnv(h, s.b.Project, s.b.getenv); p != "" {
			warn(c, fmt.Sprintf("command hook %s (%s) cannot run: %s; when its event comes it fails%s", h.Ext(), h.Where(), p, closedOrOpen(h)))
		}
	}
	return &exocortexv1.AgentInitResponse{}, problemsError(s.b.Problems)
}

// toolFields translates a tool call for h and tells whether h's matcher
// selects it.
func toolFields(b *Bridge, h Hook, tc *exocortexv1.ToolCall) (ToolCall, map[string]any, bool, error) {
	call, err := Translate(h.Dialect, tc.GetName(), tc.GetArgsJson(), b.Project)
	if err != nil {
		return call, nil, false, err
	}
	m, _ := compileMatcher(h.Matcher) // checked at Load
	if !m.match(call.Name) {
		return call, nil, false, nil
	}
	return call, map[string]any{"tool_name": call.Name, "tool_input": call.Input, "tool_use_id": tc.GetId()}, true, nil
}

// preTool is a PreToolUse (BeforeTool) hook at tool_execute_before.
type preTool struct {
	b *Bridge
	h Hook
}

func (p preTool) Spec() sdk.Spec { return spec(p.h, sdk.ToolExecuteBefore(p)) }

func (p preTool) ToolExecuteBefore(ctx context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error) {
	tc := req.GetToolCall()
	call, _, ok, err := toolFields(p.b, p.h, tc)
	if err != nil || !ok {
		return &exocortexv1.ToolExecuteBeforeResponse{}, err
	}
	d, _, err := p.b.runGroup(ctx, c, "pre\x00"+occurrence(c, tc), p.h, func(o Hook) (map[string]any, bool) {
		_, f, ok, err := toolFields(p.b, o, tc)
		return f, ok && err == nil
	})
	if err != nil {
		return nil, err
	}
	out := &exocortexv1.ToolExecuteBeforeResponse{}
	who := "command hook " + p.h.Ext()
	switch {
	case d.Block || d.Halt:
		reason := first(d.Reason, d.HaltReason)
		out.Block = &exocortexv1.ToolBlock{Reason: fmt.Sprintf("%s (%s): %s", who, p.h.Command, reason)}
		return out, nil
	case d.Ask:
		// Held for the operator in every approval mode, yolo included: the
		// hook asked for it.
		out.Block = &exocortexv1.ToolBlock{Reason: fmt.Sprintf("%s asks the operator: %s", who, d.Reason), NeedsApproval: true, AlwaysAsk: true,
			Action: fmt.Sprintf("%s %s", call.Name, compact(call.Input))}
	}
	if d.Input != nil {
		args, err := Back(call, req.GetToolCall().GetArgsJson(), d.Input)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", who, err)
		}
		out.ArgsJson = &args
	}
	return out, nil
}

// occurrence names one tool call for the hooks that run at once for it.
func occurrence(c *sdk.Call, tc *exocortexv1.ToolCall) string {
	return fmt.Sprintf("%s\x00%d\x00%s\x00%s", c.Context().GetRequestId(), c.Context().GetIteration(), tc.GetId(), tc.GetName())
}

// postFields is the PostToolUse payload of a tool result for h, and whether
// h runs for it (PostToolUseFailure for a failed call, PostToolUse for the
// others, Gemini's AfterTool for both; and h's matcher).
func postFields(b *Bridge, h Hook, req *exocortexv1.ToolExecuteAfterRequest) (map[string]any, bool, error) {
	res := req.GetResult()
	failed := res.GetError() != ""
	if h.NativeEvent != "AfterTool" && failed != (h.Event == PostToolUseFailure) {
		return nil, false, nil
	}
	call, fields, ok, err := toolFields(b, h, req.GetToolCall())
	if err != nil || !ok {
		return nil, false, err
	}
	resp := map[string]any{"content": res.GetContent()}
	if call.kind == kindShell {
		resp = map[string]any{"stdout": res.GetContent(), "stderr": "", "interrupted": false}
	}
	if failed {
		resp["error"] = res.GetError()
		fields["error"] = res.GetError()
	}
	fields["tool_response"] = resp
	return fields, true, nil
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// postTool is a PostToolUse or PostToolUseFailure (AfterTool) hook at
// tool_execute_after: what it says is added to the result the model reads.
type postTool struct {
	b *Bridge
	h Hook
}

func (p postTool) Spec() sdk.Spec { return spec(p.h, sdk.ToolExecuteAfter(p)) }

func (p postTool) ToolExecuteAfter(ctx context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	if _, ok, err := postFields(p.b, p.h, req); err != nil || !ok {
		return &exocortexv1.ToolExecuteAfterResponse{}, err
	}
	d, _, err := p.b.runGroup(ctx, c, "post\x00"+occurrence(c, req.GetToolCall()), p.h, func(o Hook) (map[string]any, bool) {
		f, ok, err := postFields(p.b, o, req)
		return f, ok && err == nil
	})
	if err != nil {
		return nil, err
	}
	out := &exocortexv1.ToolExecuteAfterResponse{Content: d.Output}
	if note := join(d.Reason, d.Context); note != "" {
		out.Annotations = []string{fmt.Sprintf("[command hook %s] %s", p.h.Ext(), note)}
	}
	return out, nil
}

// prompt is a UserPromptSubmit (BeforeAgent) hook at hist_add_before, for
// the operator's message that opens a monologue: its context is added to
// the message; a block replaces it with the reason.
type prompt struct {
	b *Bridge
	h Hook
}

func (p prompt) Spec() sdk.Spec { return spec(p.h, sdk.HistAddBefore(p)) }

func (p prompt) HistAddBefore(ctx context.Context, c *sdk.Call, req *exocortexv1.HistAddBeforeRequest) (*exocortexv1.HistAddBeforeResponse, error) {
	m := req.GetMessage()
	if m.GetRole() != "user" || m.GetSignal() != "" || m.GetSenderId() != "operator" {
		return &exocortexv1.HistAddBeforeResponse{}, nil
	}
	// UserPromptSubmit has no matcher in Claude Code (nor BeforeAgent in
	// Gemini CLI): every hook runs for every prompt.
	prompt := m.GetContent()
	d, _, err := p.b.runGroup(ctx, c, "prompt\x00"+m.GetId()+"\x00"+c.Context().GetRequestId(), p.h, func(Hook) (map[string]any, bool) {
		return map[string]any{"prompt": prompt}, true
	})
	if err != nil {
		if p.h.FailOpen {
			return nil, err // reported by the host; the message goes in as it is
		}
		// Fails closed: the message is not acted on, and the operator and
		// the model are told why.
		warn(c, err.Error()+"; the operator's message was held back (the hook fails closed)")
		d = Decision{Block: true, Reason: "the hook could not run (" + err.Error() + ")"}
	}
	switch {
	case d.Block || d.Halt:
		text := fmt.Sprintf("[The operator's message was blocked by command hook %s: %s. Do not act on it; answer with the response tool, telling the operator it was blocked and why.]",
			p.h.Ext(), first(d.Reason, d.HaltReason))
		return &exocortexv1.HistAddBeforeResponse{Content: &text}, nil
	case d.Context != "":
		text := m.GetContent() + "\n\n" + d.Context
		return &exocortexv1.HistAddBeforeResponse{Content: &text}, nil
	}
	return &exocortexv1.HistAddBeforeResponse{}, nil
}

// stop is a Stop or SubagentStop (AfterAgent) hook at message_loop_end of
// the iteration that gave the final response: a block keeps the agent
// going with the reason (capped by the host, command_hooks.stop_continues).
type stop struct {
	b *Bridge
	h Hook
}

func (s stop) Spec() sdk.Spec { return spec(s.h, sdk.MessageLoopEnd(s)) }

func (s stop) MessageLoopEnd(ctx context.Context, c *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	if !req.GetFinal() {
		return &exocortexv1.MessageLoopEndResponse{}, nil
	}
	sub := c.Context().GetCustomData().GetFields()["exocortex_agent_depth"].GetNumberValue() > 0
	if sub != (s.h.Event == SubagentStop) {
		return &exocortexv1.MessageLoopEndResponse{}, nil
	}
	last := req.GetToolResult().GetContent()
	key := fmt.Sprintf("stop\x00%s\x00%d\x00%d", c.Context().GetRequestId(), req.GetIteration(), req.GetResumed())
	d, _, err := s.b.runGroup(ctx, c, key, s.h, func(o Hook) (map[string]any, bool) {
		fields := map[string]any{"stop_hook_active": req.GetResumed() > 0, "last_assistant_message": last}
		if o.Dialect == "gemini" {
			fields["prompt_response"] = last
		}
		return fields, true
	})
	if err != nil {
		return nil, err
	}
	out := &exocortexv1.MessageLoopEndResponse{}
	if d.Block {
		msg := fmt.Sprintf("Command hook %s does not let you stop yet: %s", s.h.Ext(), d.Reason)
		out.Resume = &msg
	}
	return out, nil
}

// contextKey holds what the SessionStart hooks gave for the model, for the
// session's prompts.
func contextKey() sdk.Key[*wrapperspb.StringValue] {
	return sdk.NewKey[*wrapperspb.StringValue]("command_hook_context", exocortexv1.Scope_SCOPE_SESSION,
		"The context the SessionStart command hooks gave, in their order; the bridge adds it to every prompt.")
}

// sessionStart is a SessionStart hook at agent_init.
type sessionStart struct {
	b *Bridge
	h Hook
}

func (s sessionStart) Spec() sdk.Spec {
	sp := spec(s.h, sdk.AgentInit(s))
	sp.Reads, sp.Writes = []sdk.KeyRef{contextKey()}, []sdk.KeyRef{contextKey()}
	return sp
}

func (s sessionStart) AgentInit(ctx context.Context, c *sdk.Call, _ *exocortexv1.AgentInitRequest) (*exocortexv1.AgentInitResponse, error) {
	m, _ := compileMatcher(s.h.Matcher)
	if !m.match("startup") {
		return &exocortexv1.AgentInitResponse{}, nil
	}
	d, err := s.b.run(ctx, c, s.h, map[string]any{"source": "startup", "trigger": "startup"})
	if err != nil {
		return nil, err
	}
	if d.Context != "" {
		k := contextKey()
		prev, _ := k.Get(c)
		k.Set(c, wrapperspb.String(join(prev.GetValue(), d.Context)))
	}
	return &exocortexv1.AgentInitResponse{}, nil
}

// startContext puts the SessionStart hooks' context in every prompt.
type startContext struct{}

func (x startContext) Spec() sdk.Spec {
	return sdk.Spec{Name: "command_hooks_context", Hooks: []sdk.Hook{sdk.MessageLoopPromptsAfter(x)}, Order: Order, InjectsPrompt: true, Reads: []sdk.KeyRef{contextKey()},
		Description: "Adds the context the SessionStart command hooks gave to the prompt."}
}

func (startContext) MessageLoopPromptsAfter(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	v, ok := contextKey().Get(c)
	if !ok || strings.TrimSpace(v.GetValue()) == "" {
		return &exocortexv1.MessageLoopPromptsAfterResponse{}, nil
	}
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: []*exocortexv1.PromptBlock{{Title: "SESSION CONTEXT (command hooks)", Content: v.GetValue(), Priority: 5}}}, nil
}

// closedOrOpen says what a failure of h does.
func closedOrOpen(h Hook) string {
	switch {
	case !h.Blocking():
		return " and is reported"
	case h.FailOpen:
		return " open (fail_open): the call goes ahead"
	}
	return " closed: the action it guards is stopped"
}
