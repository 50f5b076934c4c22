package secrets

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
)

// MaskProto returns msg with every secret masked in its string and bytes
// fields, at any depth: msg itself when it holds none (the common case costs a
// read of its fields), else a masked copy (msg may share messages with the
// history, which must not change under it).
func MaskProto[M proto.Message](m *Masker, msg M) M {
	if m == nil || !msg.ProtoReflect().IsValid() || !m.protoContains(msg.ProtoReflect()) {
		return msg
	}
	c := proto.Clone(msg).(M)
	m.maskMessage(c.ProtoReflect())
	return c
}

// anyName is google.protobuf.Any, whose value is a serialized message: it is
// masked inside the message it holds, never as bytes (which would corrupt it).
const anyName protoreflect.FullName = "google.protobuf.Any"

// anyInner is the message an Any holds, nil when its type is not linked in.
func anyInner(msg protoreflect.Message) *anypb.Any {
	if msg.Descriptor().FullName() != anyName {
		return nil
	}
	a, ok := msg.Interface().(*anypb.Any)
	if !ok {
		return nil
	}
	return a
}

func (m *Masker) protoContains(msg protoreflect.Message) bool {
	if a := anyInner(msg); a != nil {
		inner, err := a.UnmarshalNew()
		return err == nil && m.protoContains(inner.ProtoReflect())
	}
	found := false
	msg.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && !found; i++ {
				found = m.valueContains(fd, l.Get(i))
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				found = m.Contains(k.String()) || m.valueContains(fd.MapValue(), mv)
				return !found
			})
		default:
			found = m.valueContains(fd, v)
		}
		return !found
	})
	return found
}

func (m *Masker) valueContains(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return m.Contains(v.String())
	case protoreflect.BytesKind:
		return m.Contains(string(v.Bytes()))
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return m.protoContains(v.Message())
	}
	return false
}

func (m *Masker) maskMessage(msg protoreflect.Message) {
	if a := anyInner(msg); a != nil {
		inner, err := a.UnmarshalNew()
		if err != nil || !m.protoContains(inner.ProtoReflect()) {
			return
		}
		m.maskMessage(inner.ProtoReflect())
		if b, err := proto.Marshal(inner); err == nil {
			a.Value = b
		}
		return
	}
	msg.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				if nv, ok := m.maskValue(fd, l.Get(i)); ok {
					l.Set(i, nv)
				}
			}
		case fd.IsMap():
			mp := v.Map()
			type kv struct {
				k protoreflect.MapKey
				v protoreflect.Value
			}
			var moved []kv
			mp.Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if nv, ok := m.maskValue(fd.MapValue(), mv); ok {
					mp.Set(k, nv)
				}
				if fd.MapKey().Kind() == protoreflect.StringKind && m.Contains(k.String()) {
					moved = append(moved, kv{k, mp.Get(k)})
				}
				return true
			})
			for _, e := range moved {
				mp.Clear(e.k)
				mp.Set(protoreflect.ValueOfString(m.Mask(e.k.String())).MapKey(), e.v)
			}
		default:
			if nv, ok := m.maskValue(fd, v); ok {
				msg.Set(fd, nv)
			}
		}
		return true
	})
}

// maskValue masks one scalar in place of a message field; ok is false when
// nothing changed (messages are masked in place).
func (m *Masker) maskValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) (protoreflect.Value, bool) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		if s := v.String(); m.Contains(s) {
			return protoreflect.ValueOfString(m.Mask(s)), true
		}
	case protoreflect.BytesKind:
		if b := v.Bytes(); m.Contains(string(b)) {
			return protoreflect.ValueOfBytes(m.MaskBytes(b)), true
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		m.maskMessage(v.Message())
	}
	return v, false
}
