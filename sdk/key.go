package sdk

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// Key is a typed shared-state key: a name bound to one protobuf message type T (a
// pointer to a generated message, e.g. *exocortexv1.FailureTracker). A Key is an
// immutable value; build it where it is needed (a function or a field) rather than
// keeping it in a package variable.
//
// The zero Key is invalid: Serve refuses a Spec that lists it.
type Key[T proto.Message] struct {
	ki *keyInfo
}

// keyInfo is what a key declares. Never modified after construction.
type keyInfo struct {
	name     string
	typeName protoreflect.FullName
	scope    exocortexv1.Scope
	owner    string
	doc      string
	flag     bool
	builtin  bool
}

// KeyRef is any Key, whatever its type: what a Spec lists in Reads, Writes and
// Resets. Only Key[T] implements it.
type KeyRef interface {
	// Name is the key's name, e.g. "failure_tracker".
	Name() string
	// StateKeySpec is the key's declaration as the manifest carries it. The owner
	// of a plugin key is filled in by the manifest (the first extension, by name,
	// that writes it).
	StateKeySpec() *exocortexv1.StateKeySpec
	// Builtin reports whether the key is declared in state.proto (KeyOf) rather
	// than by the plugin (NewKey).
	Builtin() bool

	info() *keyInfo
}

// KeyOf returns the built-in key whose type is T: its name, scope, owner and doc come
// from the (exocortex.v1.state_key) option on T's message in state.proto.
//
// KeyOf panics when T's message has no such option, since that is a programming
// error fixed once at the call site (a plugin's own key is made with NewKey). When
// the panic happens inside an extension's Spec method, NewServer and Serve report it
// as an error naming the extension.
func KeyOf[T proto.Message]() Key[T] {
	md := descriptorOf[T]()
	sk, ok := stateKeyOption(md)
	if !ok {
		panic(fmt.Sprintf("sdk.KeyOf: message %s declares no (exocortex.v1.state_key) option, "+
			"so it is not a built-in state key; declare a plugin key with sdk.NewKey", md.FullName()))
	}
	return Key[T]{ki: &keyInfo{
		name:     sk.GetName(),
		typeName: md.FullName(),
		scope:    sk.GetScope(),
		owner:    sk.GetOwner(),
		doc:      sk.GetDoc(),
		flag:     sk.GetFlag(),
		builtin:  true,
	}}
}

// NewKey declares a plugin's own key of type T. It goes into the manifest's
// state_keys when an extension of the plugin lists it in its Spec. The name must not
// be a built-in key's and the scope must be set; Serve checks both.
func NewKey[T proto.Message](name string, scope exocortexv1.Scope, doc string) Key[T] {
	md := descriptorOf[T]()
	return Key[T]{ki: &keyInfo{
		name:     name,
		typeName: md.FullName(),
		scope:    scope,
		doc:      doc,
	}}
}

// AsFlag returns a copy of a plugin key marked as a flag: one extension sets it and
// another must reset it (the wiring lint checks both exist). A built-in key is
// returned unchanged: state.proto decides whether it is a flag.
func (k Key[T]) AsFlag() Key[T] {
	if k.ki == nil || k.ki.builtin {
		return k
	}
	cp := *k.ki
	cp.flag = true
	return Key[T]{ki: &cp}
}

// Name is the key's name.
func (k Key[T]) Name() string {
	if k.ki == nil {
		return ""
	}
	return k.ki.name
}

// Builtin reports whether the key is declared in state.proto.
func (k Key[T]) Builtin() bool { return k.ki != nil && k.ki.builtin }

// StateKeySpec returns the key's declaration (a new message on each call).
func (k Key[T]) StateKeySpec() *exocortexv1.StateKeySpec {
	if k.ki == nil {
		return &exocortexv1.StateKeySpec{}
	}
	return k.ki.spec()
}

func (k Key[T]) info() *keyInfo { return k.ki }

// String returns the key's name and type, e.g. "failure_tracker (exocortex.v1.FailureTracker)".
func (k Key[T]) String() string {
	if k.ki == nil {
		return "<zero sdk.Key>"
	}
	return fmt.Sprintf("%s (%s)", k.ki.name, k.ki.typeName)
}

