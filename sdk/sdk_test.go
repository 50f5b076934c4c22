package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// ender is an extension at message_loop_end whose behaviour each test supplies.
type ender struct {
	spec sdk.Spec
	run  func(c *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error)
}

func (e ender) Spec() sdk.Spec {
	s := e.spec
	s.Hooks = []sdk.Hook{sdk.MessageLoopEnd(e)}
	return s
}

func (e ender) MessageLoopEnd(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	return e.run(c, req)
}

// multi handles three hooks, one of them a prompt-assembly hook.
type multi struct{ spec sdk.Spec }

func (m multi) Spec() sdk.Spec {
	s := m.spec
	s.Hooks = []sdk.Hook{sdk.ToolExecuteAfter(m), sdk.MessageLoopEnd(m), sdk.MessageLoopPromptsAfter(m)}
	return s
}

func (multi) ToolExecuteAfter(context.Context, *sdk.Call, *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	return nil, nil
}

func (multi) MessageLoopEnd(context.Context, *sdk.Call, *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	return nil, nil
}

func (multi) MessageLoopPromptsAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: []*exocortexv1.PromptBlock{
		{Title: "MULTI", Content: fmt.Sprintf("iteration %d", req.GetIteration())},
	}}, nil
}

// noHooks has a Spec and nothing else.
type noHooks struct{}

func (noHooks) Spec() sdk.Spec { return sdk.Spec{Name: "idle"} }

func tracker() sdk.Key[*exocortexv1.FailureTracker] { return sdk.KeyOf[*exocortexv1.FailureTracker]() }
func loopActive() sdk.Key[*exocortexv1.LoopActive]  { return sdk.KeyOf[*exocortexv1.LoopActive]() }
func note() sdk.Key[*wrapperspb.StringValue] {
	return sdk.NewKey[*wrapperspb.StringValue]("multi_note", exocortexv1.Scope_SCOPE_MONOLOGUE, "A note multi leaves for itself.")
}

func multiPlugin() sdk.Plugin {
	return sdk.Plugin{
		Name:    "multi_plugin",
		Version: "1.2.3",
		Extensions: []sdk.Extension{
			multi{spec: sdk.Spec{
				Name:            "multi",
				Order:           40,
				HookOrder:       map[exocortexv1.Hook]int{exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER: 90},
				Reads:           []sdk.KeyRef{tracker(), note(), tracker()},
				Writes:          []sdk.KeyRef{note(), loopActive().AsFlag()},
				Resets:          []sdk.KeyRef{loopActive()},
				InjectsPrompt:   true,
				Timeout:         1500*time.Millisecond + time.Microsecond,
				Required:        true,
				OncePerSession:  true,
				ConsumesSignals: []string{"repeat", "misformat"},
				Description:     "Handles three hooks.",
			}},
		},
		Tools: []sdk.Tool{{
			Name: "zeta", Description: "Z.", Parameters: `{"type":"object"}`, PromptFile: "agent.system.tool.zeta.md",
			Run: func(context.Context, *sdk.Call, json.RawMessage) (*exocortexv1.ToolResult, error) { return nil, nil },
		}, {
			Name: "alpha", Description: "A.",
			Run: func(context.Context, *sdk.Call, json.RawMessage) (*exocortexv1.ToolResult, error) { return nil, nil },
		}},
		Files: []*exocortexv1.FileSpec{
			{Id: "staging", Path: "$EXOCORTEX_HOME/staging.jsonl", Access: exocortexv1.Access_ACCESS_READ, User: "multi"},
			{Id: "catalog", Path: "$PROJECT/catalog.json", Access: exocortexv1.Access_ACCESS_READ_WRITE, User: "alpha"},
		},
	}
}

