// Command utilplugin is a test plugin that calls the host's utility model from
// a hook, as Agent Zero's extensions call agent.call_utility_model:
//
//	message_loop_prompts_after  util_ask asks the utility model about the
//	                            user's message (streaming), and puts the
//	                            answer, or the host's refusal, into a prompt
//	                            block: "utility answer: ..." or "utility error: ..."
//	util_model_call_before      util_watch prefixes the message with UMARK
//	util_model_call_after       util_watch appends " [after]" to the answer
//	response (tool)             ends the monologue with its text
//
// Its environment changes what it does: UTILPLUGIN_UNDECLARED=1 leaves
// uses_utility_model out of the manifest; UTILPLUGIN_PROMPT_BYTES=N pads the
// message to N bytes. Each utility hook call is appended to $UTILPLUGIN_LOG
// as "hook purpose context-hook request-id".
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type asker struct{}

func (e asker) Spec() sdk.Spec {
	return sdk.Spec{Name: "util_ask", Hooks: []sdk.Hook{sdk.MessageLoopPromptsAfter(e)}, Order: 40, InjectsPrompt: true, ReadsHistory: true,
		Description: "Asks the utility model about the user's message and shows the answer to the main model."}
}

func (asker) MessageLoopPromptsAfter(ctx context.Context, c *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	last := ""
	for _, m := range req.GetHistory() {
		if m.GetRole() == "user" {
			last = m.GetContent()
		}
	}
	msg := "MAIN-ASK " + last
	if n, _ := strconv.Atoi(os.Getenv("UTILPLUGIN_PROMPT_BYTES")); n > len(msg) {
		msg += strings.Repeat(".", n-len(msg))
	}
	var deltas []string
	resp, err := c.CallUtilityModel(ctx, sdk.UtilityCall{System: "Answer in one word.", Message: msg,
		OnDelta: func(d string) error { deltas = append(deltas, d); return nil }})
	text := fmt.Sprintf("utility answer: %s (streamed %d pieces: %s)", resp, len(deltas), strings.Join(deltas, ""))
	if err != nil {
		text = "utility error: " + err.Error()
	}
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: []*exocortexv1.PromptBlock{{Title: "utility", Content: text}}}, nil
}

type watcher struct{}

func (e watcher) Spec() sdk.Spec {
	return sdk.Spec{Name: "util_watch", Hooks: []sdk.Hook{sdk.UtilModelCallBefore(e), sdk.UtilModelCallAfter(e)}, Order: 10, Description: "Marks the utility model's calls and answers."}
}

func note(hook, purpose string, c *sdk.Call) {
	path := os.Getenv("UTILPLUGIN_LOG")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s %s %s\n", hook, purpose, c.Context().GetHook(), c.Context().GetRequestId())
}

func ptr(s string) *string { return &s }

func (watcher) UtilModelCallBefore(_ context.Context, c *sdk.Call, req *exocortexv1.UtilModelCallBeforeRequest) (*exocortexv1.UtilModelCallBeforeResponse, error) {
	note("util_model_call_before", req.GetPurpose(), c)
	return &exocortexv1.UtilModelCallBeforeResponse{Message: ptr("UMARK " + req.GetMessage())}, nil
}

func (watcher) UtilModelCallAfter(_ context.Context, c *sdk.Call, req *exocortexv1.UtilModelCallAfterRequest) (*exocortexv1.UtilModelCallAfterResponse, error) {
	note("util_model_call_after", req.GetPurpose(), c)
	return &exocortexv1.UtilModelCallAfterResponse{Response: ptr(req.GetResponse() + " [after]")}, nil
}

// respond is the response tool: its text argument is the final answer.
func respond(_ context.Context, _ *sdk.Call, args json.RawMessage) (*exocortexv1.ToolResult, error) {
	var a struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("response arguments %s: %w", args, err)
	}
	return &exocortexv1.ToolResult{Content: a.Text, BreakLoop: true}, nil
}

func main() {
	sdk.Serve(sdk.Plugin{Name: "utilplugin", Version: "1",
		Extensions:       []sdk.Extension{asker{}, watcher{}},
		Tools:            []sdk.Tool{{Name: "response", Description: "ends the monologue with text", Run: respond}},
		UsesUtilityModel: os.Getenv("UTILPLUGIN_UNDECLARED") != "1"})
}
