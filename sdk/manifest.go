package sdk

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/signals"
)

// extEntry is an extension as the server dispatches to it.
type extEntry struct {
	ext   Extension
	spec  Spec
	hooks map[exocortexv1.Hook]bool
	// handlers are the values Spec.Hooks declares, by hook.
	handlers map[exocortexv1.Hook]any
	reads    map[string]bool
	writes   map[string]bool
}

// built is a validated plugin: the manifest and the dispatch tables.
type built struct {
	manifest *exocortexv1.ManifestResponse
	exts     map[string]*extEntry
	tools    map[string]Tool
}

// build validates p and derives its manifest. Every problem is reported, each
// naming the extension, key or tool at fault.
func build(p Plugin) (*built, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if p.Name == "" {
		bad("plugin has no Name")
	}
	if len(p.Extensions) == 0 && len(p.Tools) == 0 {
		bad("plugin %q serves no extension and no tool", p.Name)
	}
	if len(p.MemoryWriteAreas) > 0 && !p.UsesMemory {
		bad("plugin %q declares MemoryWriteAreas %v without UsesMemory: set UsesMemory too", p.Name, p.MemoryWriteAreas)
	}
	for _, k := range p.SettingSecrets {
		if strings.TrimSpace(k) == "" || strings.ContainsAny(k, " \t\r\n") {
			bad("plugin %q: SettingSecrets has %q, which is not a key of config.yaml (e.g. tools.web_search.api_key)", p.Name, k)
		}
	}
	for _, a := range p.MemoryWriteAreas {
		if a != MemoryAnyArea && !memoryAreaRE.MatchString(a) {
			bad("plugin %q: memory write area %q is not an area name (lower-case letters, digits, '-' and '_', at most 64) nor %q", p.Name, a, MemoryAnyArea)
		}
	}
	b := &built{
		manifest: &exocortexv1.ManifestResponse{Plugin: p.Name, Version: p.Version, ServesBatches: true, ServesDispatch: true,
			UsesUtilityModel: p.UsesUtilityModel, UsesMemory: p.UsesMemory, MemoryWriteAreas: p.MemoryWriteAreas,
			SettingSecrets: sortedUnique(p.SettingSecrets)},
		exts:  make(map[string]*extEntry),
		tools: make(map[string]Tool),
	}
	builtins := make(map[string]*exocortexv1.StateKeySpec)
	for _, k := range BuiltinKeys() {
		builtins[k.Name] = k
	}
	// pluginKeys collects the plugin's own keys by name; owners the extensions
	// that write each.
	pluginKeys := make(map[string]*keyInfo)
	owners := make(map[string][]string)

	for i, ext := range p.Extensions {
		if ext == nil {
			bad("plugin %q: Extensions[%d] is nil", p.Name, i)
			continue
		}
		spec, err := specOf(ext)
		if err != nil {
			bad("plugin %q: Extensions[%d] (%T): %w", p.Name, i, ext, err)
			continue
		}
		name := spec.Name
		if name == "" || strings.ContainsAny(name, " \t\r\n") {
			bad("plugin %q: extension %T has an empty name or one with spaces (%q)", p.Name, ext, name)
			continue
		}
		if _, dup := b.exts[name]; dup {
			bad("plugin %q: two extensions are named %q", p.Name, name)
			continue
		}
		e := &extEntry{ext: ext, spec: spec, hooks: make(map[exocortexv1.Hook]bool),
			handlers: make(map[exocortexv1.Hook]any), reads: make(map[string]bool), writes: make(map[string]bool)}
		promptHook := declareHooks(name, ext, spec.Hooks, e, bad)
		if len(e.hooks) == 0 {
			bad("extension %q (%T) declares no hook; list the hooks it handles in Spec.Hooks, each made by the hook's constructor, "+
				"e.g. Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)} with a method MessageLoopEnd(ctx, *sdk.Call, *exocortexv1.MessageLoopEndRequest)", name, ext)
			continue
		}
		if spec.InjectsPrompt && !promptHook {
			bad("extension %q declares InjectsPrompt but implements no prompt-assembly hook "+
				"(MessageLoopPromptsBefore, SystemPrompt or MessageLoopPromptsAfter); text added elsewhere cannot reach the model", name)
		}
		for h := range spec.HookOrder {
			if !e.hooks[h] {
				bad("extension %q: HookOrder names %s, a hook its Spec.Hooks does not declare", name, HookName(h))
			}
		}
		for _, sig := range spec.ConsumesSignals {
			if !signals.Known(sig) {
				bad("extension %q consumes unknown signal %q; use a constant of package signals (%s)", name, sig, knownSignals())
			}
		}
		if len(spec.ForTools) > 0 && !implementsToolHook(e.hooks) {
			bad("extension %q: ForTools applies to tool_execute_before, tool_execute_after, hist_add_tool_result and tool_output_update, which it does not implement", name)
		}
		for _, t := range spec.ForTools {
			if strings.TrimSpace(t) == "" {
				bad("extension %q: an empty name in ForTools", name)
			}
		}
		if spec.Timeout < 0 {
			bad("extension %q: negative Timeout %v", name, spec.Timeout)
		}
		if spec.Timeout > time.Duration(math.MaxUint32)*time.Millisecond {
			bad("extension %q: Timeout %v is longer than the protocol carries", name, spec.Timeout)
		}

		// Keys: valid, consistent across the plugin, resets within writes.
		lists := []struct {
			field string
			keys  []KeyRef
			set   map[string]bool
		}{{"Reads", spec.Reads, e.reads}, {"Writes", spec.Writes, e.writes}, {"Resets", spec.Resets, nil}}
		for _, l := range lists {
			for j, k := range l.keys {
				info := keyInfoOf(k)
				if err := checkKey(info, builtins); err != nil {
					bad("extension %q: %s[%d]: %w", name, l.field, j, err)
					continue
				}
				if !info.builtin {
					if prev, ok := pluginKeys[info.name]; ok && !sameKey(prev, info) {
						bad("extension %q: %s[%d]: key %q is declared twice in this plugin, differently: %v and %v",
							name, l.field, j, info.name, prev.spec(), info.spec())
						continue
					}
					pluginKeys[info.name] = info
					if l.field == "Writes" {
						owners[info.name] = append(owners[info.name], name)
					}
				}
				if l.set != nil {
					l.set[info.name] = true
				}
			}
		}
		for _, k := range spec.Resets {
			if info := keyInfoOf(k); info != nil && !e.writes[info.name] {
				bad("extension %q: resets key %q but does not list it in Writes", name, info.name)
			}
		}
		b.exts[name] = e

		for _, d := range hookDefs() {
			if !e.hooks[d.hook] {
				continue
			}
			order := spec.Order
			if o, ok := spec.HookOrder[d.hook]; ok {
				order = o
			}
			if order < math.MinInt32 || order > math.MaxInt32 {
				bad("extension %q: order %d at %s does not fit in 32 bits", name, order, HookName(d.hook))
			}
			b.manifest.Extensions = append(b.manifest.Extensions, &exocortexv1.ExtensionSpec{
				Name:            name,
				Hook:            d.hook,
				Order:           int32(order),
				Reads:           keyNames(spec.Reads),
				Writes:          keyNames(spec.Writes),
				Resets:          keyNames(spec.Resets),
				InjectsPrompt:   spec.InjectsPrompt && IsPromptHook(d.hook),
				TimeoutMs:       timeoutMs(spec.Timeout),
				Required:        spec.Required,
				OncePerSession:  spec.OncePerSession,
				ConsumesSignals: sortedUnique(spec.ConsumesSignals),
				Description:     spec.Description,
				Disabled:        spec.Disabled,
				ReadsHistory:    spec.ReadsHistory && readsHistoryAt(d.hook),
				ReadsPrompt:     spec.ReadsPrompt && readsPromptAt(d.hook),
				EffectsDeclared: spec.EffectsDeclared,
				FailOpen:        spec.FailOpen,
				ForTools:        forTools(spec.ForTools, d.hook),
			})
		}
	}

	for name, info := range pluginKeys {
		ks := info.spec()
		if w := owners[name]; len(w) > 0 {
			slices.Sort(w)
			ks.Owner = w[0]
		}
		b.manifest.StateKeys = append(b.manifest.StateKeys, ks)
	}

	for i, t := range p.Tools {
		switch {
		case t.Name == "" || strings.ContainsAny(t.Name, " \t\r\n"):
			bad("plugin %q: Tools[%d] has an empty name or one with spaces (%q)", p.Name, i, t.Name)
			continue
		case t.Run == nil:
			bad("tool %q has no Run function", t.Name)
		case t.Parameters != "" && !json.Valid([]byte(t.Parameters)):
			bad("tool %q: Parameters is not valid JSON (it must be a JSON Schema)", t.Name)
		case t.Returns != "" && !json.Valid([]byte(t.Returns)):
			bad("tool %q: Returns is not valid JSON (it must be a JSON Schema)", t.Name)
		}
		if _, dup := b.tools[t.Name]; dup {
			bad("plugin %q: two tools are named %q", p.Name, t.Name)
			continue
		}
		b.tools[t.Name] = t
		b.manifest.Tools = append(b.manifest.Tools, &exocortexv1.ToolSpec{
			Name:                 t.Name,
			Description:          t.Description,
			ParametersJsonSchema: t.Parameters,
			Implemented:          true,
			PromptFile:           t.PromptFile,
			UsesSecrets:          t.UsesSecrets,
			Category:             t.Category,
			ReturnsJsonSchema:    t.Returns,
		})
	}

	for i, f := range p.Files {
		if f == nil || f.GetId() == "" || f.GetPath() == "" {
			bad("plugin %q: Files[%d] needs an id and a path", p.Name, i)
			continue
		}
		b.manifest.Files = append(b.manifest.Files, proto.CloneOf(f))
	}

	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sortManifest(b.manifest)
	return b, nil
}