func TestManifestOfMultiHookExtension(t *testing.T) {
	client := sdktest.Serve(t, multiPlugin())
	got, err := client.Manifest(t.Context(), &exocortexv1.ManifestRequest{ProtocolVersion: sdk.ProtocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	entry := func(hook exocortexv1.Hook, order int32, injects bool) *exocortexv1.ExtensionSpec {
		return &exocortexv1.ExtensionSpec{
			Name: "multi", Hook: hook, Order: order,
			Reads:           []string{"failure_tracker", "multi_note"},
			Writes:          []string{"loop_active", "multi_note"},
			Resets:          []string{"loop_active"},
			InjectsPrompt:   injects,
			TimeoutMs:       1501,
			Required:        true,
			OncePerSession:  true,
			ConsumesSignals: []string{"misformat", "repeat"},
			Description:     "Handles three hooks.",
		}
	}
	want := &exocortexv1.ManifestResponse{ServesBatches: true, ServesDispatch: true,
		Plugin:  "multi_plugin",
		Version: "1.2.3",
		Extensions: []*exocortexv1.ExtensionSpec{
			entry(exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER, 90, true),
			entry(exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER, 40, false),
			entry(exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, 40, false),
		},
		StateKeys: []*exocortexv1.StateKeySpec{{
			Name: "multi_note", Type: "google.protobuf.StringValue", Scope: exocortexv1.Scope_SCOPE_MONOLOGUE,
			Owner: "multi", Doc: "A note multi leaves for itself.",
		}},
		Tools: []*exocortexv1.ToolSpec{
			{Name: "alpha", Description: "A.", Implemented: true},
			{Name: "zeta", Description: "Z.", ParametersJsonSchema: `{"type":"object"}`, Implemented: true, PromptFile: "agent.system.tool.zeta.md"},
		},
		Files: []*exocortexv1.FileSpec{
			{Id: "catalog", Path: "$PROJECT/catalog.json", Access: exocortexv1.Access_ACCESS_READ_WRITE, User: "alpha"},
			{Id: "staging", Path: "$EXOCORTEX_HOME/staging.jsonl", Access: exocortexv1.Access_ACCESS_READ, User: "multi"},
		},
	}
	if !proto.Equal(got, want) {
		t.Errorf("manifest:\n got %v\nwant %v", got, want)
	}
}

func TestManifestIsDeterministic(t *testing.T) {
	p := multiPlugin()
	p.Extensions = append(p.Extensions, ender{spec: sdk.Spec{Name: "another"}, run: nil})
	reordered := p
	reordered.Extensions = []sdk.Extension{p.Extensions[1], p.Extensions[0]}
	reordered.Tools = []sdk.Tool{p.Tools[1], p.Tools[0]}
	reordered.Files = []*exocortexv1.FileSpec{p.Files[1], p.Files[0]}

	var encoded [][]byte
	for range 3 {
		for _, pl := range []sdk.Plugin{p, reordered} {
			srv, err := sdk.NewServer(pl)
			if err != nil {
				t.Fatal(err)
			}
			m, err := srv.Manifest(t.Context(), &exocortexv1.ManifestRequest{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			encoded = append(encoded, b)
		}
	}
	for i, b := range encoded[1:] {
		if string(b) != string(encoded[0]) {
			t.Fatalf("manifest %d differs from manifest 0", i+1)
		}
	}
}

func TestManifestRefusesOtherProtocolVersion(t *testing.T) {
	client := sdktest.Serve(t, multiPlugin())
	_, err := client.Manifest(t.Context(), &exocortexv1.ManifestRequest{ProtocolVersion: 2})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "version") {
		t.Fatalf("got %v, want FailedPrecondition about the version", err)
	}
}

func TestNewServerRefusesInvalidPlugins(t *testing.T) {
	ok := func(*sdk.Call, *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
		return nil, nil
	}
	run := func(context.Context, *sdk.Call, json.RawMessage) (*exocortexv1.ToolResult, error) { return nil, nil }
	with := func(exts ...sdk.Extension) sdk.Plugin { return sdk.Plugin{Name: "p", Extensions: exts} }
	tests := []struct {
		name   string
		plugin sdk.Plugin
		want   []string // substrings of the error
	}{
		{"no name", sdk.Plugin{Extensions: []sdk.Extension{ender{spec: sdk.Spec{Name: "e"}, run: ok}}}, []string{"no Name"}},
		{"nothing served", sdk.Plugin{Name: "p"}, []string{"no extension and no tool"}},
		{"no hook", with(noHooks{}), []string{`"idle"`, "declares no hook"}},
		{"injects prompt off prompt hooks", with(ender{spec: sdk.Spec{Name: "e", InjectsPrompt: true}, run: ok}),
			[]string{`"e"`, "InjectsPrompt", "prompt-assembly hook"}},
		{"reset not written", with(ender{spec: sdk.Spec{Name: "e", Resets: []sdk.KeyRef{loopActive()}}, run: ok}),
			[]string{`"e"`, `resets key "loop_active"`, "Writes"}},
		{"plugin key named like a built-in", with(ender{spec: sdk.Spec{Name: "e",
			Reads: []sdk.KeyRef{sdk.NewKey[*exocortexv1.FailureTracker]("failure_tracker", exocortexv1.Scope_SCOPE_SESSION, "")}}, run: ok}),
			[]string{`"e"`, "built in", "sdk.KeyOf[*exocortexv1.FailureTracker]"}},
		{"plugin key without scope", with(ender{spec: sdk.Spec{Name: "e",
			Writes: []sdk.KeyRef{sdk.NewKey[*wrapperspb.StringValue]("n", exocortexv1.Scope_SCOPE_UNSPECIFIED, "")}}, run: ok}),
			[]string{`"e"`, `key "n"`, "scope"}},
		{"zero key", with(ender{spec: sdk.Spec{Name: "e", Reads: []sdk.KeyRef{sdk.Key[*wrapperspb.StringValue]{}}}, run: ok}),
			[]string{`"e"`, "Reads[0]", "zero key"}},
		{"plugin key declared twice differently", with(
			ender{spec: sdk.Spec{Name: "a", Writes: []sdk.KeyRef{sdk.NewKey[*wrapperspb.StringValue]("n", exocortexv1.Scope_SCOPE_SESSION, "")}}, run: ok},
			ender{spec: sdk.Spec{Name: "b", Reads: []sdk.KeyRef{sdk.NewKey[*wrapperspb.Int64Value]("n", exocortexv1.Scope_SCOPE_SESSION, "")}}, run: ok}),
			[]string{`"b"`, `key "n" is declared twice`}},
		{"duplicate extension", with(ender{spec: sdk.Spec{Name: "e"}, run: ok}, ender{spec: sdk.Spec{Name: "e"}, run: ok}),
			[]string{`two extensions are named "e"`}},
		{"hook order for another hook", with(ender{spec: sdk.Spec{Name: "e",
			HookOrder: map[exocortexv1.Hook]int{exocortexv1.Hook_HOOK_SYSTEM_PROMPT: 3}}, run: ok}),
			[]string{`"e"`, "system_prompt"}},
		{"unknown signal", with(ender{spec: sdk.Spec{Name: "e", ConsumesSignals: []string{"LOOP DETECTED."}}, run: ok}),
			[]string{`"e"`, `unknown signal "LOOP DETECTED."`, "repeat"}},
		{"negative timeout", with(ender{spec: sdk.Spec{Name: "e", Timeout: -time.Second}, run: ok}), []string{`"e"`, "negative Timeout"}},
		{"tool without Run", sdk.Plugin{Name: "p", Tools: []sdk.Tool{{Name: "t"}}}, []string{`tool "t"`, "no Run"}},
		{"tool with bad schema", sdk.Plugin{Name: "p", Tools: []sdk.Tool{{Name: "t", Parameters: "{", Run: run}}},
			[]string{`tool "t"`, "not valid JSON"}},
		{"tool with bad returns schema", sdk.Plugin{Name: "p", Tools: []sdk.Tool{{Name: "t", Returns: "{", Run: run}}},
			[]string{`tool "t"`, "Returns is not valid JSON"}},
		{"duplicate tool", sdk.Plugin{Name: "p", Tools: []sdk.Tool{{Name: "t", Run: run}, {Name: "t", Run: run}}},
			[]string{`two tools are named "t"`}},
		{"file without path", sdk.Plugin{Name: "p", Tools: []sdk.Tool{{Name: "t", Run: run}}, Files: []*exocortexv1.FileSpec{{Id: "x"}}},
			[]string{"Files[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sdk.NewServer(tt.plugin)
			if err == nil {
				t.Fatal("NewServer accepted an invalid plugin")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// lateKeyOf calls KeyOf inside Spec, where NewServer catches the panic.
type lateKeyOf struct{ ender }

func (lateKeyOf) Spec() sdk.Spec {
	return sdk.Spec{Name: "late", Reads: []sdk.KeyRef{sdk.KeyOf[*exocortexv1.Evidence]()}}
}

func TestKeyOfPanicsForAMessageThatIsNoKey(t *testing.T) {
	_, err := sdk.NewServer(sdk.Plugin{Name: "p", Extensions: []sdk.Extension{lateKeyOf{}}})
	for _, w := range []string{"Spec panicked", "exocortex.v1.Evidence", "sdk.NewKey"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("NewServer error %v does not mention %q", err, w)
		}
	}
}

func TestKeyOfEveryBuiltinKey(t *testing.T) {
	// One line per message of state.proto that carries the option; BuiltinKeys,
	// which reads the descriptors, catches a key added without a line here.
	got := map[string]sdk.KeyRef{}
	for _, k := range []sdk.KeyRef{
		sdk.KeyOf[*exocortexv1.ActionGate](),
		sdk.KeyOf[*exocortexv1.BeliefState](),
		sdk.KeyOf[*exocortexv1.CodeQuality](),
		sdk.KeyOf[*exocortexv1.Completion](),
		sdk.KeyOf[*exocortexv1.ContextFill](),
		sdk.KeyOf[*exocortexv1.ErrorDiagnosis](),
		sdk.KeyOf[*exocortexv1.EvidenceLedger](),
		sdk.KeyOf[*exocortexv1.FailureTracker](),
		sdk.KeyOf[*exocortexv1.HTNPlan](),
		sdk.KeyOf[*exocortexv1.LoopActive](),
		sdk.KeyOf[*exocortexv1.MaintenanceState](),
		sdk.KeyOf[*exocortexv1.MemoryCandidates](),
		sdk.KeyOf[*exocortexv1.MemoryCatalogBuilt](),
		sdk.KeyOf[*exocortexv1.OperatorProfile](),
		sdk.KeyOf[*exocortexv1.Orchestration](),
		sdk.KeyOf[*exocortexv1.ReasoningState](),
		sdk.KeyOf[*exocortexv1.SeenTools](),
		sdk.KeyOf[*exocortexv1.SleepState](),
		sdk.KeyOf[*exocortexv1.SupervisorSignals](),
		sdk.KeyOf[*exocortexv1.SupervisorState](),
		sdk.KeyOf[*exocortexv1.TaskState](),
		sdk.KeyOf[*exocortexv1.ToolCatalog](),
		sdk.KeyOf[*exocortexv1.WorkingMemory](),
		sdk.KeyOf[*exocortexv1.WriteLog](),
	} {
		if !k.Builtin() {
			t.Errorf("%s: Builtin() is false", k.Name())
		}
		got[k.Name()] = k
	}
	builtins := sdk.BuiltinKeys()
	if len(builtins) != len(got) {
		t.Errorf("state.proto declares %d keys, the test covers %d", len(builtins), len(got))
	}
	for _, want := range builtins {
		k, ok := got[want.Name]
		if !ok {
			t.Errorf("built-in key %q (%s) has no KeyOf line in this test", want.Name, want.Type)
			continue
		}
		if ks := k.StateKeySpec(); !proto.Equal(ks, want) {
			t.Errorf("KeyOf for %q: got %v, want %v", want.Name, ks, want)
		}
		if want.Scope == exocortexv1.Scope_SCOPE_UNSPECIFIED || want.Owner == "" || want.Doc == "" {
			t.Errorf("built-in key %q lacks scope, owner or doc: %v", want.Name, want)
		}
	}
	if ks := sdk.KeyOf[*exocortexv1.LoopActive]().StateKeySpec(); !ks.Flag || ks.Type != "exocortex.v1.LoopActive" || ks.Scope != exocortexv1.Scope_SCOPE_SESSION {
		t.Errorf("loop_active: %v", ks)
	}
}

func TestStateRoundTrip(t *testing.T) {
	p := sdk.Plugin{Name: "p", Extensions: []sdk.Extension{ender{
		spec: sdk.Spec{Name: "counter", Reads: []sdk.KeyRef{tracker(), loopActive()}, Writes: []sdk.KeyRef{tracker(), loopActive()}},
		run: func(c *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
			ft, ok := tracker().Get(c)
			if !ok {
				ft = &exocortexv1.FailureTracker{Failures: map[string]int32{}}
			}
			ft.Failures["shell"]++
			tracker().Set(c, ft)
			// Read-your-writes within the call.
			again, _ := tracker().Get(c)
			if _, had := loopActive().Get(c); had {
				loopActive().Reset(c)
			}
			msg := fmt.Sprintf("shell=%d", again.GetFailures()["shell"])
			return &exocortexv1.MessageLoopEndResponse{Intervention: &msg}, nil
		},
	}}}
	client := sdktest.Serve(t, p)

	// First call: no state yet.
	resp, err := client.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{Call: sdktest.Call("counter")})
	if err != nil {
		t.Fatal(err)
	}
	ft, ok := sdktest.Written(t, resp.GetChanges(), tracker())
	if !ok || ft.GetFailures()["shell"] != 1 || resp.GetIntervention() != "shell=1" {
		t.Fatalf("first call: wrote %v (%v), intervention %q", ft, ok, resp.GetIntervention())
	}
	if sdktest.WasReset(resp.GetChanges(), loopActive()) {
		t.Error("first call reset loop_active, which had no value")
	}

	// Second call: the host hands back what was written, plus loop_active.
	resp, err = client.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{Call: sdktest.Call("counter",
		sdktest.State(tracker(), ft),
		sdktest.State(loopActive(), &exocortexv1.LoopActive{Active: true}))})
	if err != nil {
		t.Fatal(err)
	}
	ft, ok = sdktest.Written(t, resp.GetChanges(), tracker())
	if !ok || ft.GetFailures()["shell"] != 2 || resp.GetIntervention() != "shell=2" {
		t.Fatalf("second call: wrote %v (%v), intervention %q", ft, ok, resp.GetIntervention())
	}
	if !sdktest.WasReset(resp.GetChanges(), loopActive()) {
		t.Errorf("second call did not reset loop_active: %v", resp.GetChanges())
	}
	if _, written := sdktest.Written(t, resp.GetChanges(), loopActive()); written {
		t.Error("loop_active is both reset and written")
	}
}

func TestNilResponseMeansNoChange(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "p", Extensions: []sdk.Extension{ender{spec: sdk.Spec{Name: "quiet"},
		run: func(*sdk.Call, *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
			return nil, nil
		}}}})
	resp, err := client.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{Call: sdktest.Call("quiet")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Changes == nil || len(resp.Changes.Writes)+len(resp.Changes.Resets) != 0 || resp.Intervention != nil || resp.Stop != nil {
		t.Errorf("got %v, want an empty response with empty changes", resp)
	}
}

func TestUndeclaredStateAccessIsRefused(t *testing.T) {
	tests := []struct {
		name string
		spec sdk.Spec
		do   func(c *sdk.Call)
		want []string
	}{
		{"read", sdk.Spec{Name: "nosy"}, func(c *sdk.Call) {
			if _, ok := tracker().Get(c); ok {
				panic("Get of an undeclared key returned a value")
			}
		}, []string{`extension "nosy"`, `read of state key "failure_tracker"`, "Reads"}},
		{"write", sdk.Spec{Name: "pushy", Reads: []sdk.KeyRef{tracker()}}, func(c *sdk.Call) {
			tracker().Set(c, &exocortexv1.FailureTracker{})
		}, []string{`extension "pushy"`, `write of state key "failure_tracker"`, "Writes"}},
		{"reset", sdk.Spec{Name: "eraser"}, func(c *sdk.Call) {
			loopActive().Reset(c)
		}, []string{`extension "eraser"`, `write of state key "loop_active"`, "Writes"}},
		{"nil value", sdk.Spec{Name: "nil_writer", Writes: []sdk.KeyRef{tracker()}}, func(c *sdk.Call) {
			tracker().Set(c, nil)
		}, []string{`extension "nil_writer"`, "nil value", "Reset"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := sdktest.Serve(t, sdk.Plugin{Name: "p", Extensions: []sdk.Extension{ender{spec: tt.spec,
				run: func(c *sdk.Call, _ *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
					tt.do(c)
					if c.Err() == nil {
						return nil, errors.New("Call.Err is nil after a refused access")
					}
					stop := "should not arrive"
					return &exocortexv1.MessageLoopEndResponse{Stop: &stop}, nil
				}}}})
			// The host would not send an undeclared key; send one anyway to show
			// the SDK refuses it by itself.
			resp, err := client.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{
				Call: sdktest.Call(tt.spec.Name, sdktest.State(tracker(), &exocortexv1.FailureTracker{}))})
			if status.Code(err) != codes.FailedPrecondition {
				t.Fatalf("got %v (response %v), want FailedPrecondition", err, resp)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestValueOfAnotherTypeIsAnError(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "p", Extensions: []sdk.Extension{ender{
		spec: sdk.Spec{Name: "reader", Reads: []sdk.KeyRef{tracker()}},
		run: func(c *sdk.Call, _ *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
			if _, ok := tracker().Get(c); ok {
				return nil, errors.New("Get decoded a value of another type")
			}
			return nil, nil
		}}}})
	wrong := sdktest.State(loopActive(), &exocortexv1.LoopActive{Active: true})
	wrong.Key = "failure_tracker"
	_, err := client.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{Call: sdktest.Call("reader", wrong)})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), `state key "failure_tracker"`) ||
		!strings.Contains(err.Error(), "LoopActive") {
		t.Fatalf("got %v", err)
	}
}

func TestPanicBecomesErrorAndPluginKeepsServing(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "p", Extensions: []sdk.Extension{ender{spec: sdk.Spec{Name: "fragile"},
		run: func(_ *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
			if req.GetReply() == "boom" {
				var m map[string]int
				m["x"] = 1 // a nil map write: a runtime panic
			}
			ok := "fine"
			return &exocortexv1.MessageLoopEndResponse{Intervention: &ok}, nil
		}}}})
	_, err := client.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{Call: sdktest.Call("fragile"), Reply: "boom"})
	if status.Code(err) != codes.Internal {
		t.Fatalf("got %v, want Internal", err)
	}
	for _, w := range []string{`extension "fragile" panicked at message_loop_end`, "assignment to entry in nil map", "sdk_test.TestPanicBecomesErrorAndPluginKeepsServing"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	resp, err := client.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{Call: sdktest.Call("fragile")})
	if err != nil || resp.GetIntervention() != "fine" {
		t.Fatalf("after the panic: %v, %v", resp, err)
	}
}

