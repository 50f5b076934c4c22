package sdk

import (
	"bytes"
	"fmt"
	"io"
	"math"
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
// context). The field is taken out of the context for the encoding and put
// back: encodeRequest runs before the handler and after it returned, when
// nothing else holds the request (a handler runs in the goroutine that called
// it, and the request is its own copy).
func encodeRequest(req proto.Message) (raw, custom []byte, err error) {
	ctx := contextOf(req)
	if ctx == nil {
		raw, err = deterministic.Marshal(req)
		return raw, nil, err
	}
	cd := ctx.CustomData
	if custom, err = customBytes(cd); err != nil {
		return nil, nil, err
	}
	ctx.CustomData = nil
	raw, err = deterministic.Marshal(req)
	ctx.CustomData = cd
	return raw, custom, err
}

// contextOf is the context of a hook request's call, or nil.
func contextOf(req proto.Message) *exocortexv1.Context {
	if r, ok := req.(interface{ GetCall() *exocortexv1.HookCall }); ok {
		return r.GetCall().GetContext()
	}
	return nil
}

// customBytes encodes a context's custom_data so that two equal Structs give
// equal bytes and unequal ones different bytes: whether it is set, the number
// of entries, then each entry in key order: the key, the value's kind and
// content (a number by its bits, so an unchanged NaN is unchanged; a struct or
// list value by its deterministic encoding) and the value's unknown fields;
// last the Struct's unknown fields. Strings and byte runs are length-prefixed.
// A flat Struct, which is what the host sends, encodes without reflection.
func customBytes(s *structpb.Struct) ([]byte, error) {
	if s == nil {
		return []byte{0}, nil
	}
	fields := s.GetFields()
	out := make([]byte, 1, 16+32*len(fields))
	out[0] = 1
	var buf [8]string
	keys := buf[:0]
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out = protowire.AppendVarint(out, uint64(len(keys)))
	for _, k := range keys {
		v := fields[k]
		out = protowire.AppendString(out, k)
		switch kind := v.GetKind().(type) {
		case *structpb.Value_NumberValue:
			out = protowire.AppendFixed64(append(out, kindNumber), math.Float64bits(kind.NumberValue))
		case *structpb.Value_StringValue:
			out = protowire.AppendString(append(out, kindString), kind.StringValue)
		case *structpb.Value_BoolValue:
			out = protowire.AppendVarint(append(out, kindBool), protowire.EncodeBool(kind.BoolValue))
		case *structpb.Value_NullValue:
			out = protowire.AppendVarint(append(out, kindNull), uint64(kind.NullValue))
		case nil:
			if v == nil {
				// A nil entry encodes as an empty Value, yet it is not one here.
				out = append(out, kindNilEntry)
				continue
			}
			out = append(out, kindUnset)
		default:
			b, err := deterministic.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("custom_data[%q]: %w", k, err)
			}
			out = protowire.AppendBytes(append(out, kindEncoded), b)
			continue // the encoding holds the unknown fields
		}
		out = protowire.AppendBytes(out, v.ProtoReflect().GetUnknown())
	}
	return protowire.AppendBytes(out, s.ProtoReflect().GetUnknown()), nil
}

// The kinds of a custom_data value in customBytes' encoding.
const (
	kindNilEntry byte = iota
	kindUnset
	kindNumber
	kindString
	kindBool
	kindNull
	kindEncoded
)

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
	d := decoder{b: b[1:]}
	count := d.varint()
	s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for i := uint64(0); i < count && d.err == nil; i++ {
		k := string(d.bytes())
		if len(d.b) == 0 {
			d.err = io.ErrUnexpectedEOF
			break
		}
		kind := d.b[0]
		d.b = d.b[1:]
		v := &structpb.Value{}
		switch kind {
		case kindNilEntry:
			s.Fields[k] = nil
			continue
		case kindUnset:
		case kindNumber:
			x, n := protowire.ConsumeFixed64(d.b)
			d.advance(n)
			v.Kind = &structpb.Value_NumberValue{NumberValue: math.Float64frombits(x)}
		case kindString:
			v.Kind = &structpb.Value_StringValue{StringValue: string(d.bytes())}
		case kindBool:
			v.Kind = &structpb.Value_BoolValue{BoolValue: protowire.DecodeBool(d.varint())}
		case kindNull:
			v.Kind = &structpb.Value_NullValue{NullValue: structpb.NullValue(d.varint())}
		case kindEncoded:
			if err := (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(d.bytes(), v); err != nil {
				return nil, fmt.Errorf("custom_data[%q]: %w", k, err)
			}
			s.Fields[k] = v
			continue
		default:
			return nil, fmt.Errorf("custom_data[%q]: value kind %d", k, kind)
		}
		if u := d.bytes(); len(u) > 0 {
			v.ProtoReflect().SetUnknown(u)
		}
		s.Fields[k] = v
	}
	if u := d.bytes(); len(u) > 0 {
		s.ProtoReflect().SetUnknown(u)
	}
	return s, d.err
}

// decoder reads customBytes' encoding; its first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) advance(n int) {
	if n < 0 {
		if d.err == nil {
			d.err = protowire.ParseError(n)
		}
		d.b = nil
		return
	}
	d.b = d.b[n:]
}

func (d *decoder) varint() uint64 {
	x, n := protowire.ConsumeVarint(d.b)
	d.advance(n)
	return x
}

func (d *decoder) bytes() []byte {
	x, n := protowire.ConsumeBytes(d.b)
	d.advance(n)
	return x
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
