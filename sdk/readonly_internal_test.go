package sdk

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

func history(n int) []*exocortexv1.Message {
	out := make([]*exocortexv1.Message, n)
	for i := range out {
		out[i] = &exocortexv1.Message{Id: fmt.Sprintf("m%d", i), Role: "user",
			Content: fmt.Sprintf("message %d of a conversation long enough to be realistic, with a line or two of text", i)}
	}
	return out
}

func hookCall() *exocortexv1.HookCall {
	v, _ := anypb.New(&exocortexv1.FailureTracker{Failures: map[string]int32{"shell": 1, "search": 2}})
	return &exocortexv1.HookCall{Extension: "x", Context: &exocortexv1.Context{SessionId: "s", Hook: "h",
		InteractionHistory: &exocortexv1.InteractionHistory{RecentMessages: history(10)}},
		State: []*exocortexv1.StateEntry{{Key: "failure_tracker", Value: v}}}
}

// TestRequestChange: the first changed field is named by its path, and the
// advice comes from the protocol's options.
func TestRequestChange(t *testing.T) {
	tests := []struct {
		name   string
		hook   exocortexv1.Hook
		req    proto.Message
		change func(proto.Message)
		path   string
		advice string
	}{
		{"unchanged", exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER, &exocortexv1.ToolExecuteAfterRequest{Call: hookCall(), Result: &exocortexv1.ToolResult{Content: "a"}},
			func(proto.Message) {}, "", ""},
		{"nested", exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER, &exocortexv1.ToolExecuteAfterRequest{Call: hookCall(), Result: &exocortexv1.ToolResult{Content: "a"}},
			func(m proto.Message) { m.(*exocortexv1.ToolExecuteAfterRequest).Result.Content += "!" },
			"result.content", "Return the change in ToolExecuteAfterResponse.content or ToolExecuteAfterResponse.annotations instead."},
		{"list element", exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER, &exocortexv1.MessageLoopPromptsAfterRequest{Call: hookCall(), History: history(3)},
			func(m proto.Message) { m.(*exocortexv1.MessageLoopPromptsAfterRequest).History[2].Content = "x" },
			"history[2].content", "No field of MessageLoopPromptsAfterResponse changes history: the history cannot be changed from a hook"},
		{"list length", exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL, &exocortexv1.BeforeMainLLMCallRequest{Call: hookCall(), Prompt: history(3)},
			func(m proto.Message) { r := m.(*exocortexv1.BeforeMainLLMCallRequest); r.Prompt = r.Prompt[1:] },
			"prompt", "the prompt is final at before_main_llm_call"},
		{"scalar", exocortexv1.Hook_HOOK_RESPONSE_STREAM_CHUNK, &exocortexv1.ResponseStreamChunkRequest{Call: hookCall(), Delta: "a"},
			func(m proto.Message) { m.(*exocortexv1.ResponseStreamChunkRequest).Delta = "A" },
			"delta", "Return the change in ResponseStreamChunkResponse.display instead."},
		{"state", exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, &exocortexv1.MessageLoopEndRequest{Call: hookCall()},
			func(m proto.Message) { m.(*exocortexv1.MessageLoopEndRequest).Call.State = nil },
			"call.state", "State changes go through the Call"},
		{"no response field", exocortexv1.Hook_HOOK_SYSTEM_PROMPT, &exocortexv1.SystemPromptRequest{Call: hookCall(), Tools: []*exocortexv1.ToolSpec{{Name: "a"}}},
			func(m proto.Message) { m.(*exocortexv1.SystemPromptRequest).Tools = nil },
			"tools", "not something system_prompt can change"},
		{"utility call", exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_BEFORE, &exocortexv1.UtilModelCallBeforeRequest{Call: hookCall(), Message: "m"},
			func(m proto.Message) { m.(*exocortexv1.UtilModelCallBeforeRequest).Message = "n" },
			"message", "Return the change in UtilModelCallBeforeResponse.message instead."},
		{"chat call prompt", exocortexv1.Hook_HOOK_CHAT_MODEL_CALL_BEFORE, &exocortexv1.ChatModelCallBeforeRequest{Call: hookCall(), Prompt: history(2)},
			func(m proto.Message) { m.(*exocortexv1.ChatModelCallBeforeRequest).Prompt[0].Content = "x" },
			"prompt[0].content", "the prompt is final at chat_model_call_before"},
		{"chat reply", exocortexv1.Hook_HOOK_CHAT_MODEL_CALL_AFTER, &exocortexv1.ChatModelCallAfterRequest{Call: hookCall(), Response: "r"},
			func(m proto.Message) { m.(*exocortexv1.ChatModelCallAfterRequest).Response = "s" },
			"response", "Return the change in ChatModelCallAfterResponse.response instead."},
		{"reasoning", exocortexv1.Hook_HOOK_REASONING_STREAM_CHUNK, &exocortexv1.ReasoningStreamChunkRequest{Call: hookCall(), Delta: "a"},
			func(m proto.Message) { m.(*exocortexv1.ReasoningStreamChunkRequest).Delta = "*" },
			"delta", "Return the change in ReasoningStreamChunkResponse.display instead."},
		{"exception", exocortexv1.Hook_HOOK_MESSAGE_LOOP_EXCEPTION, &exocortexv1.MessageLoopExceptionRequest{Call: hookCall(), Error: "e"},
			func(m proto.Message) { m.(*exocortexv1.MessageLoopExceptionRequest).Error = "" },
			"error", "Return the change in MessageLoopExceptionResponse.handled instead."},
		{"chain end", exocortexv1.Hook_HOOK_PROCESS_CHAIN_END, &exocortexv1.ProcessChainEndRequest{Call: hookCall(), FinalResponse: "f"},
			func(m proto.Message) { m.(*exocortexv1.ProcessChainEndRequest).FinalResponse = "g" },
			"final_response", "not something process_chain_end can change"},
	}
	// Each change is judged both ways: against a clone of the request
	// (requestChange) and against its encoding as the server takes it
	// (takeSnapshot, requestChangedSince), which must name the same field.
	for _, tt := range tests {
		for _, how := range []string{"clone", "snapshot"} {
			t.Run(tt.name+"/"+how, func(t *testing.T) {
				req := proto.Clone(tt.req)
				var path string
				var top protoreflect.FieldDescriptor
				if how == "clone" {
					before := proto.Clone(req)
					tt.change(req)
					path, top = requestChange(before, req)
				} else {
					before := takeSnapshot(req)
					tt.change(req)
					path, top = requestChangedSince(before, req)
				}
				if path != tt.path {
					t.Fatalf("path %q, want %q", path, tt.path)
				}
				if path == "" {
					return
				}
				if got := mutationAdvice(tt.hook, top); !strings.Contains(got, tt.advice) {
					t.Errorf("advice %q, want it to contain %q", got, tt.advice)
				}
			})
		}
	}
}

