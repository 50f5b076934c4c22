package supervisor

import (
	"strings"
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
	"github.com/exocortex/exocortex/signals"
)

func plugin() sdk.Plugin {
	return sdk.Plugin{Name: "supervision", Extensions: []sdk.Extension{Loop{}, Proactive{}}}
}

// state carries what the host would hand the supervisor between iterations.
type state struct {
	sup    *exocortexv1.SupervisorState
	loop   *exocortexv1.LoopActive
	gate   *exocortexv1.ActionGate
	ledger *exocortexv1.EvidenceLedger
	diag   *exocortexv1.ErrorDiagnosis
	sigs   *exocortexv1.SupervisorSignals
}

func (s *state) entries() []*exocortexv1.StateEntry {
	var out []*exocortexv1.StateEntry
	if s.sup != nil {
		out = append(out, sdktest.State(supState(), s.sup))
	}
	if s.loop != nil {
		out = append(out, sdktest.State(loopActive(), s.loop))
	}
	if s.gate != nil {
		out = append(out, sdktest.State(actionGate(), s.gate))
	}
	if s.ledger != nil {
		out = append(out, sdktest.State(ledger(), s.ledger))
	}
	if s.diag != nil {
		out = append(out, sdktest.State(diagnosis(), s.diag))
	}
	if s.sigs != nil {
		out = append(out, sdktest.State(supSignals(), s.sigs))
	}
	return out
}

func end(t *testing.T, client exocortexv1.PluginClient, s *state, it int32, added ...*exocortexv1.Message) *exocortexv1.MessageLoopEndResponse {
	t.Helper()
	resp, err := client.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{
		Call: sdktest.Call("supervisor_loop", s.entries()...), Iteration: it, Added: added,
	})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := sdktest.Written(t, resp.GetChanges(), supState()); ok {
		s.sup = v
	}
	if v, ok := sdktest.Written(t, resp.GetChanges(), loopActive()); ok {
		s.loop = v
	}
	if sdktest.WasReset(resp.GetChanges(), loopActive()) {
		s.loop = nil
	}
	return resp
}

func TestEscalatesThenStops(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	s := &state{diag: &exocortexv1.ErrorDiagnosis{ErrorClass: "not_found", SuggestedActions: []string{"list the directory"}, AntiActions: []string{"retrying the same path"}}}
	repeat := &exocortexv1.Message{Role: "user", Signal: signals.Repeat}
	for tier := int32(1); tier <= 3; tier++ {
		resp := end(t, client, s, tier+1, repeat)
		msg := resp.GetIntervention()
		if !strings.Contains(msg, "tier ") || s.sup.GetLoopTier() != tier || !s.loop.GetActive() || !s.sup.GetP4LoopFired() {
			t.Fatalf("tier %d: intervention %q, state %v, loop %v", tier, msg, s.sup, s.loop)
		}
		if tier < 3 && !strings.Contains(msg, "not_found; try: list the directory; avoid: retrying the same path") {
			t.Fatalf("tier %d: the diagnosis advice is missing: %q", tier, msg)
		}
	}
	resp := end(t, client, s, 5, repeat)
	if resp.Stop == nil || !strings.Contains(resp.GetStop(), "tier-3") {
		t.Fatalf("after tier 3: %v", resp)
	}
	// Recovery: a clean iteration clears the loop and the tier.
	s.sup.LoopTier = 1
	resp = end(t, client, s, 6)
	if resp.Intervention != nil || s.loop != nil || s.sup.GetLoopTier() != 0 {
		t.Fatalf("recovery: %v, loop %v, state %v", resp, s.loop, s.sup)
	}
}

func TestGateSuppresses(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	s := &state{gate: &exocortexv1.ActionGate{Active: true, Tier: 4}}
	if resp := end(t, client, s, 2, &exocortexv1.Message{Signal: signals.Misformat}); resp.Intervention != nil {
		t.Fatalf("escalated while waiting for the operator: %v", resp)
	}
}

