package conformance

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/state"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// batcher sends message_loop_end batches to the plugin through the host, as the
// loop does: each extension's HookCall carries the values the store held when the
// batch began, and the results' changes are applied to the store in order.
type batcher struct {
	s     *suite
	store *state.Store
}

// run sends one batch of the named extensions and returns the results, applying
// their changes to the store.
func (b *batcher) run(t *testing.T, req *exocortexv1.MessageLoopEndRequest, names ...string) []*exocortexv1.BatchResult {
	t.Helper()
	var exts []*host.Extension
	var calls []*exocortexv1.HookCall
	for _, n := range names {
		e := b.s.ext(t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, n)
		hc := b.s.hookCall(e, "m-batch")
		hc.State = b.store.Read(e.Access)
		exts = append(exts, e)
		calls = append(calls, hc)
	}
	start := time.Now()
	resp, err := host.CallBatch(t.Context(), exts, batchRequest(exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, req, calls))
	if err != nil {
		t.Fatalf("a batch of %s: %v", strings.Join(names, ", "), err)
	}
	elapsed := time.Since(start)
	results := resp.GetResults()
	if len(results) == 0 || len(results) > len(names) {
		t.Fatalf("a batch of %d extensions answered %d results", len(names), len(results))
	}
	var total time.Duration
	for i, r := range results {
		total += time.Duration(r.GetDurationUs()) * time.Microsecond
		if r.GetError() != "" {
			if r.GetResponse() != nil {
				t.Errorf("%s's result has an error and a response: %v", names[i], r)
			}
			continue
		}
		if r.GetMessageLoopEnd() == nil {
			t.Fatalf("%s's result is not a message_loop_end response: %v", names[i], r)
		}
		if err := b.store.Apply(exts[i].Access, r.GetMessageLoopEnd().GetChanges()); err != nil {
			t.Errorf("the host's store refuses %s's changes: %v", names[i], err)
		}
	}
	// Each result's duration is the extension's own time in the plugin: together
	// they fit in the round trip.
	if total > elapsed {
		t.Errorf("the results' durations add up to %v, more than the whole round trip (%v)", total, elapsed)
	}
	return results
}

// seenIn returns the value a result writes to conformance_seen, "(reset)" for a
// reset, "" for neither (or no response).
func seenIn(t *testing.T, r *exocortexv1.BatchResult) string {
	t.Helper()
	var ch *exocortexv1.StateChanges
	if resp, ok := batchResponseOf(r, hookOf(r)).(changer); ok {
		ch = resp.GetChanges()
	}
	for _, w := range ch.GetWrites() {
		if w.GetKey() == "conformance_seen" {
			var sv wrapperspb.StringValue
			if err := w.GetValue().UnmarshalTo(&sv); err != nil {
				t.Fatalf("conformance_seen written as %s: %v", w.GetValue().GetTypeUrl(), err)
			}
			return sv.GetValue()
		}
	}
	for _, k := range ch.GetResets() {
		if k == "conformance_seen" {
			return "(reset)"
		}
	}
	return ""
}

// hookOf is the hook of the response a batch result holds (unspecified for none).
func hookOf(r *exocortexv1.BatchResult) exocortexv1.Hook {
	m := r.ProtoReflect()
	if fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("response")); fd != nil {
		return exocortexv1.Hook(fd.Number())
	}
	return exocortexv1.Hook_HOOK_UNSPECIFIED
}

// promptCase is a batch at a hook whose request carries the prompt so far, of
// extensions that say what of it they were given: prompt_reader (which declares
// reads_prompt) and prompt_skimmer (which does not) in conformance_seen, so that
// the batch goes on past them, and echo (which declares it, and reads_history) in
// its prompt block, which ends the batch. The plugin runs a batch's extensions in
// the order the host lists them, so a reader runs before and after a skimmer.
type promptCase struct {
	name  string
	hook  exocortexv1.Hook
	req   proto.Message
	names []string
	want  []string // what each extension says it was given
}

