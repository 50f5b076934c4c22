// Package subordinate provides call_subordinate: the agent hands a sub-task to a
// child agent, which the host runs inline (with its own profile, history and
// state) and whose final answer comes back as the tool's result.
//
// The tool calls back into the host through the Host service (RunSubordinate),
// reached from the plugin over go-plugin's broker with sdk.Call.Host. The child
// runs within this tool call, so the call's deadline (the host's tool timeout)
// bounds the child's whole run.
//
// Arguments follow Agent Zero's: message (the task, written as to a colleague who
// knows nothing of the conversation), reset (start a fresh child instead of
// continuing the one this request used last) and profile (the child's agent
// profile; empty for the host's default subordinate profile).
package subordinate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/grpc/status"

	"github.com/exocortex/exocortex/extensions/internal/toolargs"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// ToolName is the tool's name.
const ToolName = "call_subordinate"

type args struct {
	Message toolargs.Text `json:"message"`
	Reset   toolargs.Bool `json:"reset"`
	Profile toolargs.Text `json:"profile"`
}

// Tool is the call_subordinate tool.
func Tool() sdk.Tool {
	return sdk.Tool{
		Name:        ToolName,
		Description: "Delegate a self-contained sub-task to a subordinate agent and get its final answer back.",
		Parameters: `{"type":"object","properties":{` +
			`"message":{"type":"string","description":"The sub-task, complete in itself: goal, context, constraints and what to report back."},` +
			`"reset":{"type":"boolean","description":"true starts a new subordinate; false (default) continues the one you used last in this task."},` +
			`"profile":{"type":"string","description":"The subordinate's agent profile (default: the host's subordinate profile)."}},` +
			`"required":["message"]}`,
		PromptFile: "agent.system.tool.call_subordinate.md",
		Run:        run,
	}
}

func run(ctx context.Context, c *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
	var a args
	if err := toolargs.Decode(ToolName, raw, &a); err != nil {
		return nil, err
	}
	msg := strings.TrimSpace(string(a.Message))
	if msg == "" {
		return nil, fmt.Errorf(`%s: "message" is empty: describe the sub-task for the subordinate`, ToolName)
	}
	host, err := c.Host()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ToolName, err)
	}
	resp, err := host.RunSubordinate(ctx, &exocortexv1.RunSubordinateRequest{
		Context: c.Context(), Message: msg, Profile: strings.TrimSpace(string(a.Profile)), Fresh: a.Reset.V,
	})
	if err != nil {
		if st, ok := status.FromError(err); ok {
			return nil, fmt.Errorf("%s: the subordinate could not run: %s", ToolName, st.Message())
		}
		return nil, fmt.Errorf("%s: the subordinate could not run: %w", ToolName, err)
	}
	if reason := resp.GetStopReason(); reason != "" {
		content := strings.TrimSpace(resp.GetResponse())
		note := fmt.Sprintf("[the subordinate stopped without a final answer after %d iteration(s): %s]", resp.GetIterations(), reason)
		if content != "" {
			content += "\n" + note
		} else {
			content = note
		}
		return &exocortexv1.ToolResult{Content: content}, fmt.Errorf("%s: the subordinate did not finish: %s", ToolName, reason)
	}
	return &exocortexv1.ToolResult{Content: resp.GetResponse()}, nil
}