func TestLedgerRules(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	call := func(it int32, args string, ok bool) *exocortexv1.Evidence {
		return &exocortexv1.Evidence{ToolName: "code_execution", ArgsJson: args, Ok: ok, Iteration: it}
	}
	same := &state{ledger: &exocortexv1.EvidenceLedger{Entries: []*exocortexv1.Evidence{
		call(1, `{"code":"ls"}`, true), call(2, `{"code": "ls"}`, true), call(3, `{ "code":"ls" }`, true)}}}
	if resp := end(t, client, same, 3); !strings.Contains(resp.GetIntervention(), "same code_execution call was made 3 times") {
		t.Fatalf("same call: %v", resp)
	}
	fails := &state{ledger: &exocortexv1.EvidenceLedger{Entries: []*exocortexv1.Evidence{
		call(1, `{"a":1}`, false), call(2, `{"a":2}`, false), call(3, `{"a":3}`, false), call(4, `{"a":4}`, false)}}}
	if resp := end(t, client, fails, 4); !strings.Contains(resp.GetIntervention(), "4 tool calls in a row failed") {
		t.Fatalf("fail streak: %v", resp)
	}
	// Old entries (not this iteration) do not count again.
	if resp := end(t, client, fails, 9); resp.Intervention != nil {
		t.Fatalf("stale ledger escalated: %v", resp)
	}
}

func TestProactiveSignals(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	a := &exocortexv1.Evidence{ToolName: "text_editor", ArgsJson: `{"path":"a"}`, Ok: true}
	b := &exocortexv1.Evidence{ToolName: "code_execution", ArgsJson: `{"code":"ls"}`, Ok: true}
	resp, err := client.BeforeMainLLMCall(t.Context(), &exocortexv1.BeforeMainLLMCallRequest{
		Call: sdktest.Call("proactive_supervisor", sdktest.State(ledger(), &exocortexv1.EvidenceLedger{Entries: []*exocortexv1.Evidence{a, b, a, b}}),
			sdktest.State(completion(), &exocortexv1.Completion{LastSuccessIteration: 4})),
		Iteration: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := sdktest.Written(t, resp.GetChanges(), supSignals())
	if !ok || len(got.GetSignals()) != 1 || got.GetSignals()[0].GetKind() != "oscillation" {
		t.Fatalf("signals %v", got)
	}
	// The loop supervisor acts on it in the same iteration...
	s := &state{sigs: got, ledger: &exocortexv1.EvidenceLedger{Entries: []*exocortexv1.Evidence{a, b, a, b}}}
	if r := end(t, client, s, 5); !strings.Contains(r.GetIntervention(), "oscillation") {
		t.Fatalf("supervisor ignored the signal: %v", r)
	}
	// ...unless this iteration made new progress.
	fresh := &exocortexv1.Evidence{ToolName: "response_draft", ArgsJson: `{}`, Ok: true, Iteration: 5}
	s = &state{sigs: got, ledger: &exocortexv1.EvidenceLedger{Entries: []*exocortexv1.Evidence{a, b, a, b, fresh}}}
	if r := end(t, client, s, 5); r.Intervention != nil {
		t.Fatalf("escalated despite progress: %v", r)
	}
	// No progress for more than NoProgressLimit iterations.
	resp, err = client.BeforeMainLLMCall(t.Context(), &exocortexv1.BeforeMainLLMCallRequest{
		Call:      sdktest.Call("proactive_supervisor", sdktest.State(ledger(), &exocortexv1.EvidenceLedger{Entries: []*exocortexv1.Evidence{{ToolName: "x", Ok: false}}})),
		Iteration: NoProgressLimit + 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := sdktest.Written(t, resp.GetChanges(), supSignals()); len(got.GetSignals()) != 1 || got.GetSignals()[0].GetKind() != "no_progress" {
		t.Fatalf("no progress: %v", got)
	}
}