// sortManifest puts every list in a stable order, so the same plugin always answers
// the same bytes: extensions by name then hook, keys and tools by name, files by id,
// user and path.
func sortManifest(m *exocortexv1.ManifestResponse) {
	slices.SortFunc(m.Extensions, func(a, b *exocortexv1.ExtensionSpec) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.Hook, b.Hook))
	})
	slices.SortFunc(m.StateKeys, func(a, b *exocortexv1.StateKeySpec) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(m.Tools, func(a, b *exocortexv1.ToolSpec) int { return strings.Compare(a.Name, b.Name) })
	slices.SortStableFunc(m.Files, func(a, b *exocortexv1.FileSpec) int {
		return cmp.Or(strings.Compare(a.Id, b.Id), strings.Compare(a.User, b.User), strings.Compare(a.Path, b.Path))
	})
}

// declareHooks records in e the hooks declared (Spec.Hooks) and their
// handlers, reporting through bad a zero or repeated declaration and a hook
// method ext has but does not declare (it would never be called). It returns
// whether a prompt-assembly hook is among them.
func declareHooks(name string, ext Extension, declared []Hook, e *extEntry, bad func(string, ...any)) (promptHook bool) {
	for i, h := range declared {
		switch {
		case h.handler == nil:
			bad("extension %q: Spec.Hooks[%d] is empty; make it with the hook's constructor, e.g. sdk.MessageLoopEnd(e)", name, i)
		case e.hooks[h.id]:
			bad("extension %q: Spec.Hooks declares %s twice", name, HookName(h.id))
		default:
			e.hooks[h.id], e.handlers[h.id] = true, h.handler
			promptHook = promptHook || IsPromptHook(h.id)
		}
	}
	for _, d := range hookDefs() {
		if d.implements(ext) && !e.hooks[d.hook] {
			m := d.method
			bad("extension %q (%T) has the method %s but its Spec.Hooks does not declare %s: add sdk.%s(…) to Spec.Hooks, or rename the method",
				name, ext, m, HookName(d.hook), m)
		}
	}
	return promptHook
}

