package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/loop"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/protocol"
	"github.com/exocortex/exocortex/tui/shell"
)

// The operator's !commands are reviewed by the command hooks (Claude Code,
// Gemini CLI and Codex hook scripts, plugin command-hooks) as the shell tool
// they run through: PreToolUse hooks matching Bash get tool_input.command
// before the command runs, and may block it (the reason is the error the
// operator is shown) or rewrite it (the rewritten command then passes the
// shell's approval rules); PostToolUse hooks get its output, and what they
// say is added below it. A hook that cannot run blocks the command (guards
// fail closed) unless it is fail_open. Only the command hooks review the
// operator: they are the operator's own scripts, and the agent's guards
// (the action boundary, ...) are for the agent's calls.

// commandHooks selects the command hooks' extensions.
func commandHooks(ext *host.Extension) bool { return ext.Plugin.Name() == protocol.PluginCommandHooks }

// shellReview is a !command as the hooks left it.
type shellReview struct {
	command string
	agent   *loop.Agent
	call    loop.OperatorCall
}

// reviewShell runs the command hooks' PreToolUse on command; the error is
// the reason it may not run.
func (e *Engine) reviewShell(ctx context.Context, command string) (shellReview, error) {
	r := shellReview{command: command, agent: e.Agent()}
	if r.agent == nil || e.Host() == nil || len(e.hookExtensions()) == 0 {
		return r, nil
	}
	args, err := json.Marshal(map[string]any{"runtime": "terminal", "code": command, "session": operatorShellSession})
	if err != nil {
		return r, err
	}
	r.call = loop.OperatorCall{Call: &exocortexv1.ToolCall{Id: uuid.NewString(), Name: ShellTool, ArgsJson: string(args)}, Only: commandHooks}
	reason, err := r.agent.OperatorBefore(ctx, r.call)
	if err != nil {
		return r, fmt.Errorf("the command hooks could not review !%s: %w", command, err)
	}
	if reason != "" {
		return r, fmt.Errorf("!%s was not run: %s", command, reason)
	}
	var after struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal([]byte(r.call.Call.GetArgsJson()), &after); err == nil && after.Code != "" {
		r.command = after.Code
	}
	return r, nil
}

// hookExtensions are the command hooks' extensions at tool_execute_before
// and tool_execute_after.
func (e *Engine) hookExtensions() []*host.Extension {
	var out []*host.Extension
	for _, hk := range []exocortexv1.Hook{exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE, exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER} {
		for _, ext := range e.Host().Extensions(hk) {
			if commandHooks(ext) {
				out = append(out, ext)
			}
		}
	}
	return out
}

// after runs the command hooks' PostToolUse on the command's result: their
// notes are added below its output.
func (r shellReview) after(ctx context.Context, res shell.Result) (shell.Result, error) {
	if r.call.Call == nil {
		return res, nil
	}
	result := &exocortexv1.ToolResult{Content: res.Output}
	if res.ExitCode != 0 {
		result.Error = fmt.Sprintf("exit status %d", res.ExitCode)
	}
	if err := r.agent.OperatorAfter(ctx, r.call, result); err != nil {
		return res, fmt.Errorf("the command hooks could not review the output of !%s: %w", r.command, err)
	}
	res.Output = result.GetContent()
	if len(result.GetAnnotations()) > 0 {
		res.Output = strings.TrimRight(res.Output, "\n") + "\n" + strings.Join(result.GetAnnotations(), "\n") + "\n"
	}
	return res, nil
}
