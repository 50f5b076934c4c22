package lint

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/exocortex/exocortex/core/state"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/wiring"
)

func source(d state.Decl) string {
	if d.Source == "proto" {
		return "state.proto"
	}
	return "plugin " + d.Source
}

// declPlugin is the plugin a declaration came from, "" for state.proto.
func declPlugin(d state.Decl) string {
	if d.Source == "proto" {
		return ""
	}
	return d.Source
}

// keys checks the declarations of each key (rule 2: EXO021 to EXO023).
func (c *checker) keys() {
	for _, k := range c.g.Keys {
		if !k.Declared() {
			users := slices.Concat(k.Readers, k.Writers, k.Resetters)
			if len(users) == 0 {
				continue
			}
			slices.SortStableFunc(users, wiring.CompareFiring)
			first := users[0]
			c.add(Finding{Code: "EXO023", Severity: Error, Plugin: first.Plugin.Name, Extension: first.Name, Key: k.Name,
				Message: fmt.Sprintf("state key %q is used by %s but declared by no one: the host refuses the access", k.Name, ats(slices.Compact(users))),
				Fix:     "declare the key in the plugin's manifest (state_keys) with its message type and scope, or fix the name's spelling"})
			continue
		}
		first := k.Decls[0]
		for _, d := range k.Decls[1:] {
			switch {
			case d.Type != first.Type:
				c.add(Finding{Code: "EXO021", Severity: Error, Plugin: declPlugin(d), Key: k.Name,
					Message: fmt.Sprintf("state key %q is declared with type %s by %s and with type %s by %s: one key, one type", k.Name, first.Type, source(first), d.Type, source(d)),
					Fix:     "use the first declaration's type, or rename the key"})
			case d.Scope != first.Scope:
				c.add(Finding{Code: "EXO022", Severity: Error, Plugin: declPlugin(d), Key: k.Name,
					Message: fmt.Sprintf("state key %q is declared with scope %s by %s and with scope %s by %s", k.Name, state.ScopeName(first.Scope), source(first), state.ScopeName(d.Scope), source(d)),
					Fix:     "use one scope for the key everywhere"})
			}
		}
	}
}

// writersOf returns the extensions that write or reset k, in firing order.
func writersOf(k *wiring.Key) []*wiring.Extension {
	ws := slices.Concat(k.Writers, k.Resetters)
	slices.SortStableFunc(ws, wiring.CompareFiring)
	return slices.Compact(ws)
}

// flow checks that what is read is written and the other way round (rule 3:
// EXO031, EXO032). A key owned by "core" is written by the host itself.
func (c *checker) flow() {
	for _, k := range c.g.Keys {
		if !k.Declared() || k.Decl().Owner == "core" {
			continue
		}
		readers := running(k.Readers)
		all := writersOf(k)
		writers := running(all)
		switch {
		case len(readers) > 0 && len(writers) == 0:
			msg := fmt.Sprintf("state key %q is read by %s but no running extension writes it: the reader always sees it empty", k.Name, ats(readers))
			fix := fmt.Sprintf("add an extension that writes %q (its declared owner is %q), or stop reading it", k.Name, k.Decl().Owner)
			if len(all) > 0 {
				msg = fmt.Sprintf("state key %q is read by %s but its only writers do not run (%s): the reader always sees it empty", k.Name, ats(readers), whyOff(all))
				fix = "enable a writer in the configuration, or disable the readers with it"
			}
			c.add(Finding{Code: "EXO031", Severity: Error, Plugin: readers[0].Plugin.Name, Extension: readers[0].Name, Key: k.Name, Message: msg, Fix: fix})
		case len(writers) > 0 && len(readers) == 0:
			c.add(Finding{Code: "EXO032", Severity: Warning, Plugin: writers[0].Plugin.Name, Extension: writers[0].Name, Key: k.Name,
				Message: fmt.Sprintf("state key %q is written by %s but no running extension reads it", k.Name, ats(writers)),
				Fix:     "remove the write if nothing needs it, or add the reader's declaration (reads) where it is used"})
		}
	}
}

