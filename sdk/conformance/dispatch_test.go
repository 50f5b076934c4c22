package conformance

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/core/state"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/protocol"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// dispatchCase is one batch sent over a Dispatch stream, named for the failure
// messages.
type dispatchCase struct {
	name string
	req  *exocortexv1.BatchRequest
}

// dispatchCases are the batches of testBatches (state passed along, the stop
// after a result that sets more than state and the rest sent again, the history,
// the prompt so far, errors and refused writes as results, an extension the
// plugin does not serve),
// a batch of every extension at each hook, and an empty batch; no two in a row
// are answered alike, so an answer to the wrong batch shows.
func (s *suite) dispatchCases(t *testing.T) []dispatchCase {
	t.Helper()
	store := state.NewStore(s.h.Registry())
	end := exocortexv1.Hook_HOOK_MESSAGE_LOOP_END
	calls := func(names ...string) []*exocortexv1.HookCall {
		var out []*exocortexv1.HookCall
		for _, n := range names {
			hc := &exocortexv1.HookCall{Extension: n}
			if n != "nobody" {
				e := s.ext(t, end, n)
				hc = s.hookCall(e, "m-dispatch")
				hc.State = store.Read(e.Access)
			}
			out = append(out, hc)
		}
		return out
	}
	ending := func(name string, req *exocortexv1.MessageLoopEndRequest, names ...string) dispatchCase {
		return dispatchCase{name, batchRequest(end, req, calls(names...))}
	}
	relays := []string{"relay_a", "relay_b", "relay_c"}
	hook := []string{"echo", "nosy", "repeat_watch", "fragile", "relay_a", "relay_b", "relay_c"}

	cases := []dispatchCase{ending("relays, nothing held", &exocortexv1.MessageLoopEndRequest{Iteration: 1}, relays...)}
	if err := store.Set("conformance_seen", wrapperspb.String("hello")); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, ending("relays, hello held", &exocortexv1.MessageLoopEndRequest{Iteration: 7}, relays...))
	// The whole hook, and the rest after each batch stopped (after echo, nosy and
	// fragile, as testBatches/stop finds).
	for _, rest := range [][]string{hook, hook[1:], hook[2:], hook[4:]} {
		cases = append(cases, ending("message_loop_end from "+rest[0], &exocortexv1.MessageLoopEndRequest{Iteration: 2, Reply: "hi"}, rest...))
	}
	echo := s.ext(t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE, "echo")
	cases = append(cases, dispatchCase{"echo with the history", batchRequest(exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE,
		&exocortexv1.MessageLoopPromptsBeforeRequest{Iteration: 2, History: msgs(2)}, []*exocortexv1.HookCall{s.hookCall(echo, "m")})})
	for _, tc := range promptCases() {
		_, req := tc.batch(t, s, "m-dispatch")
		cases = append(cases, dispatchCase{"the prompt so far at " + tc.name, req})
	}
	for _, reply := range []string{"fail", "status", "boom"} {
		cases = append(cases, ending("fragile, reply "+reply, &exocortexv1.MessageLoopEndRequest{Iteration: 3, Reply: reply},
			append([]string{"fragile"}, relays...)...))
	}
	cases = append(cases,
		ending("nosy's refused write", &exocortexv1.MessageLoopEndRequest{Reply: "write"}, "nosy", "repeat_watch", "fragile"),
		ending("an extension it does not serve", &exocortexv1.MessageLoopEndRequest{}, "nobody", "repeat_watch"),
		ending("no extension", &exocortexv1.MessageLoopEndRequest{Iteration: 9}))
	for _, info := range hooks.All() {
		var cs []*exocortexv1.HookCall
		for _, e := range s.h.Extensions(info.Hook) {
			hc := s.hookCall(e, "m-"+info.Name)
			hc.State = store.Read(e.Access)
			cs = append(cs, hc)
		}
		cases = append(cases, dispatchCase{"every extension at " + info.Name, batchRequest(info.Hook, hookRequest(info.Hook, nil), cs)})
	}
	return cases
}

