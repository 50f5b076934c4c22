package a0port

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/exocortex/exocortex/prompts"
)

// An Agent Zero tree brings its own identity (its main prompt, "Agent Zero
// System Manual", read by a system_prompt file) and its own tool catalogue
// (agent.system.tools.md, the tools of its tools/ folders). Exocortex's core
// has both already (prompts/agent.system.main.md, and the tools the loaded
// plugins provide, which are the tools the model can call): served beside
// them, the model would read two agents in one prompt, one of them listing
// tools that do not exist here. The port keeps Exocortex's and reports the
// choice, and which of the tree's tools have no counterpart.

// identityPrompts are the prompt files that are an agent's identity or its
// tool catalogue, by what they are.
var identityPrompts = map[string]string{
	"agent.system.main.md":         "identity",
	"agent.system.tools.md":        "tool catalogue",
	"agent.system.tools_vision.md": "tool catalogue",
}

// toolCounterparts are Agent Zero's tools whose Exocortex counterpart has
// another name.
var toolCounterparts = map[string]string{
	"code_execution_tool": "code_execution",
	"search_engine":       "web_search",
	"call_sub":            "call_subordinate",
}

// ToolMap is one tool of the tree and what it is here.
type ToolMap struct {
	Tool        string `json:"tool"`
	Source      string `json:"source"`
	Counterpart string `json:"counterpart,omitempty"` // "" when Exocortex has none
}

// builtinTools are the tools Exocortex's built-in plugins document (one
// prompt file agent.system.tool.NAME.md each).
func builtinTools() []string {
	var out []string
	ms, _ := fs.Glob(prompts.Embedded(), "agent.system.tool.*.md")
	for _, m := range ms {
		out = append(out, strings.TrimSuffix(strings.TrimPrefix(m, "agent.system.tool."), ".md"))
	}
	return out
}

// mapTools fills r.Tools from the tree's tool files (rel paths of
// tools/*.py).
func (r *Report) mapTools(files []string) {
	have := builtinTools()
	for _, rel := range files {
		name := strings.TrimSuffix(path.Base(rel), ".py")
		if name == "__init__" || name == "unknown" {
			continue
		}
		if slices.ContainsFunc(r.Tools, func(t ToolMap) bool { return t.Tool == name }) {
			continue // an override of a tool of the same name
		}
		tm := ToolMap{Tool: name, Source: rel}
		want := name
		if c, ok := toolCounterparts[name]; ok {
			want = c
		}
		if slices.Contains(have, want) {
			tm.Counterpart = want
		}
		r.Tools = append(r.Tools, tm)
	}
}

// chooseIdentity leaves out the served files that read an identity or tool
// catalogue prompt (at system_prompt), saying so, and records the choice.
func (r *Report) chooseIdentity() {
	for i := range r.Files {
		f := &r.Files[i]
		if f.identity == "" || f.Status == statusNotPorted || f.Status == statusOverridden {
			continue
		}
		what := identityPrompts[f.identity]
		f.Status = statusNotPorted
		note := fmt.Sprintf("the tree's %s (%s): not served, Exocortex's own is the one the model gets (prompts/%s of the core), since two would give the model two agents in one prompt", what, f.identity, map[string]string{"identity": "agent.system.main.md", "tool catalogue": "agent.system.tools.md, listing the tools the loaded plugins provide"}[what])
		if what == "identity" {
			note += "; to make the tree's text the identity, put it (its includes expanded) in $EXOCORTEX_HOME/prompts/agent.system.main.md, which overrides the core's, keeping the reply format it describes"
		} else {
			note += "; the tree's tools without a counterpart here are listed under Identity and tools"
		}
		f.Notes = append(f.Notes, note)
		r.Identity = append(r.Identity, fmt.Sprintf("%s: Exocortex's, not the tree's %s (%s)", what, f.identity, f.Source))
	}
}
