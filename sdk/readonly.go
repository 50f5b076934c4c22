package sdk

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// A hook request is read-only: it is the SDK's copy of what the host sent, and
// the host never sees a change made to it. Agent Zero's extensions change the
// loop's data in place, so a port naturally writes `req.Result.Content += note`
// and returns nil, which does nothing. The SDK keeps a copy of every request as
// received and compares it with the request after the handler returned; a
// difference fails the call with an error that names the field and the
// response field that does the job. The mapping comes from the protocol: the
// changed_by and change_elsewhere options on the request's fields (hooks.proto).
//
// The copy is the request's deterministic encoding, not a cloned message: two
// encodings and a byte comparison cost about half of proto.Clone and
// proto.Equal, whose reflection over the context's maps was most of a call's
// time in the plugin (docs/perf/suite.md, "The read-only check"). Equal
// messages encode to equal bytes in one binary, so nothing that changed goes
// unseen; only when the bytes differ is the copy decoded, and the field named
// by comparing the messages as before.

// snapshot is the request as received, for requestChangedSince.
type snapshot struct {
	raw []byte
	// custom is the context's custom_data, encoded apart (customBytes): a map
	// of messages, whose deterministic encoding by reflection cost more than
	// the rest of the request together. raw is then the request without it.
	custom []byte
	// copy is a cloned message, taken only if the request could not be
	// encoded (not valid UTF-8 in a string field: gRPC's decoder lets none in).
	copy proto.Message
}

var deterministic = proto.MarshalOptions{Deterministic: true}

// takeSnapshot records req before its handler runs.
func takeSnapshot(req proto.Message) snapshot {
	raw, custom, err := encodeRequest(req)
	if err != nil {
		return snapshot{copy: proto.Clone(req)}
	}
	return snapshot{raw: raw, custom: custom}
}

// encodeRequest is req's deterministic encoding with the context's custom_data
// left out, and custom_data encoded by customBytes (nil when the request has no
// context). Nothing of req is written: the encoding is of a shallow copy.
func encodeRequest(req proto.Message) (raw, custom []byte, err error) {
	rm := req.ProtoReflect()
	callFd := rm.Descriptor().Fields().ByName("call")
	if callFd == nil || callFd.Message() == nil || !rm.Has(callFd) {
		raw, err = deterministic.Marshal(req)
		return raw, nil, err
	}
	hc, ok := rm.Get(callFd).Message().Interface().(*exocortexv1.HookCall)
	if !ok || hc.GetContext() == nil {
		raw, err = deterministic.Marshal(req)
		return raw, nil, err
	}
	cm := hc.GetContext().ProtoReflect()
	cdFd := cm.Descriptor().Fields().ByName("custom_data")
	custom, err = customBytes(hc.GetContext().GetCustomData())
	if err != nil {
		return nil, nil, err
	}
	ctx := shallowWithout(cm, cdFd)
	call := shallowWithout(hc.ProtoReflect(), nil)
	call.Set(call.Descriptor().Fields().ByName("context"), protoreflect.ValueOfMessage(ctx))
	top := shallowWithout(rm, nil)
	top.Set(callFd, protoreflect.ValueOfMessage(call))
	raw, err = deterministic.Marshal(top.Interface())
	return raw, custom, err
}

// shallowWithout is a new message of m's type holding m's fields but skip (nil:
// all of them) and its unknown fields, sharing their values with m.
func shallowWithout(m protoreflect.Message, skip protoreflect.FieldDescriptor) protoreflect.Message {
	out := m.New()
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd != skip {
			out.Set(fd, v)
		}
		return true
	})
	if u := m.GetUnknown(); len(u) > 0 {
		out.SetUnknown(u)
	}
	return out
}

// customBytes encodes a context's custom_data so that two equal Structs give
// equal bytes and unequal ones different bytes: whether it is set, the number
// of entries, each entry in key order as the key and the value's deterministic
// encoding (a number, string or bool encodes without a map), then the Struct's
// unknown fields; keys and encodings length-prefixed.
func customBytes(s *structpb.Struct) ([]byte, error) {
	if s == nil {
		return []byte{0}, nil
	}
	out := []byte{1}
	keys := make([]string, 0, len(s.GetFields()))
	for k := range s.GetFields() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out = protowire.AppendVarint(out, uint64(len(keys)))
	for _, k := range keys {
		v := s.GetFields()[k]
		out = protowire.AppendString(out, k)
		if v == nil {
			// A nil entry encodes as an empty Value, yet it is not one here.
			out = protowire.AppendVarint(out, 0)
			continue
		}
		b, err := deterministic.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("custom_data[%q]: %w", k, err)
		}
		out = protowire.AppendVarint(out, 1)
		out = protowire.AppendBytes(out, b)
	}
	return protowire.AppendBytes(out, s.ProtoReflect().GetUnknown()), nil
}

