package sdk

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// RunBatch runs consecutive extensions of the plugin at one hook in one round
// trip, each exactly as its own call would run it: extension i gets the hook's
// request with calls[i], and the state it reads carries the writes and resets of
// the extensions before it. The batch stops after a result that sets anything
// besides state changes, because the next extension's request then depends on how
// the host takes that result (appended prompt blocks, rewritten arguments, a
// replaced tool result); the host sends the rest again.
func (s *server) RunBatch(ctx context.Context, req *exocortexv1.BatchRequest) (*exocortexv1.BatchResponse, error) {
	rm := req.ProtoReflect()
	fd := rm.WhichOneof(rm.Descriptor().Oneofs().ByName("request"))
	if fd == nil {
		return nil, status.Errorf(codes.InvalidArgument, "plugin %q: a batch without a hook request", s.b.manifest.Plugin)
	}
	hook := batchHook(fd)
	run := s.hookMethod(hook)
	if run == nil {
		return nil, status.Errorf(codes.InvalidArgument, "plugin %q: a batch for unknown hook %s (field %d)", s.b.manifest.Plugin, fd.Name(), fd.Number())
	}
	base := rm.Get(fd).Message().Interface()
	// Every extension's request gets its own call below (withCall), so a call the
	// host sent in the hook request is never seen: dropped before the copies,
	// which would clone its context for nothing.
	bm := base.ProtoReflect()
	bm.Clear(bm.Descriptor().Fields().ByName("call"))
	calls := req.GetCalls()
	resultField := (&exocortexv1.BatchResult{}).ProtoReflect().Descriptor().Fields().ByName(fd.Name())

	// The host includes the conversation, and the prompt so far, when any
	// extension of the batch reads it; the others get the request without it, as
	// their own call would.
	var trimmed [4]proto.Message // by what is cleared: 1 the conversation, 2 the prompt so far
	requestFor := func(e *extEntry) proto.Message {
		if e == nil {
			return base
		}
		var drop int
		if !e.spec.ReadsHistory && readsHistoryAt(hook) {
			drop |= 1
		}
		if !e.spec.ReadsPrompt && readsPromptAt(hook) {
			drop |= 2
		}
		if drop == 0 {
			return base
		}
		if trimmed[drop] == nil {
			trimmed[drop] = without(base, drop&1 != 0, drop&2 != 0)
		}
		return trimmed[drop]
	}

	// written holds the batch's state changes so far: a value, or nil for a reset.
	written := map[string]*anypb.Any{}
	out := &exocortexv1.BatchResponse{}
	for i, hc := range calls {
		if err := ctx.Err(); err != nil {
			return nil, status.FromContextError(err).Err()
		}
		e := s.b.exts[hc.GetExtension()]
		// Each extension gets its own request: one that changes its request in
		// place must not change the next one's. The last may have the original.
		r := requestFor(e)
		if i < len(calls)-1 {
			r = proto.Clone(r)
		}
		withCall(r, overlay(hc, written, e))
		start := time.Now()
		resp, err := runWithin(ctx, hc, r, run)
		res := &exocortexv1.BatchResult{DurationUs: uint32(min(time.Since(start).Microseconds(), 1<<32-1))}
		out.Results = append(out.Results, res)
		if err != nil {
			res.Error = err.Error()
			continue
		}
		res.ProtoReflect().Set(resultField, protoreflect.ValueOfMessage(resp.ProtoReflect()))
		if !stateOnly(resp.ProtoReflect()) {
			break
		}
		ch := changesOf(resp.ProtoReflect())
		for _, w := range ch.GetWrites() {
			written[w.GetKey()] = w.GetValue()
		}
		for _, k := range ch.GetResets() {
			written[k] = nil
		}
	}
	return out, nil
}

