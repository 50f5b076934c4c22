// Package state is the typed shared-state store that replaces Agent Zero's free-form
// agent.data dictionary and agent attributes.
//
// A key is declared once: a name bound to one protobuf message type, a scope and an
// owner. The built-in keys are declared in proto/exocortex/v1/state.proto as an option
// on their message; a plugin may declare more in its manifest. Declaring a name twice
// with different types is an error, so two files can no longer disagree about a key
// (the seed's TRACKER_KEY seam). The host resets scoped keys itself, so a flag cannot
// stay stuck because the extension that should clear it did not run.
//
// An extension sees only the keys it declared it reads and may change only the keys
// it declared it writes, and only with a value of the declared type; anything else is
// an *AccessError naming plugin, extension and key.
package state

import (
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// Decl is one key's declaration.
type Decl struct {
	Name string
	// Type is the full protobuf message name, e.g. "exocortex.v1.FailureTracker".
	Type  string
	Scope exocortexv1.Scope
	Owner string
	Doc   string
	Flag  bool
	// Source says where the declaration came from: "proto" for the built-ins, or
	// the plugin that declared it.
	Source string
}

// TypeURL is the google.protobuf.Any type URL of the key's values.
func (d Decl) TypeURL() string { return "type.googleapis.com/" + d.Type }

// ScopeName returns the lowercase name of a scope ("iteration", "session", …).
func ScopeName(s exocortexv1.Scope) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "SCOPE_"))
}

// Builtin returns the keys declared in state.proto, sorted by name.
func Builtin() []Decl {
	msgs := exocortexv1.File_exocortex_v1_state_proto.Messages()
	var out []Decl
	for i := 0; i < msgs.Len(); i++ {
		if d, ok := declOf(msgs.Get(i)); ok {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// DeclOf returns the declaration carried by a message type's state_key option.
func DeclOf(m proto.Message) (Decl, bool) { return declOf(m.ProtoReflect().Descriptor()) }

func declOf(md protoreflect.MessageDescriptor) (Decl, bool) {
	opts := md.Options()
	if opts == nil || !proto.HasExtension(opts, exocortexv1.E_StateKey) {
		return Decl{}, false
	}
	k := proto.GetExtension(opts, exocortexv1.E_StateKey).(*exocortexv1.StateKey)
	return Decl{
		Name:   k.GetName(),
		Type:   string(md.FullName()),
		Scope:  k.GetScope(),
		Owner:  k.GetOwner(),
		Doc:    k.GetDoc(),
		Flag:   k.GetFlag(),
		Source: "proto",
	}, true
}

// FromSpec converts a manifest's key declaration.
func FromSpec(plugin string, s *exocortexv1.StateKeySpec) Decl {
	return Decl{
		Name: s.GetName(), Type: s.GetType(), Scope: s.GetScope(), Owner: s.GetOwner(),
		Doc: s.GetDoc(), Flag: s.GetFlag(), Source: plugin,
	}
}

// Registry holds the declarations in force. It is not safe for concurrent
// mutation; the host builds it while loading plugins and then only reads it.
type Registry struct {
	decls map[string]Decl
}

// NewRegistry returns a registry holding the built-in keys.
func NewRegistry() *Registry {
	r := &Registry{decls: map[string]Decl{}}
	for _, d := range Builtin() {
		r.decls[d.Name] = d
	}
	return r
}

// Clone returns an independent copy (the host checks a reloaded plugin against a
// copy before it swaps the plugin in).
func (r *Registry) Clone() *Registry {
	c := &Registry{decls: make(map[string]Decl, len(r.decls))}
	for k, v := range r.decls {
		c.decls[k] = v
	}
	return c
}

// Declare adds a declaration. Declaring a known name again with the same type is
// allowed (several plugins may declare the key they share); with another type it is
// an error naming both declarations.
func (r *Registry) Declare(d Decl) error {
	if d.Name == "" {
		return fmt.Errorf("state key declared by %s has no name", d.Source)
	}
	if d.Type == "" {
		return fmt.Errorf("state key %q declared by %s has no message type", d.Name, d.Source)
	}
	if d.Scope == exocortexv1.Scope_SCOPE_UNSPECIFIED {
		return fmt.Errorf("state key %q declared by %s has no scope (iteration, monologue, session or persistent)", d.Name, d.Source)
	}
	if old, ok := r.decls[d.Name]; ok {
		if old.Type != d.Type {
			return fmt.Errorf("state key %q is declared twice with different types: %s by %s, %s by %s; one key, one type: rename one of them",
				d.Name, old.Type, old.Source, d.Type, d.Source)
		}
		if old.Scope != d.Scope {
			return fmt.Errorf("state key %q is declared twice with different scopes: %s by %s, %s by %s",
				d.Name, ScopeName(old.Scope), old.Source, ScopeName(d.Scope), d.Source)
		}
		return nil
	}
	r.decls[d.Name] = d
	return nil
}

// Lookup returns the declaration of name.
func (r *Registry) Lookup(name string) (Decl, bool) {
	d, ok := r.decls[name]
	return d, ok
}

// All returns every declaration, sorted by name.
func (r *Registry) All() []Decl {
	out := make([]Decl, 0, len(r.decls))
	for _, d := range r.decls {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