func promptCases() []promptCase {
	system := exocortexv1.Hook_HOOK_SYSTEM_PROMPT
	sys := &exocortexv1.SystemPromptRequest{SystemPrompt: "You help.", Tools: []*exocortexv1.ToolSpec{{Name: "a"}, {Name: "b"}}}
	after := exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER
	// The history is there because echo reads it; the watchers do not.
	aft := &exocortexv1.MessageLoopPromptsAfterRequest{Iteration: 3, History: msgs(2), NumCtx: 8192, PromptTokens: 1000,
		Extras: []*exocortexv1.PromptBlock{{Title: "X", Content: "x"}, {Title: "Y", Content: "y"}}}
	const (
		skimSys = "prompt_skimmer saw system_prompt [], 2 tools"
		readSys = "prompt_reader saw system_prompt [You help.], 2 tools"
		skimAft = "prompt_skimmer saw 0 extras, prompt_tokens 0, num_ctx 8192, iteration 3, history 0"
		readAft = "prompt_reader saw 2 extras, prompt_tokens 1000, num_ctx 8192, iteration 3, history 0"
	)
	return []promptCase{
		{"system_prompt", system, sys, []string{"prompt_skimmer", "prompt_reader", "echo"},
			[]string{skimSys, readSys, "system You help. [a,b]"}},
		{"system_prompt, the reader first", system, sys, []string{"prompt_reader", "prompt_skimmer"},
			[]string{readSys, skimSys}},
		{"message_loop_prompts_after", after, aft, []string{"prompt_skimmer", "prompt_reader", "echo"},
			[]string{skimAft, readAft, "after 3 2 1000/8192"}},
		{"message_loop_prompts_after, the reader first", after, aft, []string{"prompt_reader", "prompt_skimmer"},
			[]string{readAft, skimAft}},
	}
}

// batch returns the case's extensions and its batch request, each HookCall with
// message id msgID.
func (tc promptCase) batch(t *testing.T, s *suite, msgID string) ([]*host.Extension, *exocortexv1.BatchRequest) {
	t.Helper()
	var exts []*host.Extension
	var calls []*exocortexv1.HookCall
	for _, n := range tc.names {
		e := s.ext(t, tc.hook, n)
		exts = append(exts, e)
		calls = append(calls, s.hookCall(e, msgID))
	}
	return exts, batchRequest(tc.hook, tc.req, calls)
}

// said is what each result of a promptCase's batch says: the content of its
// prompt blocks (echo's), or else the value written to conformance_seen (the
// watchers'), or its error.
func said(t *testing.T, results []*exocortexv1.BatchResult) []string {
	t.Helper()
	var out []string
	for _, r := range results {
		if r.GetError() != "" {
			out = append(out, "error: "+r.GetError())
			continue
		}
		var blocks []string
		if resp, ok := batchResponseOf(r, hookOf(r)).(interface {
			GetPromptBlocks() []*exocortexv1.PromptBlock
		}); ok {
			for _, b := range resp.GetPromptBlocks() {
				blocks = append(blocks, b.GetContent())
			}
		}
		if len(blocks) > 0 {
			out = append(out, strings.Join(blocks, "|"))
			continue
		}
		out = append(out, seenIn(t, r))
	}
	return out
}