// Dispatch serves batches over one stream, one at a time, each as RunBatch
// would: the host saves setting up a call per round trip.
func (s *server) Dispatch(stream exocortexv1.Plugin_DispatchServer) error {
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		ctx, cancel := stream.Context(), context.CancelFunc(func() {})
		if ms := req.GetTimeoutMs(); ms > 0 {
			ctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
		}
		resp, err := s.RunBatch(ctx, req)
		cancel()
		if err != nil {
			return err
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}

// runWithin runs one extension of a batch with its own deadline: the batch's
// covers all of them. A miss is the extension's error, even when it returned.
func runWithin(ctx context.Context, hc *exocortexv1.HookCall, r proto.Message, run func(context.Context, proto.Message) (proto.Message, error)) (proto.Message, error) {
	ms := hc.GetTimeoutMs()
	if ms == 0 {
		return run(ctx, r)
	}
	d := time.Duration(ms) * time.Millisecond
	ectx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	resp, err := run(ectx, r)
	if errors.Is(ectx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		return nil, status.Errorf(codes.DeadlineExceeded, "extension %q did not finish within its deadline of %s", hc.GetExtension(), d)
	}
	return resp, err
}

// overlay returns hc with the batch's writes applied to the keys its extension
// reads; hc itself is left alone.
func overlay(hc *exocortexv1.HookCall, written map[string]*anypb.Any, e *extEntry) *exocortexv1.HookCall {
	if len(written) == 0 || e == nil {
		return hc
	}
	var changed bool
	state := make([]*exocortexv1.StateEntry, 0, len(hc.GetState()))
	seen := map[string]bool{}
	for _, st := range hc.GetState() {
		seen[st.GetKey()] = true
		v, ok := written[st.GetKey()]
		switch {
		case !ok:
			state = append(state, st)
		case v != nil:
			state = append(state, &exocortexv1.StateEntry{Key: st.GetKey(), Value: v})
			changed = true
		default:
			changed = true // reset: a key with no value is absent
		}
	}
	for k, v := range written {
		if v != nil && !seen[k] && e.reads[k] {
			state = append(state, &exocortexv1.StateEntry{Key: k, Value: v})
			changed = true
		}
	}
	if !changed {
		return hc
	}
	return &exocortexv1.HookCall{Extension: hc.GetExtension(), Context: hc.GetContext(), State: state, TimeoutMs: hc.GetTimeoutMs()}
}

// without returns a copy of req without the fields only extensions declaring
// ReadsHistory (conversation) or ReadsPrompt (prompt) receive.
func without(req proto.Message, conversation, prompt bool) proto.Message {
	out := proto.Clone(req)
	m := out.ProtoReflect()
	var names []protoreflect.Name
	if conversation {
		names = append(names, "history", "prompt")
	}
	if prompt {
		names = append(names, "system_prompt", "extras", "prompt_tokens")
	}
	for _, name := range names {
		if fd := m.Descriptor().Fields().ByName(name); fd != nil {
			m.Clear(fd)
		}
	}
	return out
}

// withCall sets field 1, "call", which every hook request has.
func withCall(req proto.Message, hc *exocortexv1.HookCall) {
	m := req.ProtoReflect()
	m.Set(m.Descriptor().Fields().ByName("call"), protoreflect.ValueOfMessage(hc.ProtoReflect()))
}

// stateOnly reports whether a hook response sets nothing but its state changes.
func stateOnly(m protoreflect.Message) bool {
	only := true
	m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		only = fd.Name() == "changes"
		return only
	})
	return only && len(m.GetUnknown()) == 0
}

func changesOf(m protoreflect.Message) *exocortexv1.StateChanges {
	fd := m.Descriptor().Fields().ByName("changes")
	if !m.Has(fd) {
		return nil
	}
	return m.Get(fd).Message().Interface().(*exocortexv1.StateChanges)
}

// batchHook is the hook whose request or response a BatchRequest or
// BatchResult field holds: the field is named for the hook (its number is the
// hook's only up to 15).
func batchHook(fd protoreflect.FieldDescriptor) exocortexv1.Hook {
	return exocortexv1.Hook(exocortexv1.Hook_value["HOOK_"+strings.ToUpper(string(fd.Name()))])
}

func method[Req, Resp proto.Message](f func(context.Context, Req) (Resp, error)) func(context.Context, proto.Message) (proto.Message, error) {
	return func(ctx context.Context, m proto.Message) (proto.Message, error) {
		resp, err := f(ctx, m.(Req))
		if err != nil {
			return nil, err
		}
		return resp, nil
	}
}