// Get returns the key's value as the host sent it with this call, overlaid by this
// call's own Set and Reset. ok is false when the key has no value.
//
// The key must be in the extension's Spec.Reads; otherwise Get returns no value and
// the call fails with an error naming the extension and the key (the host enforces
// the same rule).
func (k Key[T]) Get(c *Call) (v T, ok bool) {
	if err := c.check(k, accessRead); err != nil {
		return v, false
	}
	a, present := c.value(k.ki.name)
	if !present {
		return v, false
	}
	msg := newMessage[T]()
	if err := a.UnmarshalTo(msg); err != nil {
		c.fail(fmt.Errorf("extension %q: state key %q: value of type %q does not decode as %s: %w",
			c.extension, k.ki.name, a.GetTypeUrl(), k.ki.typeName, err))
		return v, false
	}
	return msg, true
}

// Set records a new value for the key; the SDK sends it in the response's changes.
// v is encoded at once: changing it afterwards changes nothing.
// The key must be in the extension's Spec.Writes, and v must not be nil (use Reset to
// clear a key); otherwise the call fails with an error naming extension and key.
func (k Key[T]) Set(c *Call, v T) {
	if err := c.check(k, accessWrite); err != nil {
		return
	}
	if !v.ProtoReflect().IsValid() {
		c.fail(fmt.Errorf("extension %q: state key %q: Set with a nil value; use Reset to clear a key",
			c.extension, k.ki.name))
		return
	}
	a, err := anypb.New(v)
	if err != nil {
		c.fail(fmt.Errorf("extension %q: state key %q: encode value: %w", c.extension, k.ki.name, err))
		return
	}
	c.record(k.ki.name, a)
}

// Reset records that the key is cleared. The key must be in the extension's
// Spec.Writes (and, for the wiring lint, should be in Spec.Resets).
func (k Key[T]) Reset(c *Call) {
	if err := c.check(k, accessWrite); err != nil {
		return
	}
	c.record(k.ki.name, nil)
}

func (i *keyInfo) spec() *exocortexv1.StateKeySpec {
	return &exocortexv1.StateKeySpec{
		Name:  i.name,
		Type:  string(i.typeName),
		Scope: i.scope,
		Owner: i.owner,
		Doc:   i.doc,
		Flag:  i.flag,
	}
}

// BuiltinKeys returns the declarations of every built-in key of state.proto, sorted
// by name: the registry the host starts from.
func BuiltinKeys() []*exocortexv1.StateKeySpec {
	var out []*exocortexv1.StateKeySpec
	msgs := exocortexv1.File_exocortex_v1_state_proto.Messages()
	for i := range msgs.Len() {
		md := msgs.Get(i)
		sk, ok := stateKeyOption(md)
		if !ok {
			continue
		}
		out = append(out, &exocortexv1.StateKeySpec{
			Name:  sk.GetName(),
			Type:  string(md.FullName()),
			Scope: sk.GetScope(),
			Owner: sk.GetOwner(),
			Doc:   sk.GetDoc(),
			Flag:  sk.GetFlag(),
		})
	}
	slices.SortFunc(out, func(a, b *exocortexv1.StateKeySpec) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// stateKeyOption reads the (exocortex.v1.state_key) option of a message.
func stateKeyOption(md protoreflect.MessageDescriptor) (*exocortexv1.StateKey, bool) {
	opts := md.Options()
	if opts == nil || !proto.HasExtension(opts, exocortexv1.E_StateKey) {
		return nil, false
	}
	sk, ok := proto.GetExtension(opts, exocortexv1.E_StateKey).(*exocortexv1.StateKey)
	if !ok || sk.GetName() == "" {
		return nil, false
	}
	return sk, true
}

// descriptorOf returns T's message descriptor. Generated messages answer through a
// nil pointer.
func descriptorOf[T proto.Message]() protoreflect.MessageDescriptor {
	var zero T
	if any(zero) == nil {
		panic("sdk: a key's type must be a generated message pointer such as *exocortexv1.FailureTracker, not an interface type")
	}
	return zero.ProtoReflect().Descriptor()
}

// newMessage returns a new, empty T.
func newMessage[T proto.Message]() T {
	var zero T
	return zero.ProtoReflect().New().Interface().(T)
}