// specOf calls ext.Spec, turning a panic (e.g. KeyOf on a message that is not a
// key) into an error.
func specOf(ext Extension) (spec Spec, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("Spec panicked: %v", r)
		}
	}()
	return ext.Spec(), nil
}

func keyInfoOf(k KeyRef) *keyInfo {
	if k == nil {
		return nil
	}
	return k.info()
}

func checkKey(info *keyInfo, builtins map[string]*exocortexv1.StateKeySpec) error {
	switch {
	case info == nil:
		return errors.New("a nil or zero key; build keys with sdk.KeyOf or sdk.NewKey")
	case info.name == "":
		return fmt.Errorf("a key of type %s has an empty name", info.typeName)
	case info.builtin:
		return nil
	case builtins[info.name] != nil:
		return fmt.Errorf("key %q is built in (type %s); use sdk.KeyOf[*%s]() instead of sdk.NewKey",
			info.name, builtins[info.name].Type, goTypeHint(builtins[info.name].Type))
	case info.scope == exocortexv1.Scope_SCOPE_UNSPECIFIED || exocortexv1.Scope_name[int32(info.scope)] == "":
		return fmt.Errorf("key %q has no valid scope (%v); pass SCOPE_ITERATION, SCOPE_MONOLOGUE, SCOPE_SESSION or SCOPE_PERSISTENT", info.name, info.scope)
	}
	return nil
}

// goTypeHint turns "exocortex.v1.FailureTracker" into "exocortexv1.FailureTracker".
func goTypeHint(full string) string {
	return strings.Replace(full, "exocortex.v1.", "exocortexv1.", 1)
}

func knownSignals() string {
	var vals []string
	for _, i := range signals.All() {
		vals = append(vals, i.Value)
	}
	return strings.Join(vals, ", ")
}

func sameKey(a, b *keyInfo) bool {
	return a.name == b.name && a.typeName == b.typeName && a.scope == b.scope && a.doc == b.doc && a.flag == b.flag
}

func keyNames(keys []KeyRef) []string {
	var names []string
	for _, k := range keys {
		if info := keyInfoOf(k); info != nil {
			names = append(names, info.name)
		}
	}
	return sortedUnique(names)
}

func sortedUnique(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

func timeoutMs(d time.Duration) uint32 {
	if d <= 0 {
		return 0
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(ms)
}

// forTools is Spec.ForTools as the manifest carries it at hook: sorted, at the
// tool hooks only.
func forTools(tools []string, hook exocortexv1.Hook) []string {
	if !IsToolHook(hook) {
		return nil
	}
	return sortedUnique(tools)
}

// implementsToolHook reports whether an extension implementing hooks has one
// of the hooks ForTools limits.
func implementsToolHook(hooks map[exocortexv1.Hook]bool) bool {
	for h, ok := range hooks {
		if ok && IsToolHook(h) {
			return true
		}
	}
	return false
}
