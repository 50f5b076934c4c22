// Command toolwatchlog is the test plugin of the tools that run outside the
// plugins (TestServeHTTPToolCalled): extensions at system_prompt,
// tool_execute_before and tool_execute_after that append what they see to
// the file $TOOLWATCH_LOG, one line each ("tools: A,B", "before TOOL ARGS",
// "after TOOL CONTENT | ERROR"), and hold every call of the tools named in
// $TOOLWATCH_HOLD (comma-separated) for the operator, as a guard would.
package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type watch struct{}

func (e watch) Spec() sdk.Spec {
	return sdk.Spec{Name: "tool_watch_log", Order: 77, Description: "Logs the tools offered and every call around it; holds the calls named in $TOOLWATCH_HOLD.",
		Hooks: []sdk.Hook{sdk.SystemPrompt(e), sdk.ToolExecuteBefore(e), sdk.ToolExecuteAfter(e)}}
}

func logLine(format string, args ...any) {
	path := os.Getenv("TOOLWATCH_LOG")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, format+"\n", args...)
}

func (watch) SystemPrompt(_ context.Context, _ *sdk.Call, req *exocortexv1.SystemPromptRequest) (*exocortexv1.SystemPromptResponse, error) {
	var names []string
	for _, t := range req.GetTools() {
		names = append(names, t.GetName())
	}
	logLine("tools: %s", strings.Join(names, ","))
	return nil, nil
}

func (watch) ToolExecuteBefore(_ context.Context, _ *sdk.Call, req *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error) {
	tc := req.GetToolCall()
	logLine("before %s %s", tc.GetName(), tc.GetArgsJson())
	if slices.Contains(strings.Split(os.Getenv("TOOLWATCH_HOLD"), ","), tc.GetName()) {
		return &exocortexv1.ToolExecuteBeforeResponse{Block: &exocortexv1.ToolBlock{
			NeedsApproval: true, Action: tc.GetName() + " " + tc.GetArgsJson(), Reason: "this tool calls out of the machine",
		}}, nil
	}
	return nil, nil
}

func (watch) ToolExecuteAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	r := req.GetResult()
	logLine("after %s %s | %s", req.GetToolCall().GetName(), strings.ReplaceAll(r.GetContent(), "\n", " "), strings.ReplaceAll(r.GetError(), "\n", " "))
	return nil, nil
}

func main() {
	sdk.Serve(sdk.Plugin{Name: "toolwatchlog", Version: "test", Extensions: []sdk.Extension{watch{}}})
}