func TestExtensionErrors(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "p", Extensions: []sdk.Extension{
		ender{spec: sdk.Spec{Name: "failing"}, run: func(*sdk.Call, *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
			return nil, errors.New("disk full")
		}},
		ender{spec: sdk.Spec{Name: "status"}, run: func(*sdk.Call, *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
			return nil, status.Error(codes.ResourceExhausted, "slow down")
		}},
		multi{spec: sdk.Spec{Name: "undeclared_blocks"}},
	}})
	_, err := client.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{Call: sdktest.Call("failing")})
	if status.Code(err) != codes.Unknown || !strings.Contains(err.Error(), `extension "failing" at message_loop_end: disk full`) {
		t.Errorf("plain error: got %v", err)
	}
	_, err = client.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{Call: sdktest.Call("status")})
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("status error: got %v, want it passed through", err)
	}
	_, err = client.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{Call: sdktest.Call("nobody")})
	if status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), `no extension "nobody" at message_loop_end`) ||
		!strings.Contains(err.Error(), "failing, status, undeclared_blocks") {
		t.Errorf("unknown extension: got %v", err)
	}
	_, err = client.SystemPrompt(t.Context(), &exocortexv1.SystemPromptRequest{Call: sdktest.Call("failing")})
	if status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), "none at this hook") {
		t.Errorf("extension at a hook it does not handle: got %v", err)
	}
	_, err = client.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("request without HookCall: got %v", err)
	}
	_, err = client.MessageLoopPromptsAfter(t.Context(), &exocortexv1.MessageLoopPromptsAfterRequest{Call: sdktest.Call("undeclared_blocks")})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "InjectsPrompt") {
		t.Errorf("prompt blocks without InjectsPrompt: got %v", err)
	}
}