// whyOff explains why each extension does not run.
func whyOff(es []*wiring.Extension) string {
	var out []string
	for _, e := range es {
		switch {
		case e.ShadowedBy != "":
			out = append(out, at(e)+" is shadowed by plugin "+e.ShadowedBy)
		case e.Disabled:
			out = append(out, at(e)+" is disabled")
		}
	}
	return strings.Join(out, ", ")
}

// keptAcross reports whether a key keeps its value beyond one monologue: flags
// of narrower scopes are reset by the host and cannot stick.
func keptAcross(d state.Decl) bool {
	return d.Scope == exocortexv1.Scope_SCOPE_SESSION || d.Scope == exocortexv1.Scope_SCOPE_PERSISTENT
}

func messageType(name string) protoreflect.MessageDescriptor {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name))
	if err != nil {
		return nil
	}
	return mt.Descriptor()
}

// flagLike reports whether a key is a flag in the sense of rule 5: kept
// across monologues (session or persistent scope), and declared with flag set,
// or of a type that holds a state rather than data: google.protobuf.BoolValue,
// an integer wrapper (Int32Value and kin: a counter or a level used as a gate),
// or a known message whose one field is a bool or an integer. A Struct, or a
// message with more fields, is data; such a key is judged by use instead
// (gates, rule 9).
func flagLike(d state.Decl) bool {
	if !keptAcross(d) {
		return false
	}
	if d.Flag || d.Type == "google.protobuf.BoolValue" || integerWrapper[d.Type] {
		return true
	}
	md := messageType(d.Type)
	if md == nil || md.Fields().Len() != 1 {
		return false
	}
	f := md.Fields().Get(0)
	return f.Cardinality() != protoreflect.Repeated && scalarState(f.Kind())
}

// integerWrapper are the well-known integer types a counter or level is kept in.
var integerWrapper = map[string]bool{
	"google.protobuf.Int32Value": true, "google.protobuf.Int64Value": true,
	"google.protobuf.UInt32Value": true, "google.protobuf.UInt64Value": true,
}

// scalarState reports whether a field kind holds a state (a bool or an
// integer) rather than data.
func scalarState(k protoreflect.Kind) bool {
	switch k {
	case protoreflect.BoolKind, protoreflect.EnumKind,
		protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind, protoreflect.Uint64Kind,
		protoreflect.Sint32Kind, protoreflect.Sint64Kind, protoreflect.Fixed32Kind, protoreflect.Fixed64Kind,
		protoreflect.Sfixed32Kind, protoreflect.Sfixed64Kind:
		return true
	}
	return false
}

// setters returns the extensions of ws that set the key rather than clear it:
// an extension that lists the key in resets clears it (writes false, zero or
// nothing), and is a resetter, not a setter.
func setters(k *wiring.Key, ws []*wiring.Extension) []*wiring.Extension {
	var out []*wiring.Extension
	for _, e := range ws {
		if !slices.Contains(e.Spec.GetResets(), k.Name) {
			out = append(out, e)
		}
	}
	return out
}

// flags checks that every flag that is set can be reset (rule 5, seam 5: EXO051,
// EXO052). A setter lists the key in writes and not in resets; a resetter (a
// clearer) lists it in resets.
func (c *checker) flags() {
	for _, k := range c.g.Keys {
		if !k.Declared() || !flagLike(k.Decl()) {
			continue
		}
		set := setters(k, running(k.Writers))
		if len(set) == 0 {
			continue
		}
		resetters := running(k.Resetters)
		if len(resetters) > 0 {
			continue
		}
		s := set[0]
		scope := state.ScopeName(k.Decl().Scope)
		what := "flag"
		if integerWrapper[k.Decl().Type] {
			what = "counter"
		}
		if len(k.Resetters) == 0 {
			c.add(Finding{Code: "EXO051", Severity: Error, Plugin: s.Plugin.Name, Extension: s.Name, Key: k.Name,
				Message: fmt.Sprintf("%s %q (%s, %s scope) is set by %s and nothing resets it: once set it stays set for the %s", what, k.Name, k.Decl().Type, scope, ats(set), scope),
				Fix:     fmt.Sprintf("list %q in the resets of the extension that clears it (e.g. on the next success), or narrow its scope so the host resets it", k.Name)})
			continue
		}
		c.add(Finding{Code: "EXO052", Severity: Error, Plugin: s.Plugin.Name, Extension: s.Name, Key: k.Name,
			Message: fmt.Sprintf("%s %q (%s scope) is set by %s, but its only resetters do not run (%s): once set it stays set", what, k.Name, scope, ats(set), whyOff(k.Resetters)),
			Fix:     "enable the resetter in the configuration, or disable the setters with it"})
	}
}

