package lint

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/exocortex/exocortex/core/hooks"
)

// Tool prompt files are named ToolPromptPrefix + tool name + ".md".
const ToolPromptPrefix = "agent.system.tool."

// toolOfPrompt returns the tool a prompt file documents, if it is a tool prompt.
func toolOfPrompt(file string) (string, bool) {
	name, ok := strings.CutPrefix(file, ToolPromptPrefix)
	if !ok {
		return "", false
	}
	name, ok = strings.CutSuffix(name, ".md")
	return name, ok && name != ""
}

// tools checks that declared tools and their documentation and implementation
// agree (rule 11, the ECHOMEN seed's check:tools: EXO111 to EXO114).
func (c *checker) tools() {
	prompts := map[string]bool{}
	for _, p := range c.in.Prompts {
		prompts[p.File] = true
	}
	declared := map[string]bool{}
	for _, t := range c.in.CoreTools {
		declared[t] = true
	}
	for _, t := range c.g.Tools {
		declared[t.Name] = true
		if t.ShadowedBy != "" || t.Name == "" {
			continue
		}
		if !t.Spec.GetImplemented() {
			c.add(Finding{Code: "EXO111", Severity: Error, Plugin: t.Plugin.Name, File: t.Spec.GetPromptFile(),
				Message: fmt.Sprintf("tool %q is declared by plugin %s without an implementation: the model is offered a tool that can only fail", t.Name, t.Plugin.Name),
				Fix:     "give the tool a handler (sdk.Tool.Run), or remove its declaration"})
		}
		want := t.Spec.GetPromptFile()
		switch {
		case want != "" && !prompts[path.Base(want)]:
			c.add(Finding{Code: "EXO114", Severity: Error, Plugin: t.Plugin.Name, File: want,
				Message: fmt.Sprintf("tool %q names prompt file %s, which does not exist among the prompts", t.Name, want),
				Fix:     fmt.Sprintf("add %s to the prompts, or correct prompt_file", path.Base(want))})
		case want == "" && !prompts[ToolPromptPrefix+t.Name+".md"]:
			c.add(Finding{Code: "EXO113", Severity: Warning, Plugin: t.Plugin.Name,
				Message: fmt.Sprintf("tool %q has no prompt file: the model gets only its one-line description", t.Name),
				Fix:     fmt.Sprintf("write %s%s.md (and set prompt_file)", ToolPromptPrefix, t.Name)})
		}
	}
	for _, p := range c.in.Prompts {
		name, ok := toolOfPrompt(p.File)
		if !ok || declared[name] {
			continue
		}
		c.add(Finding{Code: "EXO112", Severity: Error, File: p.Source,
			Message: fmt.Sprintf("prompt %s documents tool %q, which no loaded plugin declares: the model is told about a tool that does not exist", p.Source, name),
			Fix:     fmt.Sprintf("declare and implement tool %q in a plugin, or delete the prompt file", name)})
	}
	c.forTools(declared)
}

// forTools checks the tools extensions name in for_tools (EXO115, EXO116):
// the host calls such an extension at tool_execute_before and
// tool_execute_after only for those tools, so a name no plugin provides (a
// tool renamed or removed) switches the extension off without a word.
func (c *checker) forTools(declared map[string]bool) {
	var unloaded []string
	for _, p := range c.g.Plugins {
		if p.Manifest == nil || p.LoadError != nil {
			unloaded = append(unloaded, p.Name)
		}
	}
	for _, e := range c.g.Extensions {
		// Empty names are EXO001's.
		tools := slices.DeleteFunc(uniqKeep(e.Spec.GetForTools()), func(t string) bool { return strings.TrimSpace(t) == "" })
		if len(tools) == 0 || e.ShadowedBy != "" {
			continue
		}
		if !e.Hook.ForTools {
			c.add(Finding{Code: "EXO116", Severity: Warning, Plugin: e.Plugin.Name, Extension: e.Name,
				Message: fmt.Sprintf("extension %s of plugin %s names tools in for_tools (%s) at %s, where it means nothing: only %s are limited to the tools named, so the extension runs at every %s", e.Name, e.Plugin.Name, quoteAll(tools), e.Hook.Name, forToolsHooks(), e.Hook.Name),
				Fix:     "drop for_tools from the declaration at " + e.Hook.Name + "; keep it only on the extension's declarations at the hooks that fire for one tool call (" + forToolsHooks() + ")"})
			continue
		}
		for _, t := range tools {
			if declared[t] {
				continue
			}
			sev, note := Error, ""
			if len(unloaded) > 0 {
				sev, note = Warning, fmt.Sprintf(" (unless plugin %s, which did not load, provides it)", strings.Join(unloaded, ", "))
			}
			c.add(Finding{Code: "EXO115", Severity: sev, Plugin: e.Plugin.Name, Extension: e.Name,
				Message: fmt.Sprintf("extension %s of plugin %s runs at %s only for the tools in its for_tools, and no loaded plugin provides tool %q%s: the extension never runs for that name (a tool renamed or removed switches it off without a word)", e.Name, e.Plugin.Name, e.Hook.Name, t, note),
				Fix:     fmt.Sprintf("rename %q in the extension's for_tools (sdk.Spec.ForTools) to the tool's current name (WIRING.md lists the tools), or remove it", t)})
		}
	}
}

// wiringDoc compares WIRING.md with what `exocortex lint --write` would write
// (rule 12, EXO121).
func (c *checker) wiringDoc() {
	if c.in.WiringPath == "" {
		return
	}
	fix := "run `exocortex lint --write` and commit WIRING.md"
	if c.in.Wiring == nil {
		c.add(Finding{Code: "EXO121", Severity: Error, File: c.in.WiringPath,
			Message: fmt.Sprintf("%s does not exist", c.in.WiringPath), Fix: fix})
		return
	}
	want := c.g.Render()
	if bytes.Equal(want, c.in.Wiring) {
		return
	}
	c.add(Finding{Code: "EXO121", Severity: Error, File: c.in.WiringPath,
		Message: fmt.Sprintf("%s differs from the generated wiring from line %d on: %s", c.in.WiringPath, firstDiffLine(c.in.Wiring, want), diffHint(c.in.Wiring, want)),
		Fix:     fix})
}

// firstDiffLine returns the 1-based number of the first line where a and b differ.
func firstDiffLine(a, b []byte) int {
	al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(al) && i < len(bl); i++ {
		if !bytes.Equal(al[i], bl[i]) {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}

// diffHint shows the first differing line of both versions, shortened.
func diffHint(have, want []byte) string {
	n := firstDiffLine(have, want)
	line := func(b []byte) string {
		ls := bytes.Split(b, []byte("\n"))
		if n-1 < len(ls) {
			s := string(ls[n-1])
			if len(s) > 80 {
				s = s[:77] + "..."
			}
			return fmt.Sprintf("%q", s)
		}
		return "end of file"
	}
	return fmt.Sprintf("the file has %s, the generator writes %s", line(have), line(want))
}

// forToolsHooks names the hooks for_tools limits (hooks.Info.ForTools), in
// firing order: "tool_execute_before, tool_output_update, tool_execute_after
// and hist_add_tool_result".
func forToolsHooks() string {
	var names []string
	for _, h := range hooks.All() {
		if h.ForTools {
			names = append(names, h.Name)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
