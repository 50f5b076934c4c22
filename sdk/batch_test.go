package sdk_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// before is an extension at message_loop_prompts_before whose behaviour each
// case supplies.
type before struct {
	spec sdk.Spec
	run  func(c *sdk.Call, req *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error)
}

func (e before) Spec() sdk.Spec { return e.spec }

func (e before) MessageLoopPromptsBefore(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
	return e.run(c, req)
}

func TestRunBatch(t *testing.T) {
	note := sdk.NewKey[*wrapperspb.StringValue]("batch_note", exocortexv1.Scope_SCOPE_MONOLOGUE, "a note")
	seen := map[string]string{}
	record := func(name string) func(*sdk.Call, *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
		return func(c *sdk.Call, req *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
			v, _ := note.Get(c)
			seen[name] = fmt.Sprintf("note=%q history=%d iteration=%d", v.GetValue(), len(req.GetHistory()), req.GetIteration())
			req.Iteration = 99 // in place: must not reach the next extension
			return nil, nil
		}
	}
	exts := []sdk.Extension{
		before{sdk.Spec{Name: "write", Order: 1, Writes: []sdk.KeyRef{note}}, func(c *sdk.Call, req *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
			note.Set(c, wrapperspb.String(fmt.Sprintf("from write at %d", req.GetIteration())))
			return nil, nil
		}},
		before{sdk.Spec{Name: "read", Order: 2, Reads: []sdk.KeyRef{note}, ReadsHistory: true}, record("read")},
		before{sdk.Spec{Name: "fail", Order: 3}, func(*sdk.Call, *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
			return nil, fmt.Errorf("fail fails")
		}},
		before{sdk.Spec{Name: "reset", Order: 4, Writes: []sdk.KeyRef{note}, Resets: []sdk.KeyRef{note}}, func(c *sdk.Call, _ *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
			note.Reset(c)
			return nil, nil
		}},
		before{sdk.Spec{Name: "read_undeclared_history", Order: 5, Reads: []sdk.KeyRef{note}}, record("read_undeclared_history")},
		before{sdk.Spec{Name: "inject", Order: 6, InjectsPrompt: true}, func(*sdk.Call, *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
			return &exocortexv1.MessageLoopPromptsBeforeResponse{PromptBlocks: []*exocortexv1.PromptBlock{{Title: "T", Content: "c"}}}, nil
		}},
		before{sdk.Spec{Name: "never", Order: 7}, record("never")},
	}
	client := sdktest.Serve(t, sdk.Plugin{Name: "batchy", Extensions: exts})
	m, err := client.Manifest(t.Context(), &exocortexv1.ManifestRequest{ProtocolVersion: sdk.ProtocolVersion})
	if err != nil || !m.GetServesBatches() {
		t.Fatalf("manifest: serves_batches=%v, %v", m.GetServesBatches(), err)
	}
	req := &exocortexv1.BatchRequest{
		Request: &exocortexv1.BatchRequest_MessageLoopPromptsBefore{MessageLoopPromptsBefore: &exocortexv1.MessageLoopPromptsBeforeRequest{
			Iteration: 2, History: []*exocortexv1.Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}},
		}},
	}
	for _, e := range exts {
		req.Calls = append(req.Calls, sdktest.Call(e.Spec().Name))
	}
	resp, err := client.RunBatch(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	rs := resp.GetResults()
	// The batch stops after inject's block: "never" must be sent again.
	if len(rs) != 6 {
		t.Fatalf("%d results, want 6 (up to and including inject)", len(rs))
	}
	if !strings.Contains(rs[2].GetError(), "fail fails") || rs[2].GetMessageLoopPromptsBefore() != nil {
		t.Errorf("fail's result: %+v, want its error and no response", rs[2])
	}
	if got := rs[5].GetMessageLoopPromptsBefore().GetPromptBlocks(); len(got) != 1 {
		t.Errorf("inject's blocks: %v", got)
	}
	if v, ok := sdktest.Written(t, rs[0].GetMessageLoopPromptsBefore().GetChanges(), note); !ok || v.GetValue() != "from write at 2" {
		t.Errorf("write's change: %v %v", v, ok)
	}
	for name, want := range map[string]string{
		"read":                    `note="from write at 2" history=2 iteration=2`,
		"read_undeclared_history": `note="" history=0 iteration=2`,
	} {
		if seen[name] != want {
			t.Errorf("%s saw %s, want %s", name, seen[name], want)
		}
	}
	if _, ran := seen["never"]; ran {
		t.Error("the extension after inject ran in the same batch")
	}
}
