package wiring

import (
	"cmp"
	"path"
	"slices"
	"strings"

	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/core/state"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/signals"
)

// Extension is one extension at one hook, as a plugin declared it.
type Extension struct {
	Name   string
	Plugin *Plugin
	Hook   hooks.Info
	Spec   *exocortexv1.ExtensionSpec
	// Disabled is true when the configuration turns the extension off, or it is
	// shipped disabled and the configuration does not turn it on.
	Disabled bool
	// ShadowedBy names the higher-priority plugin whose extension of the same
	// name at the same hook runs instead ("" when none).
	ShadowedBy string
}

// Runs reports whether the host would call the extension.
func (e *Extension) Runs() bool { return !e.Disabled && e.ShadowedBy == "" }

// Order is the extension's order at its hook.
func (e *Extension) Order() int32 { return e.Spec.GetOrder() }

// Key is one shared-state key: its declarations and who touches it.
type Key struct {
	Name string
	// Decls are every declaration of the name: the built-in one first, then the
	// plugins' in priority order. Empty when nobody declares the key.
	Decls []state.Decl
	// Readers, Writers and Resetters hold every extension that lists the key,
	// running or not, in firing order.
	Readers, Writers, Resetters []*Extension
}

// Declared reports whether anyone declares the key.
func (k *Key) Declared() bool { return len(k.Decls) > 0 }

// Decl is the declaration in force: the built-in one, else the first plugin's.
func (k *Key) Decl() state.Decl {
	if len(k.Decls) == 0 {
		return state.Decl{Name: k.Name}
	}
	return k.Decls[0]
}

// FileUse is one plugin's declaration of a data file.
type FileUse struct {
	Plugin *Plugin
	Spec   *exocortexv1.FileSpec
}

// Reads reports whether the use reads the file.
func (u FileUse) Reads() bool {
	a := u.Spec.GetAccess()
	return a == exocortexv1.Access_ACCESS_READ || a == exocortexv1.Access_ACCESS_READ_WRITE
}

// Writes reports whether the use writes the file.
func (u FileUse) Writes() bool {
	a := u.Spec.GetAccess()
	return a == exocortexv1.Access_ACCESS_WRITE || a == exocortexv1.Access_ACCESS_READ_WRITE
}

// File is a data file by its logical id, with every declaration of it.
type File struct {
	ID   string
	Uses []FileUse
}

