// Command gate is the test plugin of package tui: the response tool, a tool
// "shell_echo" that answers with the command it was given, and an extension
// at tool_execute_before that holds every shell_echo call for the operator
// (the seed's action-boundary tier 4), showing the exact command.
package main

import (
	"context"
	"encoding/json"

	"github.com/exocortex/exocortex/extensions/agenttools"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type gate struct{}

var _ sdk.ToolExecuteBeforeHook = gate{}

func (e gate) Spec() sdk.Spec {
	return sdk.Spec{Name: "shell_gate", Hooks: []sdk.Hook{sdk.ToolExecuteBefore(e)}, Order: 10, Description: "Holds shell_echo calls for the operator."}
}

func (gate) ToolExecuteBefore(_ context.Context, _ *sdk.Call, req *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error) {
	if req.GetToolCall().GetName() != "shell_echo" {
		return &exocortexv1.ToolExecuteBeforeResponse{}, nil
	}
	var args struct {
		Cmd string `json:"cmd"`
	}
	_ = json.Unmarshal([]byte(req.GetToolCall().GetArgsJson()), &args)
	return &exocortexv1.ToolExecuteBeforeResponse{Block: &exocortexv1.ToolBlock{
		NeedsApproval: true, Action: args.Cmd, Reason: "shell commands need the operator",
	}}, nil
}

func shellEcho(_ context.Context, _ *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
	var args struct {
		Cmd string `json:"cmd"`
	}
	_ = json.Unmarshal(raw, &args)
	return &exocortexv1.ToolResult{Content: "ran: " + args.Cmd + "\nsecond line\nthird line"}, nil
}

func main() {
	sdk.Serve(sdk.Plugin{
		Name: "gate", Version: "1.0.0",
		Extensions: []sdk.Extension{gate{}},
		Tools: []sdk.Tool{agenttools.Response(), {
			Name: "shell_echo", Description: "Echoes a command.",
			Parameters: `{"type":"object","properties":{"cmd":{"type":"string"}}}`,
			Run:        shellEcho,
		}},
	})
}
