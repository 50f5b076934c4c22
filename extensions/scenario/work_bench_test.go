package scenario

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/extensions/builtin"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// BenchmarkSuiteWork calls every built-in extension of one iteration once, in
// process (sdk.NewServer, no gRPC, no host), with a realistic request: a history
// of 13 messages with 1.6 KB tool outputs, iteration 2, a code_execution call and
// its result. It measures the extensions' own work, apart from the cost of
// dispatching calls between processes, which BenchmarkSuiteIteration includes.
// Monologue-level hooks (monologue_end) are left out, as they do not run per
// iteration; response_stream_chunk is called once (a reply streams in several).
//
//	go test ./extensions/scenario -run '^$' -bench SuiteWork -v
func BenchmarkSuiteWork(b *testing.B) {
	b.Setenv("EXOCORTEX_HOME", b.TempDir())
	b.Setenv("EXOCORTEX_PROJECT", b.TempDir())
	hist := []*exocortexv1.Message{{Id: "u", Role: "user", SenderId: "operator", Content: "What does the shell print? Check config/tools.go and the Agent Zero notes."}}
	for i := 0; i < 6; i++ {
		hist = append(hist,
			&exocortexv1.Message{Id: fmt.Sprint("a", i), Role: "assistant", Content: `{"thoughts":["list the files"],"headline":"Listing","tool_name":"code_execution","tool_args":{"runtime":"terminal","code":"ls -la"}}`},
			&exocortexv1.Message{Id: fmt.Sprint("t", i), Role: "tool", ToolName: "code_execution", Content: strings.Repeat("drwxr-xr-x 2 user user 4096 Nov 21 12:00 src/main.go\n", 30)})
	}
	ctx := context.Background()
	call := func(name string) *exocortexv1.HookCall {
		return &exocortexv1.HookCall{Extension: name, Context: &exocortexv1.Context{SessionId: "s", RequestId: "r", MessageId: "u", Iteration: 2,
			InteractionHistory: &exocortexv1.InteractionHistory{RecentMessages: hist[len(hist)-10:]}}}
	}
	tc := &exocortexv1.ToolCall{Name: "code_execution", ArgsJson: `{"runtime":"terminal","code":"ls -la"}`}
	res := &exocortexv1.ToolResult{Content: hist[2].GetContent()}
	type named struct {
		name string
		fn   func() error
	}
	var calls []named
	for _, pn := range builtin.Names() {
		p := builtin.Plugins()[pn]
		p.Logger = slog.New(slog.DiscardHandler)
		srv, err := sdk.NewServer(p)
		if err != nil {
			b.Fatal(err)
		}
		m, _ := srv.Manifest(ctx, &exocortexv1.ManifestRequest{ProtocolVersion: sdk.ProtocolVersion})
		for _, e := range m.GetExtensions() {
			n := e.GetName()
			var f func() error
			switch e.GetHook() {
			case exocortexv1.Hook_HOOK_HIST_ADD_BEFORE:
				f = func() error {
					_, err := srv.HistAddBefore(ctx, &exocortexv1.HistAddBeforeRequest{Call: call(n), Message: hist[2]})
					return err
				}
			case exocortexv1.Hook_HOOK_MESSAGE_LOOP_START:
				f = func() error {
					_, err := srv.MessageLoopStart(ctx, &exocortexv1.MessageLoopStartRequest{Call: call(n), Iteration: 2})
					return err
				}
			case exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE:
				f = func() error {
					_, err := srv.MessageLoopPromptsBefore(ctx, &exocortexv1.MessageLoopPromptsBeforeRequest{Call: call(n), Iteration: 2, History: hist})
					return err
				}
			case exocortexv1.Hook_HOOK_SYSTEM_PROMPT:
				f = func() error {
					_, err := srv.SystemPrompt(ctx, &exocortexv1.SystemPromptRequest{Call: call(n)})
					return err
				}
			case exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER:
				f = func() error {
					_, err := srv.MessageLoopPromptsAfter(ctx, &exocortexv1.MessageLoopPromptsAfterRequest{Call: call(n), Iteration: 2, History: hist})
					return err
				}
			case exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL:
				f = func() error {
					_, err := srv.BeforeMainLLMCall(ctx, &exocortexv1.BeforeMainLLMCallRequest{Call: call(n), Iteration: 2, Prompt: hist})
					return err
				}
			case exocortexv1.Hook_HOOK_RESPONSE_STREAM_CHUNK:
				f = func() error {
					_, err := srv.ResponseStreamChunk(ctx, &exocortexv1.ResponseStreamChunkRequest{Call: call(n), Text: hist[1].GetContent()})
					return err
				}
			case exocortexv1.Hook_HOOK_RESPONSE_STREAM_END:
				f = func() error {
					_, err := srv.ResponseStreamEnd(ctx, &exocortexv1.ResponseStreamEndRequest{Call: call(n), Text: hist[1].GetContent()})
					return err
				}
			case exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE:
				f = func() error {
					_, err := srv.ToolExecuteBefore(ctx, &exocortexv1.ToolExecuteBeforeRequest{Call: call(n), ToolCall: tc})
					return err
				}
			case exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER:
				f = func() error {
					_, err := srv.ToolExecuteAfter(ctx, &exocortexv1.ToolExecuteAfterRequest{Call: call(n), ToolCall: tc, Result: res})
					return err
				}
			case exocortexv1.Hook_HOOK_MESSAGE_LOOP_END:
				f = func() error {
					_, err := srv.MessageLoopEnd(ctx, &exocortexv1.MessageLoopEndRequest{Call: call(n), Iteration: 2, ToolCall: tc, ToolResult: res})
					return err
				}
			default:
				continue // error_format does not fire in this iteration; monologue_end not per iteration
			}
			calls = append(calls, named{n, f})
		}
	}
	per := map[string]time.Duration{}
	for _, c := range calls { // warm up: open the memory store, fill caches
		if err := c.fn(); err != nil {
			b.Fatalf("%s: %v", c.name, err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range calls {
			start := time.Now()
			if err := c.fn(); err != nil {
				b.Fatalf("%s: %v", c.name, err)
			}
			per[c.name] += time.Since(start)
		}
	}
	b.ReportMetric(float64(len(calls)), "calls/iter")
	if testing.Verbose() {
		names := make([]string, 0, len(per))
		for n := range per {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool { return per[names[i]] > per[names[j]] })
		var sb strings.Builder
		for _, n := range names[:min(10, len(names))] {
			fmt.Fprintf(&sb, "%-28s %6.1f µs\n", n, float64(per[n].Nanoseconds())/1000/float64(b.N))
		}
		b.Logf("most expensive extensions per iteration:\n%s", sb.String())
	}
}
