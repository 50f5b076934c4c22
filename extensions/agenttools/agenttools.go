// Package agenttools provides the agent's basic tools. response ends the
// monologue with the final answer for the operator.
package agenttools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Response is the response tool.
func Response() sdk.Tool {
	return sdk.Tool{
		Name:        "response",
		Description: "Give your final answer to the operator and end the task. Use it once the task is done, or when you are stuck and need the operator.",
		Parameters:  `{"type":"object","properties":{"text":{"type":"string","description":"The answer, in Markdown."}},"required":["text"]}`,
		PromptFile:  "agent.system.tool.response.md",
		Run: func(_ context.Context, _ *sdk.Call, args json.RawMessage) (*exocortexv1.ToolResult, error) {
			var a map[string]any
			if err := json.Unmarshal(args, &a); err != nil {
				return nil, fmt.Errorf("response: the arguments are not a JSON object: %w", err)
			}
			// Models name the argument differently; accept the common names.
			for _, k := range []string{"text", "message", "response", "answer"} {
				if s, ok := a[k].(string); ok && strings.TrimSpace(s) != "" {
					return &exocortexv1.ToolResult{Content: s, BreakLoop: true}, nil
				}
			}
			return nil, fmt.Errorf(`response: give the answer as {"text": "..."}`)
		},
	}
}
