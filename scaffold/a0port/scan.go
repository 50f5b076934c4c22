package a0port

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/sdk/python/pyimport"
)

// loc is a line of a file of the Agent Zero tree.
type loc struct {
	file string
	line int
}

func compareLoc(a, b loc) int { return cmp.Or(strings.Compare(a.file, b.file), a.line-b.line) }

// scan reads one file line by line for the seams and calls into Agent Zero
// internals.
func (r *Report) scan(f *File, code []byte, info hooks.Info, setters map[string][]loc, onceHooks map[string]map[string]loc) {
	sc := bufio.NewScanner(bytes.NewReader(code))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	reads, writes := map[string]bool{}, map[string]int{}
	injects := false
	var adapted []string
	promptOpen := false // a read_prompt( call whose argument is on the next line
	// The imports of Agent Zero's own modules, by line, as the finder lint
	// shares reads them (parenthesised and continued imports too).
	a0Imports := map[int][]pyimport.Import{}
	for _, imp := range pyimport.Parse(code) {
		if !imp.Relative && pyimport.IsAgentZero(imp.Module) && imp.Module != "python.helpers" && !strings.HasPrefix(imp.Module, "python.helpers.") {
			a0Imports[imp.Line] = append(a0Imports[imp.Line], imp)
		}
	}
	calls := noCounterpartCalls(a0Imports)
	taskVars := map[string]bool{} // names assigned a task so far
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(text), "#") {
			continue
		}
		for _, c := range calls {
			if c.re.MatchString(text) {
				f.Status = statusNeedsHand
				f.Notes = append(f.Notes, fmt.Sprintf("line %d: %s.%s has no counterpart here (the stand-in raises): %s", line, c.module, c.fn, c.fix))
			}
		}
		if info.Gates && failOpenRE.MatchString(text) {
			f.Notes = append(f.Notes, fmt.Sprintf("line %d: declares fail_open: an exception, crash or missed deadline of this file lets the action through (without it, the guard fails closed and stops the action)", line))
		}
		if m := taskAssignRE.FindStringSubmatch(text); m != nil && taskCallRE.MatchString(m[2]) {
			taskVars[m[1]] = true
		}
		for _, m := range setDataArgRE.FindAllStringSubmatch(text, -1) {
			arg := strings.TrimSpace(m[2])
			if taskCallRE.MatchString(arg) || taskVars[arg] {
				t := TaskInState{File: f.Source, Line: line, Field: m[1], Key: KeyName(r.Plugin, m[1])}
				r.Tasks = append(r.Tasks, t)
				adapted = append(adapted, fmt.Sprintf("line %d: %s", line, t.TaskNote()))
			}
		}
		if promptOpen {
			promptOpen = false
			if m := promptArgRE.FindStringSubmatch(text); m != nil {
				text = "read_prompt(" + m[1] + text[len(m[0]):]
			}
		}
		// Its file name is read from the next line.
		opens := openPromptRE.MatchString(text)
		promptOpen = opens
		// The imports the plugin cannot load (python.helpers, Agent Zero
		// internals without a stand-in, third-party modules) are found by
		// checkImports, with the finder lint shares; here the provided ones
		// are noted as adapted.
		for _, imp := range a0Imports[line] {
			mod := imp.Module
			if m, ok := r.ownModuleFor(mod); ok {
				if _, shim := LookupModule(m.name, nil); !shim {
					if imp.InFunction {
						f.modLate = append(f.modLate, loc{m.rel, line})
					} else {
						f.modDeps = append(f.modDeps, loc{m.rel, line})
					}
					adapted = append(adapted, fmt.Sprintf("line %d: %s is the plugin's own module (%s), copied with it", line, mod, m.rel))
					continue
				}
			}
			maps, missing, ok := lookupImport(mod, imp.Names, func(hook, file string) bool { return r.ported[hook+"/"+file] })
			if !ok || len(missing) > 0 {
				continue
			}
			if folder, file, ok := crossExt(mod); ok {
				f.crossDeps = append(f.crossDeps, loc{folder + "/" + file, line})
			}
			if mod != "agent" && mod != "helpers.extension" {
				adapted = append(adapted, fmt.Sprintf("line %d: %s -> %s", line, mod, strings.Join(maps, "; ")))
			}
		}
		for _, m := range readPromptRE.FindAllStringSubmatch(text, -1) {
			switch {
			case opens && m[1] == "": // the name is on the next line
			case m[1] == "":
				f.Status = statusNeedsHand
				f.Notes = append(f.Notes, fmt.Sprintf("line %d: reads a prompt file named at run time: put it into the plugin's prompts/ directory", line))
			case identityPrompts[m[1]] != "" && info.Name == "system_prompt":
				if f.identity == "" {
					f.identity = m[1]
				}
			case slices.ContainsFunc(r.Prompts, func(p string) bool { return path.Base(p) == m[1] }):
				adapted = append(adapted, fmt.Sprintf("line %d: read_prompt(%q) reads the copy in the plugin's prompts/", line, m[1]))
			default:
				f.Status = statusNeedsHand
				f.Notes = append(f.Notes, fmt.Sprintf("line %d: reads the prompt file %s, which the tree has no prompts/ copy of: put it into the plugin's prompts/ directory", line, m[1]))
			}
		}
		if injectRE.MatchString(text) {
			injects = true
			if !info.InjectsPrompt {
				f.Status = statusNeedsHand
				f.Notes = append(f.Notes, fmt.Sprintf("line %d: seam 7: injection at %s never reaches the model", line, info.Name))
				r.Findings = append(r.Findings, Finding{Seam: SeamTooLate, File: f.Source, Line: line,
					What: fmt.Sprintf("prompt injection at %s, which runs where the prompt is already built: it never reaches the model", info.Name),
					Fix:  "move the file to extensions/python/message_loop_prompts_after/ (or system_prompt for system text)"})
			}
		}
		if kc, ok := kwargChanges[info.Name]; ok {
			for _, m := range kwargAssignRE.FindAllStringSubmatch(text, -1) {
				if m[1] != kc.arg {
					continue
				}
				if to, ok := kc.carried[m[2]]; ok {
					adapted = append(adapted, fmt.Sprintf("line %d: %s[%q] becomes %s", line, m[1], m[2], to))
					continue
				}
				fix, ok := kc.lost[m[2]]
				if !ok {
					fix = kc.lost[""]
				}
				f.Status = statusNeedsHand
				f.Notes = append(f.Notes, fmt.Sprintf("line %d: changes %s[%q] at %s, which no field of Exocortex's response carries: the change is lost; %s", line, m[1], m[2], info.Name, fix))
			}
		}
		for _, m := range setDataRE.FindAllStringSubmatch(text, -1) {
			if _, ok := writes[m[1]]; !ok {
				writes[m[1]] = line
			}
		}
		for _, m := range getDataRE.FindAllStringSubmatch(text, -1) {
			reads[m[1]] = true
			if agentAttrs[m[1]] {
				r.Findings = append(r.Findings, Finding{Seam: SeamAttrAsData, File: f.Source, Line: line,
					What: fmt.Sprintf("get_data(%q) reads agent data, but Agent Zero keeps %s as an attribute: it is always None", m[1], m[1]),
					Fix:  fmt.Sprintf("read it with getattr(self.agent, %q, None)", m[1])})
			}
		}
		for _, m := range onceGateRE.FindAllStringSubmatch(text, -1) {
			if onceHooks[m[1]] == nil {
				onceHooks[m[1]] = map[string]loc{}
			}
			if _, ok := onceHooks[m[1]][info.Name]; !ok {
				onceHooks[m[1]][info.Name] = loc{f.Source, line}
			}
		}
		if coreTextRE.MatchString(text) {
			r.Findings = append(r.Findings, Finding{Seam: SeamCoreText, File: f.Source, Line: line,
				What: "matches the text of an Agent Zero core message, which Exocortex words differently: the match never fires",
				Fix:  "react to the typed signal instead (signals/), not to message text"})
		}
		for _, c := range AgentCalls() {
			if strings.Contains(text, "."+c.Name+"(") {
				adapted = append(adapted, fmt.Sprintf("line %d: %s -> %s", line, c.Name, c.Maps))
			}
		}
		if f.Hook == "agent_init" && openingRE.MatchString(text) && !openingOtherRE.MatchString(text) {
			// At agent_init, the agent's first message opens a new session
			// (Agent Zero's initial message): the response's opening_messages.
			adapted = append(adapted, fmt.Sprintf("line %d: hist_add_ai_response at agent_init -> the opening message of a new session: the host adds it to an empty history as its first assistant message (a resumed session adds none)", line))
			continue
		}
		for _, in := range internals {
			if in.re.MatchString(text) {
				f.Status = statusNeedsHand
				f.Notes = append(f.Notes, fmt.Sprintf("line %d: %s -> %s", line, in.what, in.maps))
			}
		}
	}
	for k, line := range writes {
		setters[k] = append(setters[k], loc{f.Source, line})
	}
	f.Reads, f.Writes = sortedKeys(reads), sortedKeys(writes)
	f.injects = injects
	f.Notes = append(f.Notes, adapted...)
	if f.Status == statusPorted && (injects || len(reads)+len(writes)+len(adapted) > 0) {
		f.Status = statusAdapted
		if injects && info.InjectsPrompt {
			f.Notes = append(f.Notes, "loop_data extras/system mutations become prompt blocks")
		}
		if len(reads)+len(writes) > 0 {
			f.Notes = append(f.Notes, "get_data/set_data become typed state keys a0_<plugin>_<key>")
		}
	}
}

