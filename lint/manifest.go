package lint

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/wiring"
)

// manifests checks each manifest on its own (EXO001, EXO003, EXO006) and the
// plugins against each other and the configuration (EXO002, EXO004, EXO005).
func (c *checker) manifests() {
	bad := func(p *wiring.Plugin, ext, key, file, msg, fix string) {
		c.add(Finding{Code: "EXO001", Severity: Error, Plugin: p.Name, Extension: ext, Key: key, File: file, Message: msg, Fix: fix})
	}
	byManifestName := map[string][]*wiring.Plugin{}
	for _, p := range c.g.Plugins {
		m := p.Manifest
		if m == nil {
			continue
		}
		if m.GetPlugin() != "" {
			byManifestName[m.GetPlugin()] = append(byManifestName[m.GetPlugin()], p)
		}
		if m.GetPlugin() != "" && m.GetPlugin() != p.Name {
			c.add(Finding{Code: "EXO006", Severity: Warning, Plugin: p.Name,
				Message: fmt.Sprintf("plugin %s (%s) calls itself %q in its manifest; the host knows it as %q, its file name", p.Name, p.Path, m.GetPlugin(), p.Name),
				Fix:     fmt.Sprintf("rename the file or directory to %q, or the manifest's plugin name to %q", m.GetPlugin(), p.Name)})
		}
		c.memoryDeclaration(p.Name, m)
		seenAt := map[string]bool{}
		for _, e := range m.GetExtensions() {
			name := e.GetName()
			if name == "" || strings.ContainsAny(name, " \t\r\n") {
				bad(p, name, "", "", fmt.Sprintf("plugin %s declares an extension at %s with an empty name or one containing spaces (%q)", p.Name, c.g.HookName(e.GetHook()), name),
					"give the extension a snake_case name unique across plugins")
			}
			if _, ok := c.g.Hook(e.GetHook()); !ok {
				bad(p, name, "", "", fmt.Sprintf("extension %s declares hook %v, which this protocol does not have: it would never run", name, e.GetHook()),
					"set hook to one of the Hook enum's values (see proto/exocortex/v1/manifest.proto)")
			}
			writes := map[string]bool{}
			for _, k := range e.GetWrites() {
				writes[k] = true
			}
			for _, k := range e.GetResets() {
				if !writes[k] {
					bad(p, name, k, "", fmt.Sprintf("extension %s resets key %q but does not list it in writes: the host refuses the reset", name, k),
						fmt.Sprintf("add %q to the extension's writes", k))
				}
			}
			for _, k := range slices.Concat(e.GetReads(), e.GetWrites(), e.GetResets()) {
				if k == "" {
					bad(p, name, "", "", fmt.Sprintf("extension %s lists an empty state key name", name), "remove the empty entry or name the key")
				}
			}
			for _, t := range e.GetForTools() {
				if strings.TrimSpace(t) == "" {
					bad(p, name, "", "", fmt.Sprintf("extension %s lists an empty tool name in for_tools", name), "remove the empty entry or name the tool")
				}
			}
			id := name + "@" + e.GetHook().String()
			if seenAt[id] {
				c.add(Finding{Code: "EXO003", Severity: Error, Plugin: p.Name, Extension: name,
					Message: fmt.Sprintf("plugin %s declares extension %s at %s twice: which declaration the host uses is undefined", p.Name, name, c.g.HookName(e.GetHook())),
					Fix:     "keep one declaration per extension and hook"})
			}
			seenAt[id] = true
		}
		for _, k := range m.GetStateKeys() {
			switch {
			case k.GetName() == "":
				bad(p, "", "", "", fmt.Sprintf("plugin %s declares a state key without a name (type %q)", p.Name, k.GetType()), "name the key")
			case k.GetType() == "":
				bad(p, "", k.GetName(), "", fmt.Sprintf("plugin %s declares state key %q without a message type", p.Name, k.GetName()),
					`set type to the full protobuf message name, e.g. "exocortex.v1.FailureTracker"`)
			case k.GetScope() == exocortexv1.Scope_SCOPE_UNSPECIFIED:
				bad(p, "", k.GetName(), "", fmt.Sprintf("plugin %s declares state key %q without a scope", p.Name, k.GetName()),
					"set scope to iteration, monologue, session or persistent")
			}
		}
		toolSeen := map[string]bool{}
		for _, t := range m.GetTools() {
			if t.GetName() == "" || strings.ContainsAny(t.GetName(), " \t\r\n") {
				bad(p, "", "", "", fmt.Sprintf("plugin %s declares a tool with an empty name or one containing spaces (%q)", p.Name, t.GetName()),
					"name the tool as the model should write it in tool_name")
				continue
			}
			if toolSeen[t.GetName()] {
				c.add(Finding{Code: "EXO003", Severity: Error, Plugin: p.Name,
					Message: fmt.Sprintf("plugin %s declares tool %q twice", p.Name, t.GetName()),
					Fix:     "keep one declaration per tool"})
			}
			toolSeen[t.GetName()] = true
		}
		for _, f := range m.GetFiles() {
			var missing []string
			if f.GetId() == "" {
				missing = append(missing, "an id")
			}
			if f.GetPath() == "" {
				missing = append(missing, "a path")
			}
			if f.GetAccess() == exocortexv1.Access_ACCESS_UNSPECIFIED {
				missing = append(missing, "an access (read, write or read_write)")
			}
			if len(missing) > 0 {
				bad(p, f.GetUser(), "", f.GetId(), fmt.Sprintf("plugin %s declares data file %q (%s) without %s", p.Name, f.GetId(), f.GetPath(), strings.Join(missing, ", ")),
					"declare id, path and access for every data file, so readers and writers can be matched")
			}
		}
	}
	for name, ps := range byManifestName {
		if len(ps) < 2 {
			continue
		}
		var where []string
		for _, p := range ps {
			where = append(where, p.Name+" ("+p.Path+")")
		}
		for _, p := range ps[1:] {
			c.add(Finding{Code: "EXO002", Severity: Warning, Plugin: p.Name,
				Message: fmt.Sprintf("plugins %s all answer with plugin name %q: probably one plugin installed twice, so the later copy's extensions are shadowed", strings.Join(where, ", "), name),
				Fix:     "remove the extra copy, or give each plugin its own name"})
		}
	}

	// Shadowed extensions and tools.
	for _, e := range c.g.Extensions {
		if e.ShadowedBy == "" {
			continue
		}
		c.shadowFinding(e.Plugin, e.Name, "", fmt.Sprintf("extension %s at %s", e.Name, e.Hook.Name), e.ShadowedBy)
	}
	for _, t := range c.g.Tools {
		if t.ShadowedBy == "" {
			continue
		}
		by := c.plugin(t.ShadowedBy)
		if by != nil && by.Dir == t.Plugin.Dir {
			c.add(Finding{Code: "EXO003", Severity: Error, Plugin: t.Plugin.Name,
				Message: fmt.Sprintf("plugins %s and %s of the same directory both declare tool %q: the host refuses to load them", by.Name, t.Plugin.Name, t.Name),
				Fix:     "rename one of the tools, or remove one plugin"})
			continue
		}
		c.shadowFinding(t.Plugin, "", t.Name, "tool "+t.Name, t.ShadowedBy)
	}

	// The configuration's extension names.
	declared := map[string]bool{}
	for _, e := range c.g.Extensions {
		declared[e.Name] = true
	}
	for _, list := range []struct {
		what  string
		names map[string]bool
	}{{"disables", c.in.Disabled}, {"enables", c.in.Enabled}} {
		var names []string
		for n, on := range list.names {
			if on && !declared[n] {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		for _, n := range names {
			c.add(Finding{Code: "EXO005", Severity: Warning, Extension: n,
				Message: fmt.Sprintf("the configuration %s extension %q, which no loaded plugin declares", list.what, n),
				Fix:     "correct the name in the configuration, or remove the entry"})
		}
	}
}

func (c *checker) shadowFinding(p *wiring.Plugin, ext, tool, what, byName string) {
	by := c.plugin(byName)
	sev, note := Info, "intended when a project or user plugin overrides a built-in one"
	if by != nil && by.Dir == p.Dir {
		sev, note = Warning, "both plugins are in the same directory, so which one runs depends only on their names' sort order"
	}
	msg := fmt.Sprintf("%s of plugin %s does not run: plugin %s declares it too and comes first (%s)", what, p.Name, byName, note)
	if tool != "" {
		msg = fmt.Sprintf("%s of plugin %s is not used: plugin %s declares it too and comes first (%s)", what, p.Name, byName, note)
	}
	c.add(Finding{Code: "EXO004", Severity: sev, Plugin: p.Name, Extension: ext,
		Message: msg,
		Fix:     "nothing to do if the override is intended; otherwise rename one of them or remove one plugin"})
}

func (c *checker) plugin(name string) *wiring.Plugin {
	for _, p := range c.g.Plugins {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// loads reports the plugins that could not be loaded (rule 10, EXO101).
func (c *checker) loads() {
	for _, p := range c.g.Plugins {
		if p.Manifest != nil && p.LoadError == nil {
			continue
		}
		reason := "it answered no manifest"
		if p.LoadError != nil {
			reason = p.LoadError.Error()
		}
		msg := fmt.Sprintf("plugin %s (%s) did not load: %s", p.Name, p.Path, reason)
		if strings.HasPrefix(reason, "plugin "+p.Name+" ") {
			msg = reason // the host's StartError names the plugin already
		}
		if tail := strings.TrimSpace(p.StderrTail); tail != "" && !strings.Contains(reason, lastLine(tail)) {
			msg += "\nlast stderr lines:\n" + tail
		}
		c.add(Finding{Code: "EXO101", Severity: Error, Plugin: p.Name, File: p.Path,
			Message: msg,
			Fix:     "run the plugin's command by hand and fix what its stderr shows; a plugin must log to stderr only and answer Manifest within the start timeout"})
	}
}

// injection reports prompt injection declared where it cannot reach the model
// (rule 7, EXO071).
func (c *checker) injection() {
	for _, e := range c.g.Extensions {
		if !e.Spec.GetInjectsPrompt() || e.Hook.InjectsPrompt || e.Hook.Name == "" {
			continue
		}
		if _, ok := c.g.Hook(e.Spec.GetHook()); !ok {
			continue
		}
		c.add(Finding{Code: "EXO071", Severity: Error, Plugin: e.Plugin.Name, Extension: e.Name,
			Message: fmt.Sprintf("extension %s declares prompt injection at %s, %s", e.Name, e.Hook.Name, whatReaches(e.Spec.GetHook())),
			Fix:     "move the extension to message_loop_prompts_after (or message_loop_prompts_before / system_prompt), or drop injects_prompt"})
	}
}

// whatReaches says, for a hook that cannot add prompt text, why its text
// would not reach the main model's call and what its changes do reach (seam 7).
func whatReaches(h exocortexv1.Hook) string {
	switch h {
	case exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_BEFORE:
		return "which changes the utility model's call (its system and user message, through the response), never the main model's prompt: its text would never reach the model the agent talks through"
	case exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_AFTER:
		return "which changes the utility model's answer (history compression's summary, from the next prompt on), never this call's prompt: its text would never reach the model"
	case exocortexv1.Hook_HOOK_CHAT_MODEL_CALL_BEFORE:
		return "which fires when the prompt is final, as it goes to the model: its text would never reach the model"
	case exocortexv1.Hook_HOOK_CHAT_MODEL_CALL_AFTER:
		return "which fires after this call's prompt was sent (it may rewrite the reply, and state it writes reaches the next iteration's prompt-assembly hooks): its text would never reach the model"
	case exocortexv1.Hook_HOOK_REASONING_STREAM_CHUNK, exocortexv1.Hook_HOOK_REASONING_STREAM, exocortexv1.Hook_HOOK_REASONING_STREAM_END,
		exocortexv1.Hook_HOOK_RESPONSE_STREAM_CHUNK, exocortexv1.Hook_HOOK_RESPONSE_STREAM:
		return "which fires while the reply streams, after this call's prompt was sent (it changes what the operator is shown): its text would never reach the model"
	case exocortexv1.Hook_HOOK_TEXT_EDITOR_WRITE_BEFORE, exocortexv1.Hook_HOOK_TEXT_EDITOR_PATCH_BEFORE:
		return "which changes what text_editor writes (content, old_text, new_text) or refuses the call, after this call's prompt was sent: its text would never reach the model"
	case exocortexv1.Hook_HOOK_TEXT_EDITOR_READ_AFTER, exocortexv1.Hook_HOOK_HIST_ADD_TOOL_RESULT:
		return "which changes the tool result the model reads at the next model call (through the response's content or text, not prompt blocks): its prompt text would never reach the model"
	case exocortexv1.Hook_HOOK_TOOL_OUTPUT_UPDATE:
		return "which changes what the operator is shown of a running tool's output, never the prompt: its text would never reach the model"
	case exocortexv1.Hook_HOOK_TEXT_EDITOR_WRITE_AFTER, exocortexv1.Hook_HOOK_TEXT_EDITOR_PATCH_AFTER, exocortexv1.Hook_HOOK_EMBEDDING_MODEL_CHANGED:
		return "which changes only state, after this call's prompt was sent (state reaches the next iteration's prompt-assembly hooks): its text would never reach the model"
	case exocortexv1.Hook_HOOK_HISTORY_COMPRESS_BEFORE:
		return "which changes the history's summary (its keep field), not the prompt's blocks: its prompt text would never reach the model"
	case exocortexv1.Hook_HOOK_TOOL_APPROVAL_REQUEST, exocortexv1.Hook_HOOK_OPERATOR_NOTIFICATION:
		return "which decides a held tool call (allow, refuse) or tells the operator, after this call's prompt was sent: its text would never reach the model"
	case exocortexv1.Hook_HOOK_MESSAGE_LOOP_EXCEPTION, exocortexv1.Hook_HOOK_PROCESS_CHAIN_END:
		return "which fires after the iteration's model call: its text would never reach the model"
	}
	return "which fires after the prompt is built: its text would never reach the model"
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

// memoryAreaRE is the form of a memory area name (memory.ValidArea's).
var memoryAreaRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// memoryDeclaration checks a manifest's memory declaration (EXO007): areas to
// write without uses_memory (the host refuses every memory call of the plugin,
// so they are never written), and an area that is not an area name (every
// write to it would be refused by the store).
func (c *checker) memoryDeclaration(plugin string, m *exocortexv1.ManifestResponse) {
	areas := m.GetMemoryWriteAreas()
	if len(areas) > 0 && !m.GetUsesMemory() {
		c.add(Finding{Code: "EXO007", Severity: Error, Plugin: plugin,
			Message: fmt.Sprintf("plugin %s declares memory_write_areas %s without uses_memory: the host refuses every memory call of the plugin", plugin, strings.Join(areas, ", ")),
			Fix:     "declare uses_memory too (Go: sdk.Plugin{UsesMemory: true}; Python: Plugin(uses_memory=True)), or drop memory_write_areas"})
	}
	for _, a := range areas {
		if a != "*" && !memoryAreaRE.MatchString(a) {
			c.add(Finding{Code: "EXO007", Severity: Error, Plugin: plugin,
				Message: fmt.Sprintf("plugin %s declares the memory write area %q, which is not an area name: a write to it is refused", plugin, a),
				Fix:     `use lower-case letters, digits, '-' and '_' (at most 64), e.g. "notes", or "*" for every area`})
		}
	}
}