// TestSnapshotSeesEveryChange: the encoded copy tells a change in the
// context's maps (custom_data, whose entries encode in any order unless
// deterministically), in a state value, in unknown fields and to a string no
// longer valid UTF-8, and takes an unchanged request with a NaN as unchanged.
func TestSnapshotSeesEveryChange(t *testing.T) {
	withCustom := func() *exocortexv1.MessageLoopEndRequest {
		hc := hookCall()
		hc.Context.CustomData = &structpb.Struct{Fields: map[string]*structpb.Value{
			"a": structpb.NewNumberValue(1), "b": structpb.NewNumberValue(2), "c": structpb.NewStringValue("x"),
			"d": structpb.NewNumberValue(math.NaN()),
		}}
		return &exocortexv1.MessageLoopEndRequest{Call: hc, Iteration: 3}
	}
	tests := []struct {
		name   string
		change func(*exocortexv1.MessageLoopEndRequest)
		path   string
	}{
		{"unchanged", func(*exocortexv1.MessageLoopEndRequest) {}, ""},
		{"map value", func(r *exocortexv1.MessageLoopEndRequest) {
			r.Call.Context.CustomData.Fields["b"] = structpb.NewNumberValue(3)
		}, "call.context.custom_data.fields"},
		{"map entry added", func(r *exocortexv1.MessageLoopEndRequest) {
			r.Call.Context.CustomData.Fields["e"] = structpb.NewBoolValue(true)
		}, "call.context.custom_data.fields"},
		{"map entry deleted", func(r *exocortexv1.MessageLoopEndRequest) {
			delete(r.Call.Context.CustomData.Fields, "a")
		}, "call.context.custom_data.fields"},
		{"map value changed in place", func(r *exocortexv1.MessageLoopEndRequest) {
			r.Call.Context.CustomData.Fields["c"].Kind = &structpb.Value_StringValue{StringValue: "y"}
		}, "call.context.custom_data.fields"},
		{"map value nested", func(r *exocortexv1.MessageLoopEndRequest) {
			r.Call.Context.CustomData.Fields["c"] = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"z": structpb.NewNullValue()}})
		}, "call.context.custom_data.fields"},
		{"map value unknown fields", func(r *exocortexv1.MessageLoopEndRequest) {
			r.Call.Context.CustomData.Fields["a"].ProtoReflect().SetUnknown(protoreflect.RawFields{0xf8, 0x01, 0x01})
		}, "call.context.custom_data.fields"},
		{"custom_data unknown fields", func(r *exocortexv1.MessageLoopEndRequest) {
			r.Call.Context.CustomData.ProtoReflect().SetUnknown(protoreflect.RawFields{0xf8, 0x01, 0x01})
		}, "call.context.custom_data"},
		{"custom_data emptied", func(r *exocortexv1.MessageLoopEndRequest) {
			r.Call.Context.CustomData = &structpb.Struct{}
		}, "call.context.custom_data.fields"},
		{"custom_data removed", func(r *exocortexv1.MessageLoopEndRequest) { r.Call.Context.CustomData = nil }, "call.context.custom_data"},
		{"context removed", func(r *exocortexv1.MessageLoopEndRequest) { r.Call.Context = nil }, "call.context"},
		{"context field beside custom_data", func(r *exocortexv1.MessageLoopEndRequest) { r.Call.Context.Iteration++ }, "call.context.iteration"},
		{"state value", func(r *exocortexv1.MessageLoopEndRequest) { r.Call.State[0].Value.Value = []byte{8, 1} }, "call.state[0].value.value"},
		{"unknown fields", func(r *exocortexv1.MessageLoopEndRequest) {
			r.ProtoReflect().SetUnknown(protoreflect.RawFields{0xf8, 0x01, 0x01})
		}, "(unknown fields)"},
		{"invalid UTF-8", func(r *exocortexv1.MessageLoopEndRequest) { r.Call.Extension = "\xff" }, "call.extension"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := withCustom()
			before := takeSnapshot(req)
			tt.change(req)
			if path, _ := requestChangedSince(before, req); path != tt.path {
				t.Fatalf("path %q, want %q", path, tt.path)
			}
		})
	}
}