func TestPromptBlocks(t *testing.T) {
	p := multiPlugin()
	client := sdktest.Serve(t, p)
	resp, err := client.MessageLoopPromptsAfter(t.Context(), &exocortexv1.MessageLoopPromptsAfterRequest{
		Call: sdktest.Call("multi"), Iteration: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetPromptBlocks()) != 1 || resp.GetPromptBlocks()[0].GetContent() != "iteration 7" || resp.GetChanges() == nil {
		t.Errorf("got %v", resp)
	}
}

func TestTools(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "toolbox", Tools: []sdk.Tool{
		{Name: "upper", Run: func(_ context.Context, c *sdk.Call, args json.RawMessage) (*exocortexv1.ToolResult, error) {
			var a struct{ Text string }
			if err := json.Unmarshal(args, &a); err != nil {
				return nil, err
			}
			return &exocortexv1.ToolResult{Content: strings.ToUpper(a.Text) + " in " + c.Context().GetSessionId()}, nil
		}},
		{Name: "failing", Run: func(context.Context, *sdk.Call, json.RawMessage) (*exocortexv1.ToolResult, error) {
			return &exocortexv1.ToolResult{Content: "partial output"}, errors.New("exit status 2")
		}},
		{Name: "stateful", Run: func(_ context.Context, c *sdk.Call, _ json.RawMessage) (*exocortexv1.ToolResult, error) {
			tracker().Get(c)
			return nil, nil
		}},
		{Name: "panicky", Run: func(context.Context, *sdk.Call, json.RawMessage) (*exocortexv1.ToolResult, error) {
			panic("tool bug")
		}},
	}})
	call := func(name, args string) (*exocortexv1.ExecuteToolResponse, error) {
		return client.ExecuteTool(t.Context(), &exocortexv1.ExecuteToolRequest{
			Call: sdktest.Call(""), ToolCall: &exocortexv1.ToolCall{Id: "1", Name: name, ArgsJson: args}})
	}
	resp, err := call("upper", `{"text":"hi"}`)
	if err != nil || resp.GetResult().GetContent() != "HI in sdktest-session" {
		t.Errorf("upper: %v, %v", resp, err)
	}
	resp, err = call("upper", "")
	if err != nil || resp.GetResult().GetContent() != " in sdktest-session" {
		t.Errorf("upper without args: %v, %v", resp, err)
	}
	resp, err = call("failing", "{}")
	if err != nil || resp.GetResult().GetError() != "exit status 2" || resp.GetResult().GetContent() != "partial output" {
		t.Errorf("failing: %v, %v", resp, err)
	}
	_, err = call("upper", "{not json")
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), `tool "upper"`) {
		t.Errorf("bad args: %v", err)
	}
	_, err = call("missing", "{}")
	if status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), `no tool "missing"`) || !strings.Contains(err.Error(), "failing, panicky, stateful, upper") {
		t.Errorf("unknown tool: %v", err)
	}
	_, err = call("stateful", "{}")
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), `tool "stateful"`) {
		t.Errorf("tool state access: %v", err)
	}
	_, err = call("panicky", "{}")
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), `tool "panicky" panicked at ExecuteTool: tool bug`) {
		t.Errorf("panicking tool: %v", err)
	}
}

