package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/tui/shell"
)

// The operator's own tool calls: a !command through the agent's shell tool,
// /memory through the memory plugin's tools when that plugin holds the store.
// They go to the tool directly, as `exocortex memory` goes to the store: they
// are the operator's commands, not the agent's, so no hook reviews them (a
// !command still passes the approval rules first, in package shell).

// ShellTool is the agent's shell tool; !commands run through it when a plugin
// provides it.
const ShellTool = "code_execution"

// operatorShellSession is the code_execution session number of !commands.
// With the operator's own agent profile in the context it is a shell of its
// own (its working directory carries over from one !command to the next) and
// never the agent's.
const operatorShellSession = 0

// operatorContext is the context object of an operator's tool call.
func (e *Engine) operatorContext() *exocortexv1.Context {
	sid := ""
	if s := e.Session(); s != nil {
		sid = s.ID()
	}
	return &exocortexv1.Context{
		ContextId: uuid.NewString(), SessionId: sid, RequestId: uuid.NewString(),
		TimestampUtc: time.Now().UTC().Format(time.RFC3339Nano),
		SourceEntity: &exocortexv1.SourceEntity{Id: "operator", Type: "human"},
		Hook:         "execute_tool", AgentProfile: "operator", Model: e.Model(),
	}
}

// hasTool reports whether a loaded plugin provides the tool.
func (e *Engine) hasTool(name string) bool {
	h := e.Host()
	if h == nil {
		return false
	}
	_, ok := h.Tool(name)
	return ok
}

// callTool runs a tool for the operator and returns its result.
func (e *Engine) callTool(ctx context.Context, name string, args any, timeout time.Duration) (*exocortexv1.ToolResult, error) {
	h := e.Host()
	if h == nil {
		return nil, errors.New("the plugins are still starting")
	}
	t, ok := h.Tool(name)
	if !ok {
		return nil, fmt.Errorf("no plugin provides the tool %s", name)
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	resp, err := h.ExecuteTool(ctx, t, &exocortexv1.ExecuteToolRequest{
		Call:     &exocortexv1.HookCall{Context: e.operatorContext()},
		ToolCall: &exocortexv1.ToolCall{Id: uuid.NewString(), Name: name, ArgsJson: string(b)},
	}, timeout)
	if err != nil {
		return nil, err
	}
	return resp.GetResult(), nil
}

// shellThroughTool runs an allowed !command with the agent's shell tool.
func (e *Engine) shellThroughTool(ctx context.Context, command string) (shell.Result, error) {
	res, err := e.callTool(ctx, ShellTool, map[string]any{"runtime": "terminal", "code": command, "session": operatorShellSession}, shell.DefaultTimeout)
	if err != nil {
		return shell.Result{}, err
	}
	out := shell.Result{Output: res.GetContent()}
	if msg := res.GetError(); msg != "" {
		n, found := strings.CutPrefix(msg, "exit status ")
		code, perr := strconv.Atoi(strings.TrimSpace(n))
		if !found || perr != nil {
			return out, fmt.Errorf("%s: %s", ShellTool, msg)
		}
		out.ExitCode = code
	}
	return out, nil
}