func (s *suite) testBatches(t *testing.T) {
	if !s.p.Manifest().GetServesBatches() {
		t.Fatal("the manifest does not say serves_batches")
	}
	// Each subtest begins with an empty store.
	var b *batcher
	fresh := func() { b = &batcher{s: s, store: state.NewStore(s.h.Registry())} }
	relays := []string{"relay_a", "relay_b", "relay_c"}
	seen := func(t *testing.T, results []*exocortexv1.BatchResult) []string {
		t.Helper()
		var out []string
		for _, r := range results {
			if r.GetError() != "" {
				out = append(out, "error")
				continue
			}
			if e := r.GetMessageLoopEnd(); e.Intervention != nil || e.Stop != nil {
				t.Errorf("a relay's result sets more than state: %v", e)
			}
			out = append(out, seenIn(t, r))
		}
		return out
	}
	want := func(t *testing.T, got []string, want ...string) {
		t.Helper()
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("conformance_seen along the batch:\n got %q\nwant %q", got, want)
		}
	}

	t.Run("state", func(t *testing.T) {
		fresh()
		// relay_b is sent no value: it gets relay_a's, which it reads, and takes it
		// away; relay_c, sent none either, sees none after the reset.
		want(t, seen(t, b.run(t, &exocortexv1.MessageLoopEndRequest{Iteration: 1}, relays...)),
			"relay_a saw nothing at iteration 1", "(reset)", "relay_c saw nothing at iteration 1")
		// Now each is sent the value the store holds: relay_a's write replaces it
		// for relay_b, and relay_b's reset removes it for relay_c.
		if err := b.store.Set("conformance_seen", wrapperspb.String("hello")); err != nil {
			t.Fatal(err)
		}
		want(t, seen(t, b.run(t, &exocortexv1.MessageLoopEndRequest{Iteration: 7}, relays...)),
			"relay_a saw hello at iteration 7", "(reset)", "relay_c saw nothing at iteration 7")
	})

	t.Run("stop", func(t *testing.T) {
		fresh()
		// The whole hook as the loop runs it: a batch stops right after a result
		// that sets more than state (echo's, nosy's and fragile's interventions),
		// and the host sends the rest again, with the store as it is by then.
		rest := []string{"echo", "nosy", "repeat_watch", "fragile", "relay_a", "relay_b", "relay_c"}
		req := &exocortexv1.MessageLoopEndRequest{Iteration: 2, Reply: "hi"}
		var sizes []int
		var interventions []string
		var results []*exocortexv1.BatchResult
		for len(rest) > 0 && len(sizes) < 10 {
			res := b.run(t, req, rest...)
			sizes = append(sizes, len(res))
			for _, r := range res {
				if r.GetError() != "" {
					t.Fatalf("%s failed: %s", rest[0], r.GetError())
				}
				interventions = append(interventions, r.GetMessageLoopEnd().GetIntervention())
			}
			results = append(results, res...)
			rest = rest[len(res):]
		}
		if got := fmt.Sprint(sizes); got != "[1 1 2 3]" {
			t.Errorf("batch sizes %s, want [1 1 2 3] (stops after echo, nosy and fragile)", got)
		}
		if got := strings.Join(interventions, "|"); got != "end 2 hi 0|nosy did nothing wrong||fragile is fine|||" {
			t.Errorf("interventions %q", got)
		}
		if len(results) == 7 {
			if got := seenIn(t, results[0]); got != "message_loop_end:m-batch" {
				t.Errorf("echo wrote conformance_seen = %q", got)
			}
			want(t, seen(t, results[4:]), "relay_a saw message_loop_end:m-batch at iteration 2", "(reset)",
				"relay_c saw nothing at iteration 2")
		}
	})

	t.Run("history", func(t *testing.T) {
		// echo declares reads_history: in a batch too, it gets the history.
		e := s.ext(t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE, "echo")
		resp, err := host.CallBatch(t.Context(), []*host.Extension{e}, batchRequest(exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE,
			&exocortexv1.MessageLoopPromptsBeforeRequest{Iteration: 2, History: msgs(2)}, []*exocortexv1.HookCall{s.hookCall(e, "m")}))
		if err != nil || len(resp.GetResults()) != 1 {
			t.Fatalf("%v, %v", resp, err)
		}
		blockOf(t, resp.GetResults()[0].GetMessageLoopPromptsBefore().GetPromptBlocks(), "before 2 2")
	})

	t.Run("prompt", func(t *testing.T) {
		// The prompt so far (system_prompt's system_prompt, message_loop_prompts_after's
		// extras and prompt_tokens) is in the batch's request because some of its
		// extensions declare reads_prompt; only they receive it, and every
		// extension receives the request's other fields.
		for _, tc := range promptCases() {
			exts, req := tc.batch(t, s, "m-prompt")
			resp, err := host.CallBatch(t.Context(), exts, req)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if got := said(t, resp.GetResults()); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("%s: the extensions of the batch were given\n got %q\nwant %q", tc.name, got, tc.want)
			}
		}
	})

	t.Run("errors", func(t *testing.T) {
		fresh()
		// An extension's failure is its result, as its own call would have
		// returned it, and the batch goes on.
		for _, tc := range []struct{ reply, want string }{
			{"fail", `rpc error: code = Unknown desc = extension "fragile" at message_loop_end: disk full`},
			{"status", "rpc error: code = ResourceExhausted desc = slow down"},
			{"boom", `rpc error: code = Internal desc = extension "fragile"`},
		} {
			fresh()
			results := b.run(t, &exocortexv1.MessageLoopEndRequest{Iteration: 3, Reply: tc.reply}, append([]string{"fragile"}, relays...)...)
			if len(results) != 4 {
				t.Fatalf("reply %q: %d results, want 4", tc.reply, len(results))
			}
			if e := results[0].GetError(); !strings.HasPrefix(e, tc.want) || (tc.reply == "fail" && e != tc.want) {
				t.Errorf("reply %q: fragile's error %q, want %q", tc.reply, e, tc.want)
			}
			if tc.reply == "boom" && !strings.Contains(results[0].GetError(), "fragile was asked to blow up") {
				t.Errorf("the panic's result does not say what happened: %q", results[0].GetError())
			}
			want(t, seen(t, results[1:]), "relay_a saw nothing at iteration 3", "(reset)", "relay_c saw nothing at iteration 3")
		}
		// A refused state access is an error too, and its write goes nowhere.
		results := b.run(t, &exocortexv1.MessageLoopEndRequest{Reply: "write"}, "nosy", "repeat_watch", "fragile")
		if len(results) != 3 {
			t.Fatalf("nosy's refused write: %d results, want 3", len(results))
		}
		if e := results[0].GetError(); !strings.HasPrefix(e, "rpc error: code = FailedPrecondition desc = ") ||
			!strings.Contains(e, `extension "nosy"`) || !strings.Contains(e, `write of state key "failure_tracker"`) {
			t.Errorf("nosy's refused write: %q", e)
		}
		if got := results[2].GetMessageLoopEnd().GetIntervention(); got != "fragile is fine" {
			t.Errorf("after nosy's failure, fragile answered %v", results[2])
		}
		if _, ok := b.store.Get("failure_tracker"); ok {
			t.Error("nosy's refused write reached the store")
		}
		// An extension the plugin does not serve.
		e := s.ext(t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, "repeat_watch")
		resp, err := host.CallBatch(t.Context(), []*host.Extension{e, e}, batchRequest(exocortexv1.Hook_HOOK_MESSAGE_LOOP_END,
			&exocortexv1.MessageLoopEndRequest{}, []*exocortexv1.HookCall{{Extension: "nobody"}, s.hookCall(e, "m")}))
		if err != nil || len(resp.GetResults()) != 2 || !strings.HasPrefix(resp.GetResults()[0].GetError(),
			`rpc error: code = NotFound desc = plugin "conformance" has no extension "nobody" at message_loop_end`) ||
			resp.GetResults()[1].GetError() != "" {
			t.Errorf("a batch with an extension the plugin does not serve: %v, %v", resp, err)
		}
		// A batch without its hook's request.
		_, err = host.CallBatch(t.Context(), []*host.Extension{e}, &exocortexv1.BatchRequest{Calls: []*exocortexv1.HookCall{s.hookCall(e, "m")}})
		wantRefusal(t, err, host.Returned, codes.InvalidArgument, "a batch without a hook request")
		s.wantHealthy(t, 0)
	})
}