// gateCapable reports whether a key's type can hold a gate: a BoolValue, an
// integer wrapper (a counter), a Struct or Value (whose fields can be
// anything), or a known message with a bool or integer field of its own (not
// inside a list or map: an accumulator such as a log or per-tool counts is data).
func gateCapable(d state.Decl) bool {
	switch {
	case flagLike(d), d.Type == "google.protobuf.BoolValue", integerWrapper[d.Type],
		d.Type == "google.protobuf.Struct", d.Type == "google.protobuf.Value":
		return true
	}
	md := messageType(d.Type)
	if md == nil {
		return false
	}
	for i := 0; i < md.Fields().Len(); i++ {
		if f := md.Fields().Get(i); f.Cardinality() != protoreflect.Repeated && !f.IsMap() && scalarState(f.Kind()) && f.Kind() != protoreflect.EnumKind {
			return true
		}
	}
	return false
}

// gates reports hand-rolled once-per-session gates (rule 9, seam 9: EXO091),
// judged by use: a key kept across monologues, of a type that can hold a gate
// (gateCapable: a BoolValue, an Int32Value counter, a field of a Struct or of
// a message), that extensions read and set (write without resetting it) at
// two or more hooks.
// It does not matter whether one extension name is registered at both hooks
// or two names share the key (the seed's layout: one file deployed at two
// hooks under two names). Whichever hook fires first sets the key and the
// other skips for the rest of the session; the host's once primitive is keyed
// by extension and hook, so it cannot make that mistake. An extension that
// lists the key in resets clears it and is not a gate's setter.
func (c *checker) gates() {
	for _, k := range c.g.Keys {
		if !k.Declared() || !keptAcross(k.Decl()) || !gateCapable(k.Decl()) {
			continue
		}
		var users []*wiring.Extension
		hookSet := map[string]bool{}
		for _, e := range setters(k, k.Writers) {
			if e.ShadowedBy != "" || !slices.Contains(e.Spec.GetReads(), k.Name) {
				continue
			}
			users = append(users, e)
			hookSet[e.Hook.Name] = true
		}
		if len(hookSet) < 2 {
			continue
		}
		slices.SortStableFunc(users, wiring.CompareFiring)
		first := users[0]
		names := map[string]bool{}
		var hooksAt []string
		for _, e := range users {
			names[e.Name] = true
			hooksAt = append(hooksAt, e.Hook.Name)
		}
		hooksAt = slices.Compact(hooksAt)
		var msg string
		if len(names) == 1 {
			msg = fmt.Sprintf("extension %s runs at %s and reads and sets %q (%s) at each: a hand-rolled once-per-session gate, so whichever hook fires first (%s) sets it and the other never runs its work",
				first.Name, strings.Join(hooksAt, " and "), k.Name, k.Decl().Type, first.Hook.Name)
		} else {
			msg = fmt.Sprintf("%s all read and set %q (%s): one gate shared by %d extension names at %d hooks (the seed's layout: one extension deployed at two hooks), so the first to fire (%s) sets it and the others skip their work for the session",
				ats(users), k.Name, k.Decl().Type, len(names), len(hooksAt), at(first))
		}
		c.add(Finding{Code: "EXO091", Severity: Error, Plugin: first.Plugin.Name, Extension: first.Name, Key: k.Name,
			Message: msg,
			Fix:     "keep the work in one extension at one hook and set once_per_session (sdk.Spec.OncePerSession) instead of gating on a key"})
	}
}

func uniqStrings(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