func TestHookNames(t *testing.T) {
	if got := sdk.HookName(exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL); got != "before_main_llm_call" {
		t.Errorf("HookName = %q", got)
	}
	var prompt []string
	for h := range exocortexv1.Hook_name {
		if sdk.IsPromptHook(exocortexv1.Hook(h)) {
			prompt = append(prompt, sdk.HookName(exocortexv1.Hook(h)))
		}
	}
	if len(prompt) != 3 {
		t.Errorf("prompt hooks: %v", prompt)
	}
}

func TestConcurrentCalls(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "p", Extensions: []sdk.Extension{failureCounter{}}})
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := range 20 {
				tool := fmt.Sprintf("tool%d", g)
				resp, err := client.ToolExecuteAfter(t.Context(), &exocortexv1.ToolExecuteAfterRequest{
					Call: sdktest.Call("failure_counter", sdktest.State(tracker(),
						&exocortexv1.FailureTracker{Failures: map[string]int32{tool: int32(i)}})),
					ToolCall: &exocortexv1.ToolCall{Name: tool},
					Result:   &exocortexv1.ToolResult{Error: "failed"},
				})
				if err == nil {
					var ft exocortexv1.FailureTracker
					err = resp.GetChanges().GetWrites()[0].GetValue().UnmarshalTo(&ft)
					if err == nil && ft.Failures[tool] != int32(i+1) {
						err = fmt.Errorf("%s call %d: failures %v", tool, i, ft.Failures)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
