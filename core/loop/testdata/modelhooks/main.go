// Command modelhooks is a test plugin with one extension at each of the
// model-side hook points (chat and utility model calls, the reasoning and
// response streams, message_loop_exception, process_chain_end). Each call is
// appended as a JSON line to the file $MODELHOOKS_LOG, so a test sees where
// each fired and with what data, and each changes what its hook allows:
//
//	chat_model_call_after   replaces REPLACE_ME in the reply with "replaced"
//	util_model_call_before  prefixes the utility call's message with UTILMARK
//	util_model_call_after   prefixes the utility model's answer with "- hooked: "
//	reasoning_stream_chunk  shows each piece of reasoning as stars
//	reasoning_stream_end    shows "thought N bytes"
//	message_loop_exception  handles an error that mentions "handle-me"
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// logger appends one JSON line per call to $MODELHOOKS_LOG.
type logger struct {
	mu sync.Mutex
}

func (l *logger) log(hook string, fields map[string]any) {
	path := os.Getenv("MODELHOOKS_LOG")
	if path == "" {
		return
	}
	fields["hook"] = hook
	b, _ := json.Marshal(fields)
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(b, '\n'))
}

type watcher struct{ l *logger }

func (e watcher) Spec() sdk.Spec {
	return sdk.Spec{Name: "model_watch", Hooks: []sdk.Hook{sdk.ChatModelCallBefore(e), sdk.ChatModelCallAfter(e), sdk.UtilModelCallBefore(e), sdk.UtilModelCallAfter(e), sdk.ReasoningStreamChunk(e), sdk.ReasoningStream(e), sdk.ReasoningStreamEnd(e), sdk.ResponseStream(e), sdk.MessageLoopException(e), sdk.ProcessChainEnd(e)}, Order: 50, ReadsHistory: true,
		Description: "Records every model-side hook call and changes what each allows."}
}

func ptr(s string) *string { return &s }

func (w watcher) ChatModelCallBefore(_ context.Context, _ *sdk.Call, req *exocortexv1.ChatModelCallBeforeRequest) (*exocortexv1.ChatModelCallBeforeResponse, error) {
	last := ""
	if n := len(req.GetPrompt()); n > 0 {
		last = req.GetPrompt()[n-1].GetContent()
	}
	w.l.log("chat_model_call_before", map[string]any{"iteration": req.GetIteration(), "model": req.GetModel(),
		"prompt": len(req.GetPrompt()), "last": last, "prompt_tokens": req.GetPromptTokens()})
	return nil, nil
}

func (w watcher) ChatModelCallAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.ChatModelCallAfterRequest) (*exocortexv1.ChatModelCallAfterResponse, error) {
	w.l.log("chat_model_call_after", map[string]any{"iteration": req.GetIteration(), "model": req.GetModel(),
		"response": req.GetResponse(), "reasoning": req.GetReasoning()})
	if strings.Contains(req.GetResponse(), "REPLACE_ME") {
		return &exocortexv1.ChatModelCallAfterResponse{Response: ptr(strings.ReplaceAll(req.GetResponse(), "REPLACE_ME", "replaced"))}, nil
	}
	return nil, nil
}

func (w watcher) UtilModelCallBefore(_ context.Context, _ *sdk.Call, req *exocortexv1.UtilModelCallBeforeRequest) (*exocortexv1.UtilModelCallBeforeResponse, error) {
	w.l.log("util_model_call_before", map[string]any{"purpose": req.GetPurpose(), "model": req.GetModel(), "system": req.GetSystem()})
	return &exocortexv1.UtilModelCallBeforeResponse{Message: ptr("UTILMARK " + req.GetMessage())}, nil
}

func (w watcher) UtilModelCallAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.UtilModelCallAfterRequest) (*exocortexv1.UtilModelCallAfterResponse, error) {
	w.l.log("util_model_call_after", map[string]any{"purpose": req.GetPurpose(), "response": req.GetResponse(),
		"message_marked": strings.HasPrefix(req.GetMessage(), "UTILMARK ")})
	return &exocortexv1.UtilModelCallAfterResponse{Response: ptr("- hooked: " + strings.TrimPrefix(req.GetResponse(), "- "))}, nil
}

func (w watcher) ReasoningStreamChunk(_ context.Context, _ *sdk.Call, req *exocortexv1.ReasoningStreamChunkRequest) (*exocortexv1.ReasoningStreamChunkResponse, error) {
	w.l.log("reasoning_stream_chunk", map[string]any{"delta": req.GetDelta(), "text": req.GetText()})
	return &exocortexv1.ReasoningStreamChunkResponse{Display: ptr(strings.Repeat("*", len(req.GetDelta())))}, nil
}

func (w watcher) ReasoningStream(_ context.Context, _ *sdk.Call, req *exocortexv1.ReasoningStreamRequest) (*exocortexv1.ReasoningStreamResponse, error) {
	w.l.log("reasoning_stream", map[string]any{"text": req.GetText()})
	return nil, nil
}

func (w watcher) ReasoningStreamEnd(_ context.Context, _ *sdk.Call, req *exocortexv1.ReasoningStreamEndRequest) (*exocortexv1.ReasoningStreamEndResponse, error) {
	w.l.log("reasoning_stream_end", map[string]any{"text": req.GetText()})
	return &exocortexv1.ReasoningStreamEndResponse{Display: ptr(fmt.Sprintf("thought %d bytes", len(req.GetText())))}, nil
}

func (w watcher) ResponseStream(_ context.Context, _ *sdk.Call, req *exocortexv1.ResponseStreamRequest) (*exocortexv1.ResponseStreamResponse, error) {
	w.l.log("response_stream", map[string]any{"text": req.GetText()})
	return nil, nil
}

func (w watcher) MessageLoopException(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopExceptionRequest) (*exocortexv1.MessageLoopExceptionResponse, error) {
	w.l.log("message_loop_exception", map[string]any{"iteration": req.GetIteration(), "error": req.GetError(), "stage": req.GetStage()})
	return &exocortexv1.MessageLoopExceptionResponse{Handled: strings.Contains(req.GetError(), "handle-me")}, nil
}

func (w watcher) ProcessChainEnd(_ context.Context, _ *sdk.Call, req *exocortexv1.ProcessChainEndRequest) (*exocortexv1.ProcessChainEndResponse, error) {
	w.l.log("process_chain_end", map[string]any{"final_response": req.GetFinalResponse(), "stop_reason": req.GetStopReason(), "iterations": req.GetIterations()})
	return nil, nil
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
	p := sdk.Plugin{Name: "modelhooks", Version: "test", Extensions: []sdk.Extension{watcher{l: &logger{}}}}
	// The loop's tests have no built-in response tool; the end-to-end test,
	// which has, leaves it out.
	if os.Getenv("MODELHOOKS_RESPONSE_TOOL") != "" {
		p.Tools = []sdk.Tool{{Name: "response", Description: "ends the monologue with text", Run: respond}}
	}
	sdk.Serve(p)
}
