// Command optools is a test plugin of package tui with the tools the
// terminal routes the operator's own commands through: code_execution (runs
// the code under sh, as the real tool does in its terminal runtime) and the
// memory tools (they answer with the arguments they got and the agent
// profile of the call, so a test sees what the terminal sent).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

func codeExecution(ctx context.Context, c *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
	var a struct {
		Runtime string `json:"runtime"`
		Code    string `json:"code"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, "sh", "-c", a.Code).CombinedOutput()
	content := fmt.Sprintf("[code_execution as %s]\n%s", c.Context().GetAgentProfile(), out)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return &exocortexv1.ToolResult{Content: content, Error: fmt.Sprintf("exit status %d", exit.ExitCode())}, nil
	}
	return &exocortexv1.ToolResult{Content: content}, err
}

func echo(name string) sdk.Tool {
	return sdk.Tool{
		Name: name, Description: "Answers with its arguments.", Parameters: `{"type":"object"}`,
		Run: func(_ context.Context, c *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
			return &exocortexv1.ToolResult{Content: fmt.Sprintf("%s by %s: %s", name, c.Context().GetAgentProfile(), raw)}, nil
		},
	}
}

func main() {
	sdk.Serve(sdk.Plugin{
		Name: "optools", Version: "1.0.0",
		Tools: []sdk.Tool{
			{Name: "code_execution", Description: "Runs shell code.", Parameters: `{"type":"object"}`, Run: codeExecution},
			echo("memory_load"), echo("memory_save"), echo("memory_forget"),
		},
	})
}
