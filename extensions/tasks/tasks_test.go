package tasks

import (
	"strings"
	"testing"

	"github.com/exocortex/exocortex/extensions/internal/hooktest"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func plugin() sdk.Plugin {
	return sdk.Plugin{Name: "supervision", Extensions: []sdk.Extension{Completion{}, Tracker{}}}
}

// TestCompletionThroughProtocol sends what the host sends an extension that does
// not declare ReadsHistory: the recent messages in the context, no prompt.
func TestCompletionThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	ledger := &exocortexv1.EvidenceLedger{Entries: []*exocortexv1.Evidence{{ToolName: "code_execution", Ok: true, Iteration: 2}}}
	recent := hooktest.Msgs(
		"user", "run the tests",
		"assistant", `{"thoughts":["the tests passed, I am done"],"tool_name":"code_execution","tool_args":{}}`,
		"tool:code_execution", "ok  \tgithub.com/x/y\t0.2s",
	)
	resp, err := client.BeforeMainLLMCall(t.Context(), &exocortexv1.BeforeMainLLMCallRequest{
		Call: hooktest.Call("completion_tracker", 3, recent, sdktest.State(ledgerKey(), ledger)), Iteration: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	cp, ok := sdktest.Written(t, resp.GetChanges(), CompletionKey())
	if !ok || !cp.GetClaimedDone() || cp.GetLastSuccessIteration() != 2 || cp.GetCheckedIteration() != 3 || len(cp.GetSignals()) != 2 {
		t.Fatalf("completion %v", cp)
	}
	if s := cp.GetSignals()[0]; s.GetKind() != "success_marker" || !strings.HasPrefix(s.GetText(), "ok") {
		t.Fatalf("success marker %v", s)
	}
	// The same iteration is not examined twice.
	resp, err = client.BeforeMainLLMCall(t.Context(), &exocortexv1.BeforeMainLLMCallRequest{
		Call: hooktest.Call("completion_tracker", 3, recent, sdktest.State(CompletionKey(), cp)), Iteration: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sdktest.Written(t, resp.GetChanges(), CompletionKey()); ok {
		t.Fatal("examined iteration 3 twice")
	}
	// Only the latest reply and tool result count: a reply after the result
	// that is not done clears claimed_done, and no success marker is added
	// when the latest result is not a success.
	later := append(recent, hooktest.Msgs("assistant", `{"thoughts":["now the docs"],"tool_name":"text_editor"}`, "tool:text_editor", "error: no such file")...)
	ledger.Entries = append(ledger.Entries, &exocortexv1.Evidence{ToolName: "text_editor", Ok: false, Iteration: 3})
	resp, err = client.BeforeMainLLMCall(t.Context(), &exocortexv1.BeforeMainLLMCallRequest{
		Call: hooktest.Call("completion_tracker", 4, later, sdktest.State(ledgerKey(), ledger), sdktest.State(CompletionKey(), cp)), Iteration: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	cp4, _ := sdktest.Written(t, resp.GetChanges(), CompletionKey())
	if cp4.GetClaimedDone() || len(cp4.GetSignals()) != 3 || cp4.GetSignals()[2].GetKind() != "setback" {
		t.Fatalf("iteration 4: %v", cp4)
	}
}

func TestTrackerTransitions(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	var ts *exocortexv1.TaskState
	step := func(it int32, tc *exocortexv1.ToolCall, res *exocortexv1.ToolResult, extra ...*exocortexv1.StateEntry) string {
		t.Helper()
		entries := extra
		if ts != nil {
			entries = append(entries, sdktest.State(StateKey(), ts))
		}
		resp, err := client.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{
			Call:      hooktest.Call("task_tracker", it, hooktest.Msgs("user", "fix the build"), entries...),
			Iteration: it, ToolCall: tc, ToolResult: res,
		})
		if err != nil {
			t.Fatal(err)
		}
		v, ok := sdktest.Written(t, resp.GetChanges(), StateKey())
		if !ok {
			t.Fatal("task_state not written")
		}
		ts = v
		return ts.GetStatus()
	}
	run := &exocortexv1.ToolCall{Name: "code_execution"}
	if s := step(1, nil, nil); s != Started || ts.GetGoal() != "fix the build" {
		t.Fatalf("start: %v", ts)
	}
	if s := step(2, run, &exocortexv1.ToolResult{Error: "exit status 1"}); s != Blocked {
		t.Fatalf("failure: %s", s)
	}
	if s := step(3, run, &exocortexv1.ToolResult{Content: "ok"}, sdktest.State(gateKey(), &exocortexv1.ActionGate{Active: true, Action: "rm -rf /"})); s != WaitingApproval {
		t.Fatalf("gate: %s", s)
	}
	if s := step(4, run, &exocortexv1.ToolResult{Content: "ok"}); s != Working || ts.GetLastProgressIteration() != 4 {
		t.Fatalf("success: %s %v", s, ts)
	}
	if s := step(5, nil, nil, sdktest.State(CompletionKey(), &exocortexv1.Completion{ClaimedDone: true, CheckedIteration: 5})); s != Verifying {
		t.Fatalf("claimed done: %s", s)
	}
	if s := step(6, &exocortexv1.ToolCall{Name: "response"}, &exocortexv1.ToolResult{Content: "fixed", BreakLoop: true}); s != Done {
		t.Fatalf("answer: %s", s)
	}
	if len(ts.GetTransitions()) != 6 || ts.GetToolCalls() != 4 || ts.GetToolFailures() != 1 {
		t.Fatalf("transitions %v", ts)
	}
}
