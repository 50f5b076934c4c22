package conformance

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/exocortex/exocortex/core/host"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// testReadOnly calls porter, which changes its request in place at six hooks
// and answers nothing: every call must fail with FailedPrecondition naming the
// plugin, the extension, the hook and the field, and saying which response
// field does the job, or that none can at that hook (the wording comes from
// the protocol's changed_by and change_elsewhere options). In a batch and over
// the Dispatch stream the failure is porter's result, and the next extension
// gets the request as the host sent it.
func (s *suite) testReadOnly(t *testing.T) {
	type call func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error)
	tests := []struct {
		hook       exocortexv1.Hook
		call       call
		path, want string
	}{
		{exocortexv1.Hook_HOOK_MONOLOGUE_START,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.MonologueStartRequest{Call: hc, UserMessage: &exocortexv1.Message{Content: "hi"}},
					exocortexv1.PluginClient.MonologueStart)
			},
			"user_message.content",
			"No field of MonologueStartResponse changes user_message: the user message is added to the history through hist_add_before, whose response's content replaces it."},
		{exocortexv1.Hook_HOOK_HIST_ADD_BEFORE,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.HistAddBeforeRequest{Call: hc, Message: &exocortexv1.Message{Role: "user", Content: "my secret"}},
					exocortexv1.PluginClient.HistAddBefore)
			},
			"message.content", "Return the change in HistAddBeforeResponse.content instead."},
		{exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.MessageLoopPromptsBeforeRequest{Call: hc, Iteration: 1, History: msgs(3)},
					exocortexv1.PluginClient.MessageLoopPromptsBefore)
			},
			"history", "No field of MessageLoopPromptsBeforeResponse changes history: the history cannot be changed from a hook: " +
				"add text with prompt_blocks, or rewrite a message as it is added with hist_add_before's content."},
		{exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.BeforeMainLLMCallRequest{Call: hc, Prompt: msgs(2)},
					exocortexv1.PluginClient.BeforeMainLLMCall)
			},
			"prompt", "the prompt is final at before_main_llm_call: add text at message_loop_prompts_after (prompt_blocks)."},
		{exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.ToolExecuteAfterRequest{Call: hc, ToolCall: &exocortexv1.ToolCall{Name: "shell"},
					Result: &exocortexv1.ToolResult{Content: "out"}}, exocortexv1.PluginClient.ToolExecuteAfter)
			},
			"result.content", "Return the change in ToolExecuteAfterResponse.content or ToolExecuteAfterResponse.annotations instead."},
		{exocortexv1.Hook_HOOK_MESSAGE_LOOP_END,
			func(ctx context.Context, e *host.Extension, hc *exocortexv1.HookCall) (proto.Message, error) {
				return invoke(ctx, e, &exocortexv1.MessageLoopEndRequest{Call: hc, Iteration: 1}, exocortexv1.PluginClient.MessageLoopEnd)
			},
			"iteration", "No field of MessageLoopEndResponse changes iteration: it is information about this point of the loop, not something message_loop_end can change."},
	}
	for _, tt := range tests {
		name := strings.ToLower(strings.TrimPrefix(tt.hook.String(), "HOOK_"))
		t.Run(name, func(t *testing.T) {
			ext := s.ext(t, tt.hook, "porter")
			_, err := tt.call(t.Context(), ext, s.hookCall(ext, "m-readonly"))
			wantRefusal(t, err, host.Returned, codes.FailedPrecondition, mutationText(name, tt.path), tt.want)
		})
	}

	// In a batch, and over the stream: porter's result is the error, and relay_a
	// after it sees iteration 1, not porter's 101.
	porter := s.ext(t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, "porter")
	relay := s.ext(t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, "relay_a")
	exts := []*host.Extension{porter, relay}
	calls := []*exocortexv1.HookCall{s.hookCall(porter, "m-batch"), s.hookCall(relay, "m-batch")}
	for _, hc := range calls {
		hc.State = nil // relay_a is sent no note
	}
	breq := batchRequest(exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, &exocortexv1.MessageLoopEndRequest{Iteration: 1}, calls)
	check := func(t *testing.T, resp *exocortexv1.BatchResponse, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		rs := resp.GetResults()
		if len(rs) != 2 {
			t.Fatalf("%d results, want 2: %v", len(rs), rs)
		}
		for _, want := range []string{"code = FailedPrecondition", mutationText("message_loop_end", "iteration")} {
			if !strings.Contains(rs[0].GetError(), want) {
				t.Errorf("porter's result %q does not say %q", rs[0].GetError(), want)
			}
		}
		if got := seenIn(t, rs[1]); got != "relay_a saw nothing at iteration 1" {
			t.Errorf("relay_a after porter: %q, want it to see the request as sent (iteration 1)", got)
		}
	}
	t.Run("batch", func(t *testing.T) {
		resp, err := host.CallBatch(t.Context(), exts, breq)
		check(t, resp, err)
	})
	t.Run("dispatch", func(t *testing.T) {
		resp, err, sent := host.Dispatch(t.Context(), exts, breq)
		if !sent {
			t.Fatal("the Dispatch stream was busy")
		}
		check(t, resp, err)
	})
}

// mutationText is the head of the SDKs' error for porter changing path at hook.
func mutationText(hook, path string) string {
	return `plugin "conformance": extension "porter" at ` + hook + ` changed its request's ` + path +
		`, which changes nothing: the request is a read-only copy of what the host sent.`
}
