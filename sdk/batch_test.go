package sdk_test

import (
	"context"
	"fmt"
	"io"
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

func (e before) Spec() sdk.Spec {
	s := e.spec
	s.Hooks = []sdk.Hook{sdk.MessageLoopPromptsBefore(e)}
	return s
}

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

// TestDispatch: batches over one stream are answered one by one, each as
// RunBatch answers it, until the host closes the stream.
func TestDispatch(t *testing.T) {
	note := sdk.NewKey[*wrapperspb.StringValue]("dispatch_note", exocortexv1.Scope_SCOPE_MONOLOGUE, "a note")
	exts := []sdk.Extension{
		ender{sdk.Spec{Name: "write", Order: 1, Writes: []sdk.KeyRef{note}}, func(c *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
			note.Set(c, wrapperspb.String(fmt.Sprint("iteration ", req.GetIteration())))
			return nil, nil
		}},
		ender{sdk.Spec{Name: "second", Order: 2}, func(c *sdk.Call, _ *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
			return nil, nil
		}},
	}
	client := sdktest.Serve(t, sdk.Plugin{Name: "dispatchy", Extensions: exts})
	stream, err := client.Dispatch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for it := int32(1); it <= 3; it++ {
		req := &exocortexv1.BatchRequest{
			Request:   &exocortexv1.BatchRequest_MessageLoopEnd{MessageLoopEnd: &exocortexv1.MessageLoopEndRequest{Iteration: it}},
			Calls:     []*exocortexv1.HookCall{sdktest.Call("write"), sdktest.Call("second")},
			TimeoutMs: 5000,
		}
		if err := stream.Send(req); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetResults()) != 2 {
			t.Fatalf("iteration %d: %d results, want 2", it, len(resp.GetResults()))
		}
		v, ok := sdktest.Written(t, resp.GetResults()[0].GetMessageLoopEnd().GetChanges(), note)
		if want := fmt.Sprint("iteration ", it); !ok || v.GetValue() != want {
			t.Errorf("iteration %d: write wrote %v, want %q", it, v, want)
		}
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != io.EOF {
		t.Errorf("the stream did not end cleanly after the host closed it: %v", err)
	}
}

// after is an extension at message_loop_prompts_after that records what it was
// sent.
type after struct {
	spec sdk.Spec
	seen map[string]string
}

func (e after) Spec() sdk.Spec {
	s := e.spec
	s.Hooks = []sdk.Hook{sdk.MessageLoopPromptsAfter(e)}
	return s
}

func (e after) MessageLoopPromptsAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	e.seen[e.spec.Name] = fmt.Sprintf("extras=%d tokens=%d history=%d num_ctx=%d", len(req.GetExtras()), req.GetPromptTokens(), len(req.GetHistory()), req.GetNumCtx())
	return nil, nil
}

// TestBatchSendsThePromptSoFarToItsReaders: in a batch, only an extension that
// declares ReadsPrompt gets the extras and prompt tokens (and ReadsHistory the
// history), as its own call would.
func TestBatchSendsThePromptSoFarToItsReaders(t *testing.T) {
	seen := map[string]string{}
	client := sdktest.Serve(t, sdk.Plugin{Name: "prompty", Extensions: []sdk.Extension{
		after{sdk.Spec{Name: "skimmer", Order: 1}, seen},
		after{sdk.Spec{Name: "reader", Order: 2, ReadsPrompt: true}, seen},
		after{sdk.Spec{Name: "historian", Order: 3, ReadsHistory: true}, seen},
	}})
	_, err := client.RunBatch(t.Context(), &exocortexv1.BatchRequest{
		Request: &exocortexv1.BatchRequest_MessageLoopPromptsAfter{MessageLoopPromptsAfter: &exocortexv1.MessageLoopPromptsAfterRequest{
			Extras: []*exocortexv1.PromptBlock{{Title: "T", Content: "c"}}, PromptTokens: 900, NumCtx: 8192,
			History: []*exocortexv1.Message{{Role: "user", Content: "hi"}},
		}},
		Calls: []*exocortexv1.HookCall{sdktest.Call("skimmer"), sdktest.Call("reader"), sdktest.Call("historian")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"skimmer":   "extras=0 tokens=0 history=0 num_ctx=8192",
		"reader":    "extras=1 tokens=900 history=0 num_ctx=8192",
		"historian": "extras=0 tokens=0 history=1 num_ctx=8192",
	} {
		if seen[name] != want {
			t.Errorf("%s was sent %s, want %s", name, seen[name], want)
		}
	}
}
