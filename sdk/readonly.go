package sdk

import (
	"bytes"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

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
	// copy is a cloned message, taken only if the request could not be
	// encoded (not valid UTF-8 in a string field: gRPC's decoder lets none in).
	copy proto.Message
}

var deterministic = proto.MarshalOptions{Deterministic: true}

// takeSnapshot records req before its handler runs.
func takeSnapshot(req proto.Message) snapshot {
	raw, err := deterministic.Marshal(req)
	if err != nil {
		return snapshot{copy: proto.Clone(req)}
	}
	return snapshot{raw: raw}
}

// requestChangedSince is requestChange against the request as s recorded it.
func requestChangedSince(s snapshot, after proto.Message) (string, protoreflect.FieldDescriptor) {
	if s.copy != nil {
		return requestChange(s.copy, after)
	}
	now, err := deterministic.Marshal(after)
	if err == nil && bytes.Equal(now, s.raw) {
		return "", nil
	}
	before := after.ProtoReflect().New().Interface()
	if err := (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(s.raw, before); err != nil {
		return "(the request as received could not be read back: " + err.Error() + ")", nil
	}
	return requestChange(before, after)
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
