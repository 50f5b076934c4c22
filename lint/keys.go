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

// flagLike reports whether a key is a flag in the sense of rule 5: declared with
// flag set, or of type google.protobuf.BoolValue, or of a known message whose one
// field is a bool; and kept across monologues (session or persistent scope).
func flagLike(d state.Decl) bool {
	if !keptAcross(d) {
		return false
	}
	if d.Flag || d.Type == "google.protobuf.BoolValue" {
		return true
	}
	md := messageType(d.Type)
	return md != nil && md.Fields().Len() == 1 && md.Fields().Get(0).Kind() == protoreflect.BoolKind
}

// gateLike widens flagLike for rule 9: a key whose known message type has any
// bool field can serve as a hand-rolled "already done" gate (the seed's
// memory_catalog_built).
func gateLike(d state.Decl) bool {
	if flagLike(d) {
		return true
	}
	if !keptAcross(d) {
		return false
	}
	md := messageType(d.Type)
	if md == nil {
		return false
	}
	for i := 0; i < md.Fields().Len(); i++ {
		if f := md.Fields().Get(i); f.Kind() == protoreflect.BoolKind && f.Cardinality() != protoreflect.Repeated {
			return true
		}
	}
	return false
}

// flags checks that every flag that is set can be reset (rule 5, seam 5: EXO051,
// EXO052). A setter is an extension that lists the key in writes; a resetter
// lists it in resets.
func (c *checker) flags() {
	for _, k := range c.g.Keys {
		if !k.Declared() || !flagLike(k.Decl()) {
			continue
		}
		setters := running(k.Writers)
		if len(setters) == 0 {
			continue
		}
		resetters := running(k.Resetters)
		if len(resetters) > 0 {
			continue
		}
		s := setters[0]
		scope := state.ScopeName(k.Decl().Scope)
		if len(k.Resetters) == 0 {
			c.add(Finding{Code: "EXO051", Severity: Error, Plugin: s.Plugin.Name, Extension: s.Name, Key: k.Name,
				Message: fmt.Sprintf("flag %q (%s scope) is set by %s and nothing resets it: once set it stays set for the %s", k.Name, scope, ats(setters), scope),
				Fix:     fmt.Sprintf("list %q in the resets of the extension that clears it (e.g. on the next success), or narrow its scope so the host resets it", k.Name)})
			continue
		}
		c.add(Finding{Code: "EXO052", Severity: Error, Plugin: s.Plugin.Name, Extension: s.Name, Key: k.Name,
			Message: fmt.Sprintf("flag %q (%s scope) is set by %s, but its only resetters do not run (%s): once set it stays set", k.Name, scope, ats(setters), whyOff(k.Resetters)),
			Fix:     "enable the resetter in the configuration, or disable the setters with it"})
	}
}

// gates reports hand-rolled once-per-session gates (rule 9, seam 9: EXO091): one
// extension registered at two or more hooks that reads and writes the same
// flag-like key. The first hook to fire sets the flag and the other skips for
// the rest of the session; the host's once primitive is keyed by extension and
// hook, so it cannot make that mistake.
func (c *checker) gates() {
	type id struct {
		plugin *wiring.Plugin
		name   string
	}
	groups := map[id][]*wiring.Extension{}
	var order []id
	for _, e := range c.g.Extensions {
		if e.ShadowedBy != "" {
			continue
		}
		k := id{e.Plugin, e.Name}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], e)
	}
	for _, k := range order {
		exts := groups[k]
		// The hooks at which the extension reads and writes each key.
		both := map[string][]*wiring.Extension{}
		for _, e := range exts {
			writes := map[string]bool{}
			for _, w := range slices.Concat(e.Spec.GetWrites(), e.Spec.GetResets()) {
				writes[w] = true
			}
			for _, r := range uniqStrings(e.Spec.GetReads()) {
				if writes[r] {
					both[r] = append(both[r], e)
				}
			}
		}
		var keys []string
		for key, es := range both {
			if len(es) > 1 {
				keys = append(keys, key)
			}
		}
		slices.Sort(keys)
		for _, key := range keys {
			kk := c.g.Key(key)
			if kk == nil || !kk.Declared() || !gateLike(kk.Decl()) {
				continue
			}
			es := both[key]
			var hooksAt []string
			for _, e := range es {
				hooksAt = append(hooksAt, e.Hook.Name)
			}
			c.add(Finding{Code: "EXO091", Severity: Error, Plugin: k.plugin.Name, Extension: k.name, Key: key,
				Message: fmt.Sprintf("extension %s runs at %s and reads and writes %q at each: a hand-rolled once-per-session gate, so whichever hook fires first (%s) sets it and the other never runs its work",
					k.name, strings.Join(hooksAt, " and "), key, es[0].Hook.Name),
				Fix: "keep the extension at one hook and set once_per_session (sdk.Spec.OncePerSession) instead of gating on a key"})
		}
	}
}

func uniqStrings(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