// noCall is a call of a function of a provided module that has no
// counterpart here (Module.NoCounterpart), as a file's imports name it.
type noCall struct {
	re              *regexp.Regexp
	module, fn, fix string
}

// noCounterpartCalls returns the calls to look for in a file with the imports:
// mod.fn( for a module imported whole (import helpers.x, from helpers import
// x, from pkg import x), fn( for a function imported by name.
func noCounterpartCalls(imports map[int][]pyimport.Import) []noCall {
	var out []noCall
	add := func(m Module, prefix string, only []string) {
		for _, fn := range slices.Sorted(maps.Keys(m.NoCounterpart)) {
			if only != nil && !slices.Contains(only, fn) {
				continue
			}
			out = append(out, noCall{re: regexp.MustCompile(`(?:^|[^\w.])` + regexp.QuoteMeta(prefix+fn) + `\s*\(`),
				module: m.Name, fn: fn, fix: m.NoCounterpart[fn]})
		}
	}
	for _, line := range slices.Sorted(maps.Keys(imports)) {
		for _, imp := range imports[line] {
			if m, ok := LookupModule(imp.Module, nil); ok && len(m.NoCounterpart) > 0 {
				if imp.Names == nil {
					add(m, imp.Module[strings.LastIndex(imp.Module, ".")+1:]+".", nil)
					add(m, imp.Module+".", nil)
				} else {
					add(m, "", imp.Names)
				}
				continue
			}
			for _, n := range imp.Names {
				if m, ok := LookupModule(imp.Module+"."+n, nil); ok && len(m.NoCounterpart) > 0 {
					add(m, n+".", nil)
				}
			}
		}
	}
	return out
}