// Paths returns the distinct paths the file is declared under, cleaned and sorted.
func (f *File) Paths() []string {
	var out []string
	for _, u := range f.Uses {
		out = append(out, CleanPath(u.Spec.GetPath()))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// CleanPath normalises a declared file path for comparison: slashes, no "." or
// "..", no trailing slash. Variables such as $EXOCORTEX_HOME stay as written.
func CleanPath(p string) string {
	if p == "" {
		return ""
	}
	return path.Clean(strings.ReplaceAll(p, `\`, "/"))
}

// Tool is a tool a plugin declares.
type Tool struct {
	Name   string
	Plugin *Plugin
	Spec   *exocortexv1.ToolSpec
	// ShadowedBy names the higher-priority plugin whose tool of the same name is
	// used instead ("" when none).
	ShadowedBy string
}

// Signal is one signal value with its constant, its prompt files and its consumers.
type Signal struct {
	Value string
	// Const is the generated constant, nil when there is none.
	Const *signals.Info
	// Prompts are the prompt files whose front matter declares the value.
	Prompts []*Prompt
	// Consumers are the extensions that declare they react to it.
	Consumers []*Extension
}

// Graph is the wiring derived from a Model. Every list is in a fixed order.
type Graph struct {
	Model *Model
	// Plugins in priority order, then by name.
	Plugins []*Plugin
	// Extensions in firing order: hook, order, name, plugin priority. Disabled
	// and shadowed extensions are included (see Extension.Runs).
	Extensions []*Extension
	// Keys sorted by name: every declared key and every name an extension uses.
	Keys []*Key
	// Files sorted by id.
	Files []*File
	// Tools sorted by name, then plugin priority.
	Tools []*Tool
	// Signals sorted by value: every value a prompt declares, a constant names,
	// or an extension consumes.
	Signals []*Signal

	keys  map[string]*Key
	hooks map[exocortexv1.Hook]hooks.Info
}

// Key returns the key called name, or nil.
func (g *Graph) Key(name string) *Key { return g.keys[name] }

// Hook describes h, if the protocol has it (the table of package hooks, built
// once per graph).
func (g *Graph) Hook(h exocortexv1.Hook) (hooks.Info, bool) {
	in, ok := g.hooks[h]
	return in, ok
}

// HookName is the snake_case name of h, or its enum string if it is unknown.
func (g *Graph) HookName(h exocortexv1.Hook) string {
	if in, ok := g.hooks[h]; ok {
		return in.Name
	}
	return h.String()
}

// Build derives the graph of m. It does not change m.
func Build(m *Model) *Graph {
	g := &Graph{Model: m, keys: map[string]*Key{}, hooks: map[exocortexv1.Hook]hooks.Info{}}
	for _, h := range hooks.All() {
		g.hooks[h.Hook] = h
	}
	for i := range m.Plugins {
		g.Plugins = append(g.Plugins, &m.Plugins[i])
	}
	slices.SortStableFunc(g.Plugins, func(a, b *Plugin) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), strings.Compare(a.Name, b.Name))
	})

	key := func(name string) *Key {
		k := g.keys[name]
		if k == nil {
			k = &Key{Name: name}
			g.keys[name] = k
		}
		return k
	}
	for _, d := range m.BuiltinKeys {
		key(d.Name).Decls = append(key(d.Name).Decls, d)
	}

	type hookName struct {
		name string
		hook exocortexv1.Hook
	}
	firstAt := map[hookName]*Plugin{}
	tools := map[string]*Tool{}
	files := map[string]*File{}
	for _, p := range g.Plugins {
		mf := p.Manifest
		if mf == nil {
			continue
		}
		for _, ks := range mf.GetStateKeys() {
			key(ks.GetName()).Decls = append(key(ks.GetName()).Decls, state.FromSpec(p.Name, ks))
		}
		for _, spec := range mf.GetExtensions() {
			info, ok := g.hooks[spec.GetHook()]
			if !ok {
				// An unknown hook never fires; lint reports the declaration.
				info = hooks.Info{Hook: spec.GetHook(), Name: spec.GetHook().String()}
			}
			e := &Extension{
				Name: spec.GetName(), Plugin: p, Hook: info, Spec: spec,
				Disabled: m.Disabled[spec.GetName()] || (spec.GetDisabled() && !m.Enabled[spec.GetName()]),
			}
			at := hookName{spec.GetName(), spec.GetHook()}
			if first, ok := firstAt[at]; ok && first != p {
				e.ShadowedBy = first.Name
			} else {
				firstAt[at] = p
			}
			g.Extensions = append(g.Extensions, e)
		}
		for _, ts := range mf.GetTools() {
			t := &Tool{Name: ts.GetName(), Plugin: p, Spec: ts}
			if first, ok := tools[t.Name]; ok && first.Plugin != p {
				t.ShadowedBy = first.Plugin.Name
			} else if !ok {
				tools[t.Name] = t
			}
			g.Tools = append(g.Tools, t)
		}
		for _, fs := range mf.GetFiles() {
			f := files[fs.GetId()]
			if f == nil {
				f = &File{ID: fs.GetId()}
				files[f.ID] = f
				g.Files = append(g.Files, f)
			}
			f.Uses = append(f.Uses, FileUse{Plugin: p, Spec: fs})
		}
	}
	slices.SortStableFunc(g.Extensions, CompareFiring)
	slices.SortStableFunc(g.Tools, func(a, b *Tool) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.Plugin.Priority, b.Plugin.Priority), strings.Compare(a.Plugin.Name, b.Plugin.Name))
	})
	slices.SortStableFunc(g.Files, func(a, b *File) int { return strings.Compare(a.ID, b.ID) })
	for _, f := range g.Files {
		slices.SortStableFunc(f.Uses, func(a, b FileUse) int {
			return cmp.Or(
				cmp.Compare(a.Plugin.Priority, b.Plugin.Priority),
				strings.Compare(a.Plugin.Name, b.Plugin.Name),
				strings.Compare(a.Spec.GetUser(), b.Spec.GetUser()),
				strings.Compare(a.Spec.GetPath(), b.Spec.GetPath()),
				cmp.Compare(a.Spec.GetAccess(), b.Spec.GetAccess()),
			)
		})
	}

	for _, e := range g.Extensions {
		for _, name := range uniq(e.Spec.GetReads()) {
			key(name).Readers = append(key(name).Readers, e)
		}
		for _, name := range uniq(e.Spec.GetWrites()) {
			key(name).Writers = append(key(name).Writers, e)
		}
		for _, name := range uniq(e.Spec.GetResets()) {
			key(name).Resetters = append(key(name).Resetters, e)
		}
	}
	for _, k := range g.keys {
		g.Keys = append(g.Keys, k)
	}
	slices.SortFunc(g.Keys, func(a, b *Key) int { return strings.Compare(a.Name, b.Name) })

	g.Signals = buildSignals(m, g.Extensions)
	return g
}

// CompareFiring orders extensions as the host calls them: by hook, order, name,
// then plugin priority.
func CompareFiring(a, b *Extension) int {
	return cmp.Or(
		cmp.Compare(a.Hook.Hook, b.Hook.Hook),
		cmp.Compare(a.Order(), b.Order()),
		strings.Compare(a.Name, b.Name),
		cmp.Compare(a.Plugin.Priority, b.Plugin.Priority),
		strings.Compare(a.Plugin.Name, b.Plugin.Name),
	)
}

func buildSignals(m *Model, exts []*Extension) []*Signal {
	byValue := map[string]*Signal{}
	sig := func(v string) *Signal {
		s := byValue[v]
		if s == nil {
			s = &Signal{Value: v}
			byValue[v] = s
		}
		return s
	}
	for i := range m.Signals {
		c := &m.Signals[i]
		if s := sig(c.Value); s.Const == nil {
			s.Const = c
		}
	}
	for i := range m.Prompts {
		p := &m.Prompts[i]
		if p.Signal != "" {
			sig(p.Signal).Prompts = append(sig(p.Signal).Prompts, p)
		}
	}
	for _, e := range exts {
		for _, v := range uniq(e.Spec.GetConsumesSignals()) {
			sig(v).Consumers = append(sig(v).Consumers, e)
		}
	}
	out := make([]*Signal, 0, len(byValue))
	for _, s := range byValue {
		slices.SortStableFunc(s.Prompts, func(a, b *Prompt) int {
			return cmp.Or(-compareBool(a.Builtin, b.Builtin), strings.Compare(a.Source, b.Source), strings.Compare(a.File, b.File))
		})
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *Signal) int { return strings.Compare(a.Value, b.Value) })
	return out
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// uniq returns the distinct non-empty names of s in their first order.
func uniq(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := make([]string, 0, len(s))
	for _, v := range s {
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