// withoutDurations is resp with every result's duration_us cleared: the one
// field two answers to the same batch need not share.
func withoutDurations(resp *exocortexv1.BatchResponse) *exocortexv1.BatchResponse {
	out := proto.Clone(resp).(*exocortexv1.BatchResponse)
	for _, r := range out.GetResults() {
		r.DurationUs = 0
	}
	return out
}

// testDispatch runs the batches of dispatchCases over one Dispatch stream to a
// process of the plugin of its own (go-plugin directly, as the host's connection
// is), each answered, in order, exactly as RunBatch answers it on the same
// connection while the stream is open; then the host closes its side and the
// stream ends without an error. A batch RunBatch refuses ends the stream with
// the refusal, and the plugin serves the next stream.
func (s *suite) testDispatch(t *testing.T) {
	if !s.p.Manifest().GetServesDispatch() {
		t.Fatal("the manifest does not say serves_dispatch")
	}
	c := discover.Scan([]discover.Dir{{Path: s.dir, Source: discover.User}}).Plugins[0]
	clientLog := &sdktest.Buffer{}
	client := bareClient(c, clientLog)
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatalf("handshake: %v\n%s", err, clientLog)
	}
	raw, err := rpc.Dispense(protocol.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	pc := raw.(exocortexv1.PluginClient)

	cases := s.dispatchCases(t)
	wants := make([]*exocortexv1.BatchResponse, len(cases))
	stream, err := pc.Dispatch(t.Context())
	if err != nil {
		t.Fatalf("opening a Dispatch stream: %v", err)
	}
	for i, tc := range cases {
		want, err := pc.RunBatch(t.Context(), tc.req)
		if err != nil {
			t.Fatalf("RunBatch of batch %d (%s): %v", i, tc.name, err)
		}
		wants[i] = withoutDurations(want)
		if err := stream.Send(tc.req); err != nil {
			t.Fatalf("sending batch %d (%s): %v", i, tc.name, err)
		}
		got, err := stream.Recv()
		if err != nil {
			t.Fatalf("the answer to batch %d (%s): %v", i, tc.name, err)
		}
		if got := withoutDurations(got); !proto.Equal(got, wants[i]) {
			t.Errorf("batch %d (%s) over Dispatch:\n got %v\nwant %v (RunBatch's answer)", i, tc.name, got, wants[i])
		}
		if i > 0 && proto.Equal(wants[i], wants[i-1]) {
			t.Errorf("batches %d (%s) and %d (%s) are answered alike: the suite cannot tell their order", i-1, cases[i-1].name, i, tc.name)
		}
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if resp, err := stream.Recv(); err != io.EOF {
		t.Errorf("after the host closed its side: %v, %v; want the stream to end cleanly (io.EOF)", resp, err)
	}

	// A batch RunBatch refuses ends the stream with its refusal.
	stream, err = pc.Dispatch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(cases[0].req); err != nil {
		t.Fatal(err)
	}
	if got, err := stream.Recv(); err != nil || !proto.Equal(withoutDurations(got), wants[0]) {
		t.Fatalf("the first batch on a second stream: %v, %v; want %v", got, err, wants[0])
	}
	if err := stream.Send(&exocortexv1.BatchRequest{Calls: cases[0].req.GetCalls()}); err != nil {
		t.Fatal(err)
	}
	if resp, err := stream.Recv(); status.Code(err) != codes.InvalidArgument || !strings.Contains(fmt.Sprint(err), "a batch without a hook request") {
		t.Errorf("a batch without its hook's request over Dispatch: %v, %v; want the stream to end with InvalidArgument", resp, err)
	}

	// The plugin serves the next stream.
	stream, err = pc.Dispatch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(cases[1].req); err != nil {
		t.Fatal(err)
	}
	if got, err := stream.Recv(); err != nil || !proto.Equal(withoutDurations(got), wants[1]) {
		t.Errorf("a batch on a third stream: %v, %v; want %v", got, err, wants[1])
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != io.EOF {
		t.Errorf("the third stream did not end cleanly: %v", err)
	}
}