// TestChangedByNamesResponseFields: every changed_by option names a field of
// the same hook's response, so the advice never points at nothing.
func TestChangedByNamesResponseFields(t *testing.T) {
	msgs := exocortexv1.File_exocortex_v1_hooks_proto.Messages()
	for i := 0; i < msgs.Len(); i++ {
		md := msgs.Get(i)
		base, isReq := strings.CutSuffix(string(md.Name()), "Request")
		if !isReq {
			continue
		}
		resp := msgs.ByName(protoreflect.Name(base + "Response"))
		if resp == nil {
			t.Fatalf("%s has no response message", md.FullName())
		}
		for j := 0; j < md.Fields().Len(); j++ {
			fd := md.Fields().Get(j)
			by, _ := proto.GetExtension(fd.Options(), exocortexv1.E_ChangedBy).([]string)
			for _, name := range by {
				if resp.Fields().ByName(protoreflect.Name(name)) == nil {
					t.Errorf("%s.%s: changed_by names %q, which %s does not have", md.Name(), fd.Name(), name, resp.Name())
				}
			}
		}
	}
}

// BenchmarkRequestReadOnlyCheck is what the read-only check adds to every hook
// call: a copy of the request as received and a comparison afterwards. The
// request sizes: a tool_execute_after call with a state value and ten recent
// messages in its context, and a message_loop_prompts_after call that also
// carries a 40-message history (reads_history).
func BenchmarkRequestReadOnlyCheck(b *testing.B) {
	reqs := []struct {
		name string
		req  proto.Message
	}{
		{"tool_execute_after", &exocortexv1.ToolExecuteAfterRequest{Call: hookCall(),
			ToolCall: &exocortexv1.ToolCall{Name: "shell", ArgsJson: `{"command":"ls"}`},
			Result:   &exocortexv1.ToolResult{Content: "a\nb\n", Error: "exit status 1"}}},
		{"prompts_after_history_40", &exocortexv1.MessageLoopPromptsAfterRequest{Call: hookCall(), History: history(40),
			Extras: []*exocortexv1.PromptBlock{{Title: "T", Content: "c"}}, NumCtx: 8192, PromptTokens: 3000}},
	}
	for _, r := range reqs {
		// clone is the check as it was (proto.Clone, proto.Equal); snapshot
		// as the server makes it (two deterministic encodings compared).
		b.Run(r.name+"/clone", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				before := proto.Clone(r.req)
				if path, _ := requestChange(before, r.req); path != "" {
					b.Fatal(path)
				}
			}
		})
		b.Run(r.name+"/snapshot", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				before := takeSnapshot(r.req)
				if path, _ := requestChangedSince(before, r.req); path != "" {
					b.Fatal(path)
				}
			}
		})
	}
}

// TestCustomBytesRoundTrip: customStruct reads back every kind of value
// customBytes writes, unknown fields included, so a changed custom_data is
// named against the Struct as received.
func TestCustomBytesRoundTrip(t *testing.T) {
	withUnknown := func(m proto.Message) proto.Message {
		m.ProtoReflect().SetUnknown(protoreflect.RawFields{0xf8, 0x01, 0x01})
		return m
	}
	nested, _ := structpb.NewStruct(map[string]any{"list": []any{1.0, "two", true, nil}, "obj": map[string]any{"k": "v"}})
	tests := []struct {
		name string
		in   *structpb.Struct
	}{
		{"nil", nil},
		{"empty", &structpb.Struct{}},
		{"scalars", &structpb.Struct{Fields: map[string]*structpb.Value{
			"n": structpb.NewNumberValue(math.Inf(-1)), "s": structpb.NewStringValue("é"), "b": structpb.NewBoolValue(true),
			"z": structpb.NewNullValue(), "unset": {}}}},
		{"nested", nested},
		{"unknown fields", withUnknown(&structpb.Struct{Fields: map[string]*structpb.Value{
			"n": withUnknown(structpb.NewNumberValue(1)).(*structpb.Value)}}).(*structpb.Struct)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := customBytes(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := customStruct(b)
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tt.in == nil) || !proto.Equal(got, tt.in) {
				t.Fatalf("read back %v, want %v", got, tt.in)
			}
			again, _ := customBytes(got)
			if !bytes.Equal(again, b) {
				t.Fatalf("encodings differ after a round trip")
			}
		})
	}
}