// requestChangedSince is requestChange against the request as s recorded it.
func requestChangedSince(s snapshot, after proto.Message) (string, protoreflect.FieldDescriptor) {
	if s.copy != nil {
		return requestChange(s.copy, after)
	}
	now, custom, err := encodeRequest(after)
	if err == nil && bytes.Equal(now, s.raw) && bytes.Equal(custom, s.custom) {
		return "", nil
	}
	before := after.ProtoReflect().New().Interface()
	if err := (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(s.raw, before); err != nil {
		return "(the request as received could not be read back: " + err.Error() + ")", nil
	}
	if s.custom != nil {
		cd, err := customStruct(s.custom)
		if err != nil {
			return "(the request as received could not be read back: " + err.Error() + ")", nil
		}
		before.ProtoReflect().Get(before.ProtoReflect().Descriptor().Fields().ByName("call")).Message().Interface().(*exocortexv1.HookCall).GetContext().CustomData = cd
	}
	path, top := requestChange(before, after)
	if path == "" {
		// The encodings differ but the messages are equal: a nil entry in
		// custom_data's map became an empty Value, or the other way round.
		return "call.context.custom_data", before.ProtoReflect().Descriptor().Fields().ByName("call")
	}
	return path, top
}

// customStruct decodes customBytes' encoding.
func customStruct(b []byte) (*structpb.Struct, error) {
	if len(b) == 0 || b[0] == 0 {
		return nil, nil
	}
	count, n := protowire.ConsumeVarint(b[1:])
	if n < 0 {
		return nil, protowire.ParseError(n)
	}
	b = b[1+n:]
	s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for range count {
		k, n := protowire.ConsumeString(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		set, m := protowire.ConsumeVarint(b[n:])
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		b = b[n+m:]
		if set == 0 {
			s.Fields[k] = nil
			continue
		}
		raw, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		v := &structpb.Value{}
		if err := (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(raw, v); err != nil {
			return nil, fmt.Errorf("custom_data[%q]: %w", k, err)
		}
		s.Fields[k] = v
	}
	unknown, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return nil, protowire.ParseError(n)
	}
	if len(unknown) > 0 {
		s.ProtoReflect().SetUnknown(unknown)
	}
	return s, nil
}

// requestChange compares a request after its handler ran with the copy taken
// before: it returns the path of the first changed field ("result.content",
// "history[2]") and the request's top-level field it is in, or "" and nil.
func requestChange(before, after proto.Message) (string, protoreflect.FieldDescriptor) {
	if proto.Equal(before, after) {
		return "", nil
	}
	path, top := diff(before.ProtoReflect(), after.ProtoReflect())
	if path == "" {
		// Equal said different, yet no known field differs: the unknown fields.
		return "(unknown fields)", nil
	}
	return path, top
}

// diff finds the first field in which a and b, messages of one type, differ.
func diff(a, b protoreflect.Message) (string, protoreflect.FieldDescriptor) {
	fds := a.Descriptor().Fields()
	for i := 0; i < fds.Len(); i++ {
		fd := fds.Get(i)
		if a.Has(fd) == b.Has(fd) && a.Get(fd).Equal(b.Get(fd)) {
			continue
		}
		name := string(fd.Name())
		switch {
		case fd.IsList() && fd.Message() != nil:
			la, lb := a.Get(fd).List(), b.Get(fd).List()
			if la.Len() != lb.Len() {
				return name, fd
			}
			for j := 0; j < la.Len(); j++ {
				if sub, _ := diff(la.Get(j).Message(), lb.Get(j).Message()); sub != "" {
					return fmt.Sprintf("%s[%d].%s", name, j, sub), fd
				}
			}
			return name, fd
		case fd.IsList() || fd.IsMap():
			return name, fd
		case fd.Message() != nil && a.Has(fd) && b.Has(fd):
			if sub, _ := diff(a.Get(fd).Message(), b.Get(fd).Message()); sub != "" {
				return name + "." + sub, fd
			}
			return name, fd
		default:
			return name, fd
		}
	}
	return "", nil
}

// mutationError is the error for a handler that changed field path of its
// request (top, its top-level field) at hook.
func mutationError(plugin, extension string, hook exocortexv1.Hook, path string, top protoreflect.FieldDescriptor) string {
	return fmt.Sprintf("plugin %q: extension %q at %s changed its request's %s, which changes nothing: "+
		"the request is a read-only copy of what the host sent. %s",
		plugin, extension, HookName(hook), path, mutationAdvice(hook, top))
}

// mutationAdvice says how a change to a hook request's field is made instead:
// the response fields its changed_by option names, or its change_elsewhere
// option, or that nothing at this hook can change it. The Python SDK words the
// same advice from the same options.
func mutationAdvice(hook exocortexv1.Hook, top protoreflect.FieldDescriptor) string {
	if top == nil {
		return "Return what you mean to change in the response instead."
	}
	if top.Name() == "call" {
		return "State changes go through the Call (Key.Set, Key.Reset); the context is read-only."
	}
	opts := top.Options()
	resp := strings.TrimSuffix(string(top.ContainingMessage().Name()), "Request") + "Response"
	if by, _ := proto.GetExtension(opts, exocortexv1.E_ChangedBy).([]string); len(by) > 0 {
		return fmt.Sprintf("Return the change in %s.%s instead.", resp, strings.Join(by, " or "+resp+"."))
	}
	if where, _ := proto.GetExtension(opts, exocortexv1.E_ChangeElsewhere).(string); where != "" {
		return fmt.Sprintf("No field of %s changes %s: %s.", resp, top.Name(), where)
	}
	return fmt.Sprintf("No field of %s changes %s: it is information about this point of the loop, not something %s can change.",
		resp, top.Name(), HookName(hook))
}
