// Package a0port ports an Agent Zero (v1.7) tree of extension files into an
// Exocortex Python plugin that serves each file unchanged through the Python
// SDK's compatibility layer (sdk/python/exocortex/a0compat.py), and reports the
// seams of the seed's wiring table that the tree hits, each with its file, line
// and fix.
//
// The files it reads are those of Agent Zero's profile, plugin and usr layouts:
// any extensions/python/<hook>/_NN_name.py below the tree (agents/<profile>/...,
// usr/..., plugins/<name>/... beside a plugin.yaml).
package a0port

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/sdk/python"
	"github.com/exocortex/exocortex/sdk/python/pyimport"
)

// Seam codes, numbered as in the seed's table of fragile seams.
const (
	SeamCoreText       = 1  // matching the core's message text
	SeamKeyTwoFiles    = 2  // one agent-data key written by two files
	SeamAttrAsData     = 3  // get_data for something kept as an attribute
	SeamPrefix         = 4  // two files at one hook with one numeric prefix
	SeamNoPython       = 8  // extensions/<hook>/ without python/
	SeamOnceTwoHooks   = 9  // a once-gate at two hooks
	SeamTooLate        = 7  // prompt injection at a hook too late to reach the model
	SeamPythonHelpers  = 10 // python.helpers imports
	SeamNoHookPoint    = 0  // no Exocortex hook point yet
	statusPorted       = "ported as is"
	statusAdapted      = "adapted by the layer"
	statusNeedsHand    = "needs a hand"
	statusNotPorted    = "not ported"
	statusOverridden   = "overridden"
	portedDir          = "a0"
	reportMarkdownName = "PORT.md"
	reportJSONName     = "port.json"
)

// TaskInState is an agent-data key a file stores a task in, at the line of the
// set_data.
type TaskInState struct {
	File  string `json:"file"` // relative to the Agent Zero tree
	Line  int    `json:"line"`
	Field string `json:"field"`
	Key   string `json:"key"`
}

// TaskNote is what the porting report and lint say of a task kept in agent data.
func (t TaskInState) TaskNote() string {
	return fmt.Sprintf("agent data %q holds an asyncio task, in a key the port declares as shared state (%s): typed state holds JSON values only, so the layer keeps the task in the plugin process, where a later hook awaits or polls it; other plugins do not see it, and a restart or hot reload cancels it", t.Field, t.Key)
}

// Finding is one seam a file hits.
type Finding struct {
	Seam int    `json:"seam"`
	File string `json:"file"` // relative to the Agent Zero tree
	Line int    `json:"line,omitempty"`
	What string `json:"what"`
	Fix  string `json:"fix"`
}

// File is what became of one Agent Zero extension file.
type File struct {
	Source string   `json:"source"` // relative to the Agent Zero tree
	Hook   string   `json:"hook"`
	Order  int      `json:"order"`
	Status string   `json:"status"`
	Notes  []string `json:"notes,omitempty"`
	Reads  []string `json:"reads,omitempty"`
	Writes []string `json:"writes,omitempty"`
	// External are the agent-data keys the file reads that no file of the tree
	// that runs writes (Agent Zero sets them from outside the agent, its web UI
	// or API, or nothing does): not declared as shared state, whose lint would
	// keep the plugin out for a read nobody serves; the read gives None, as in
	// an Agent Zero chat where nothing set it.
	External []string `json:"external,omitempty"`

	// Point is the _functions point the file is at (agent/Agent/monologue/start),
	// for a file of an @extensible function.
	Point string `json:"point,omitempty"`
	// Overrides are the files of the same name at the same point that this
	// one overrides (Agent Zero loads the one of highest priority).
	Overrides []string `json:"overrides,omitempty"`

	folder     string // its folder under extensions/python/ (hook name or _functions/<point>)
	kind       string // how the layer hands a _functions file its data (Point.Kind)
	unprefixed bool   // no numeric prefix: ordered by name (orderUnprefixed)
	identity   string // the identity or tool catalogue prompt it reads (chooseIdentity)
	injects    bool   // the file adds prompt text (extras, system)
	noLoad     bool   // the layer cannot load it (an import it has no module for)
	noLoadWhy  string // why
	crossDeps  []loc  // other extension files of the tree it imports (file: hook/name.py), by line
	modDeps    []loc  // the plugins' own modules it imports (file: rel path), by line
	modLate    []loc  // the same, imported inside a function: at the call, not at load
}

// Report is the porting report.
type Report struct {
	Source  string   `json:"source"`
	Out     string   `json:"out"`
	Plugin  string   `json:"plugin"`
	Plugins []string `json:"plugin_yaml,omitempty"` // v1.7 plugin roots found
	// Prompts are the tree's prompts/*.md files and their variables files
	// (prompts/*.py), copied into the plugin's prompts/ where the layer's
	// read_prompt finds them (the first of a name wins).
	Prompts []string `json:"prompts,omitempty"`
	// Configs are the v1.7 plugins of the tree with a configuration
	// (default_config.yaml, config.json), written to the ported plugin's
	// config/<name>.json, where the layer's get_plugin_config reads it.
	Configs  []string  `json:"plugin_configs,omitempty"`
	Files    []File    `json:"files"`
	Findings []Finding `json:"findings"`
	// Wiring is the ported tree's wiring, hook by hook in firing order, and
	// WiringDoc its WIRING.md (written beside PORT.md).
	Wiring    []WiringHook `json:"wiring"`
	WiringDoc string       `json:"wiring_md"`
	// Imports are the imports of the ported files the plugin cannot load, by
	// file and line with the fix (checkImports); ImportCheck says why
	// third-party imports were not checked, if they were not.
	Imports     []pyimport.Problem `json:"imports,omitempty"`
	ImportCheck string             `json:"import_check,omitempty"`
	// Tasks are the agent-data keys the files store an asyncio task (or a
	// DeferredTask) in: typed state cannot hold one, so the layer keeps the value
	// in the plugin process, although the key is declared as shared state.
	Tasks []TaskInState `json:"tasks,omitempty"`

	// Python is the interpreter the plugin runs on (plugin.json), and
	// PythonVersion its version (or why it could not be asked).
	Python        string `json:"python"`
	PythonVersion string `json:"python_version,omitempty"`
	// Refused is why the host would keep the ported plugin out at start (the
	// wiring check's errors that name it, each with its fix), as found by the
	// caller against the plugins installed where it will run (CheckWiring);
	// the report says it first.
	Refused []string `json:"refused,omitempty"`
	// Blocking are the guards that cannot load (a file at a hook whose
	// response can stop the action, which needs a hand to load): the layer
	// serves each as a guard that fails at every call, so the host stops every
	// action it guards until the file is fixed. The report says it first.
	Blocking []string `json:"blocking,omitempty"`
	// Identity is the choice between the tree's identity and tool catalogue
	// and Exocortex's (chooseIdentity), and Tools the tree's tools, each with
	// its Exocortex counterpart if it has one.
	Identity []string  `json:"identity,omitempty"`
	Tools    []ToolMap `json:"tools,omitempty"`

	configs    map[string][]byte // plugin name -> its config as JSON
	overridden [][2]string       // a kept file and one it overrides
	modules    []ownModule       // the plugins' own modules (own.go)
	badModules map[string]string // own modules that cannot load, by rel path: why
	ported     map[string]bool   // hook/file.py of every extension file of the tree
}

var (
	fileRE     = regexp.MustCompile(`^_(\d+)_([A-Za-z0-9_]+)\.py$`)
	injectRE   = regexp.MustCompile(`\bextras_(?:temporary|persistent)\b|loop_data\.system\b|\bsystem_prompt\.(?:append|extend|insert)\(`)
	setDataRE  = regexp.MustCompile(`set_data\(\s*["']([^"']+)["']`)
	getDataRE  = regexp.MustCompile(`get_data\(\s*["']([^"']+)["']`)
	onceGateRE = regexp.MustCompile(`set_data\(\s*["']([^"']+)["']\s*,\s*True\s*\)`)
	// A class attribute of the file's Extension: its failure at a gate lets
	// the action through (a0compat serves it as Spec.fail_open).
	failOpenRE = regexp.MustCompile(`^\s+fail_open\s*(?::\s*bool\s*)?=\s*True\b`)
	// A task: asyncio's create_task/ensure_future (on asyncio or a loop), or a
	// DeferredTask (helpers.defer), and a name assigned one.
	taskCallRE   = regexp.MustCompile(`\b(?:create_task|ensure_future|DeferredTask)\(|\.start_task\(`)
	taskAssignRE = regexp.MustCompile(`^\s*((?:self\.)?\w+)\s*(?::[^=]+)?=\s*(.*)$`)
	setDataArgRE = regexp.MustCompile(`set_data\(\s*["']([^"']+)["']\s*,\s*([^)]*)`)
	coreTextRE   = regexp.MustCompile(`["'](?:You have misformatted your message|Tool .* not found|Nothing to do|Repeated message)`)
	openPromptRE = regexp.MustCompile(`(?:read|parse)_prompt\(\s*$`)
	promptArgRE  = regexp.MustCompile(`^\s*(["'][^"']+["'])`)
	readPromptRE = regexp.MustCompile(`(?:read|parse)_prompt\(\s*(?:["']([^"']+)["'])?`)
	// Agent attributes Agent Zero keeps on the object, not in agent data.
	agentAttrs = map[string]bool{"number": true, "agent_name": true, "config": true, "context": true, "history": true, "intervention": true, "last_user_message": true}
	// hist_add_ai_response, and no other history mutation, on a line.
	openingRE      = regexp.MustCompile(`\.hist_add_ai_response\(`)
	openingOtherRE = regexp.MustCompile(`hist_add_(?:user|warning|message|tool)|\.history\.(?:add|append|extend|insert|pop|clear|set|new_topic|compress|merge|serialize)\w*\(`)
	// Calls into Agent Zero internals and what corresponds to them here.
	internals = []struct {
		re         *regexp.Regexp
		what, maps string
	}{
		{regexp.MustCompile(`\bcall_chat_model\b`), "a chat-model call", "no chat-model service for plugins: the host's utility model is the nearest; rewrite it as self.agent.call_utility_model(system=..., message=...)"},
		{regexp.MustCompile(`hist_add_|\.history\.(?:add|append|extend|insert|pop|clear|set|new_topic|compress|merge|serialize)\w*\(`), "a history mutation", "no counterpart: history belongs to the core; add a prompt block instead"},
		{regexp.MustCompile(`\.handle_intervention\(`), "an intervention check", "no counterpart: interventions are the host's (a message_loop_end extension queues one with its response's intervention)"},
		{regexp.MustCompile(`\.get_(?:chat|embedding|browser)_model\(`), "a model object", "no counterpart: the host makes the model calls; ask the utility model (self.agent.get_utility_model().unified_call, or call_utility_model), or watch the main model at chat_model_call_before/after"},
	}
)

// kwargChange is what becomes of a file's changes to the dict Agent Zero hands
// its hook as a keyword argument (a0compat.KWARGS): the keys a typed response
// field carries, and why the others are lost.
type kwargChange struct {
	arg     string            // the keyword argument: data or ctx
	carried map[string]string // key -> what it becomes
	lost    map[string]string // key -> the fix ("" key: any other key)
}

var (
	kwargAssignRE = regexp.MustCompile(`\b(data|ctx)\s*\[\s*["'](\w+)["']\s*\]\s*(?:=[^=]|\+=|\.(?:append|extend|insert)\()`)
	pathFix       = "the path is checked against the editor's roots by the tool: rewrite tool_args[\"path\"] at tool_execute_before"
	kwargChanges  = map[string]kwargChange{
		"hist_add_tool_result": {"data", map[string]string{"tool_result": "the text stored in the history"},
			map[string]string{"": "Exocortex stores the result's text only: fold it into data[\"tool_result\"], or keep it in agent data"}},
		"tool_output_update": {"ctx", map[string]string{"content": "what the operator's view shows of the output (display)"},
			map[string]string{"": "only ctx[\"content\"] is carried"}},
		"text_editor_read_after": {"data", map[string]string{"content": "what the model sees of the read"},
			map[string]string{"": "no field carries it: put it into data[\"content\"]"}},
		"text_editor_write_before": {"data", map[string]string{"content": "the content written"},
			map[string]string{"path": pathFix, "": "only data[\"content\"] is carried; raise an exception to refuse the write"}},
		"text_editor_write_after": {"data", nil,
			map[string]string{"": "the file is written: nothing changed here reaches anything; keep it in agent data"}},
		"text_editor_patch_before": {"data", map[string]string{"old_text": "the passage replaced", "new_text": "its replacement"},
			map[string]string{"path": pathFix, "": "Exocortex's text_editor patches by exact replacement: change data[\"old_text\"] and data[\"new_text\"]"}},
		"text_editor_patch_after": {"data", nil,
			map[string]string{"": "the file is patched: nothing changed here reaches anything; keep it in agent data"}},
	}
)

// Port reads the Agent Zero tree src and writes the plugin into out (created if
// missing) as plugin name: main.py, plugin.json, the shim modules, a copy of the
// SDK, the ported files under a0/ and the report (PORT.md, port.json). A file
// that cannot be ported is reported and the rest are still written. Cancelling
// ctx stops the walk of src.
func Port(ctx context.Context, src, out, name string) (*Report, error) {
	return PortWith(ctx, src, out, name, Options{})
}

// PortWith is Port with the choices of opts.
func PortWith(ctx context.Context, src, out, name string, opts Options) (*Report, error) {
	r, files, err := analyze(ctx, src, out, name, opts)
	if err != nil {
		return nil, err
	}
	dst := filepath.Join(out, portedDir, "extensions", "python")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", out, err)
	}
	imported := map[string]bool{}
	for _, f := range r.Files {
		for _, d := range f.crossDeps {
			imported[d.file] = true
		}
	}
	for _, pf := range files {
		if !pf.served && !imported[pf.hook+"/"+pf.file] {
			continue // neither served nor imported by a file that is
		}
		if err := os.MkdirAll(filepath.Join(dst, pf.hook), 0o755); err != nil {
			return nil, fmt.Errorf("creating %s: %w", out, err)
		}
		if err := os.WriteFile(filepath.Join(dst, pf.hook, pf.file), pf.code, 0o644); err != nil {
			return nil, fmt.Errorf("writing %s: %w", out, err)
		}
	}
	if err := writePlugin(out, r.Plugin, r.Python); err != nil {
		return nil, err
	}
	if err := r.copyModules(out); err != nil {
		return nil, err
	}
	if err := copyPrompts(src, out, r.Prompts); err != nil {
		return nil, err
	}
	if err := writeConfigs(out, r.configs); err != nil {
		return nil, err
	}
	// The report, the wiring (WIRING.md) and what the layer serves (points.json).
	if err := r.WriteReport(out); err != nil {
		return nil, err
	}
	return r, nil
}

// Analyze reads the Agent Zero tree src as Port does and returns the report
// without writing anything.
func Analyze(ctx context.Context, src, name string) (*Report, error) {
	r, _, err := analyze(ctx, src, "", name, Options{})
	return r, err
}

// portFile is one file to write into the ported plugin.
type portFile struct {
	hook, file string // the folder under extensions/python/ and the name
	source     string // relative to the Agent Zero tree
	code       []byte
	served     bool // served as an extension (else only written, for imports)
}

func analyze(ctx context.Context, src, out, name string, opts Options) (*Report, []portFile, error) {
	st, err := os.Stat(src)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the Agent Zero tree %s: %w", src, err)
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a directory: give the root of an Agent Zero tree (a profile, a plugin or usr/)", src)
	}
	if name == "" {
		name = "a0-" + sanitize(filepath.Base(filepath.Clean(src)))
	}
	r := &Report{Source: src, Out: out, Plugin: name, Python: cmp.Or(opts.Python, python.Interpreter)}
	var cands []cand
	var configFiles, toolFiles []string
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != src && (strings.HasPrefix(n, ".") || n == "__pycache__" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		rel = filepath.ToSlash(rel)
		if d.Name() == "plugin.yaml" {
			r.Plugins = append(r.Plugins, filepath.ToSlash(filepath.Dir(rel)))
			return nil
		}
		if d.Name() == configDefaultName || d.Name() == configName {
			configFiles = append(configFiles, rel)
			return nil
		}
		if (strings.HasSuffix(d.Name(), ".md") || strings.HasSuffix(d.Name(), ".py")) && filepath.Base(filepath.Dir(p)) == "prompts" {
			r.Prompts = append(r.Prompts, rel)
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".py") || d.Name() == "__init__.py" {
			return nil
		}
		if mod, ok := moduleOf(strings.Split(rel, "/")); ok && pythonDir(strings.Split(rel, "/")) < 0 {
			r.modules = append(r.modules, ownModule{mod, rel})
			return nil
		}
		if filepath.Base(filepath.Dir(p)) == "tools" {
			toolFiles = append(toolFiles, rel)
			return nil
		}
		parts := strings.Split(rel, "/")
		n := len(parts)
		if c, ok := extensionCand(rel, parts); ok {
			cands = append(cands, c)
			return nil
		}
		switch {
		case pythonDir(parts) >= 0:
			// Below extensions/python/ but neither in a hook folder nor in a
			// _functions point's start/ or end/: Agent Zero never loads it.
			r.Files = append(r.Files, File{Source: rel, Status: statusNotPorted, Notes: []string{
				"not directly in a hook folder (extensions/python/<hook>/) nor in a _functions point's start/ or end/ folder: Agent Zero never loads it as an extension, and neither does the port (a module other files import travels with the plugin)"}})
		case n >= 3 && parts[n-3] == "extensions" && parts[n-2] != "python":
			r.Findings = append(r.Findings, Finding{Seam: SeamNoPython, File: rel,
				What: fmt.Sprintf("file at extensions/%s/ without python/: Agent Zero v1.7 never loads it, silently", parts[n-2]),
				Fix:  fmt.Sprintf("move it to extensions/python/%s/%s", parts[n-2], parts[n-1])})
			r.Files = append(r.Files, File{Source: rel, Hook: parts[n-2], Status: statusNotPorted, Notes: []string{"seam 8: not under extensions/python/"}})
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading the Agent Zero tree %s: %w", src, err)
	}
	if len(cands) == 0 && len(r.Files) == 0 {
		return nil, nil, fmt.Errorf("%s has no extensions/python/<hook>/_NN_name.py files: give the root of an Agent Zero profile, plugin or usr/ tree", src)
	}

	configs, err := pluginConfigs(src, r.Plugins, configFiles)
	if err != nil {
		return nil, nil, err
	}
	r.configs = configs
	r.Configs = sortedKeys(configs)
	cands = r.overrides(cands)
	r.ported = map[string]bool{}
	for _, c := range cands {
		r.ported[c.hook+"/"+c.file] = true
	}
	syntax := checkSyntax(ctx, r.Python, src, cands)
	var files []portFile
	type prefixKey struct {
		hook  string
		order int
	}
	prefixes := map[prefixKey][]string{}
	setters := map[string][]loc{}
	onceHooks := map[string]map[string]loc{}
	for _, c := range cands {
		f := File{Source: c.rel, Hook: c.hook, Status: statusPorted, folder: c.hook}
		src0 := filepath.Join(src, filepath.FromSlash(c.rel))
		code, err := os.ReadFile(src0)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", src0, err)
		}
		// A file not served is still written when a served file imports it
		// (the layer's finder serves the import from the copy).
		files = append(files, portFile{c.hook, c.file, c.rel, code, false})
		served := len(files) - 1
		if m := orderRE.FindStringSubmatch(c.file); m != nil {
			f.Order, _ = strconv.Atoi(m[1])
		} else {
			f.unprefixed = true
		}
		if c.point != "" {
			pt, _ := LookupPoint(c.point)
			f.Point = c.point
			if pt.Hook == "" {
				f.Hook = ""
				f.Status = statusNotPorted
				f.Notes = append(f.Notes, pt.Note)
				r.Findings = append(r.Findings, Finding{Seam: SeamNoHookPoint, File: c.rel, What: pt.Note,
					Fix: "none: the rest of the tree is ported; move what the file does to an Exocortex hook if it is needed"})
				r.Files = append(r.Files, f)
				continue
			}
			f.Hook, f.kind = pt.Hook, pt.Kind
			f.Notes = append(f.Notes, fmt.Sprintf("_functions point %s (%s) runs at %s: %s", pt.Function, path.Base(c.point), pt.Hook, pt.Note))
		}
		info, ok := hooks.Lookup(f.Hook)
		if !ok {
			f.Status = statusNotPorted
			f.Notes = append(f.Notes, "no hook point yet: "+c.hook)
			r.Findings = append(r.Findings, Finding{Seam: SeamNoHookPoint, File: c.rel,
				What: "no hook point yet: " + c.hook,
				Fix:  "none yet: Exocortex has no " + c.hook + " hook; the rest of the tree is ported"})
			r.Files = append(r.Files, f)
			continue
		}
		if bad, ok := syntax[c.rel]; ok {
			f.Status = statusNotPorted
			f.Notes = append(f.Notes, bad+": Agent Zero fails to load it too; fix it and port the tree again")
			r.Files = append(r.Files, f)
			continue
		}
		if !f.unprefixed {
			prefixes[prefixKey{f.Hook, f.Order}] = append(prefixes[prefixKey{f.Hook, f.Order}], c.rel)
		}
		r.scan(&f, code, info, setters, onceHooks)
		files[served].served = true
		r.Files = append(r.Files, f)
	}
	r.orderUnprefixed()
	r.chooseIdentity()
	r.mapTools(toolFiles)
	r.keepNeededModules()
	r.checkImports(ctx, files)
	r.checkPython(ctx, files)
	r.moduleProblems(r.badModules)
	r.propagateNoLoad()
	r.noteBlockingGuards()
	r.externalKeys()
	for k, files := range prefixes {
		if len(files) > 1 {
			slices.Sort(files)
			for _, f := range files[1:] {
				r.Findings = append(r.Findings, Finding{Seam: SeamPrefix, File: f, Line: 1,
					What: fmt.Sprintf("prefix _%02d_ at %s is also %s: their order is the file names' alphabetical order, by accident", k.order, k.hook, files[0]),
					Fix:  "give each file at one hook its own numeric prefix"})
			}
		}
	}
	for key, locs := range setters {
		slices.SortFunc(locs, compareLoc)
		for _, l := range locs[1:] {
			r.Findings = append(r.Findings, Finding{Seam: SeamKeyTwoFiles, File: l.file, Line: l.line,
				What: fmt.Sprintf("agent data %q is written here and by %s (line %d): two owners of one key", key, locs[0].file, locs[0].line),
				Fix:  "let one file own the key and the other read it"})
		}
	}
	for key, hs := range onceHooks {
		if len(hs) > 1 {
			var list []string
			var first loc
			for h, l := range hs {
				list = append(list, fmt.Sprintf("%s (%s:%d)", h, l.file, l.line))
				if first.file == "" || compareLoc(l, first) < 0 {
					first = l
				}
			}
			slices.Sort(list)
			r.Findings = append(r.Findings, Finding{Seam: SeamOnceTwoHooks, File: first.file, Line: first.line,
				What: fmt.Sprintf("once-gate %q is set at two hooks: %s; whichever fires first disables the other", key, strings.Join(list, ", ")),
				Fix:  "gate each hook with its own key, or use Spec.once_per_session"})
		}
	}
	slices.SortFunc(r.Findings, func(a, b Finding) int {
		return cmp.Or(strings.Compare(a.File, b.File), a.Line-b.Line, a.Seam-b.Seam, strings.Compare(a.What, b.What))
	})
	slices.SortFunc(r.Files, func(a, b File) int { return strings.Compare(a.Source, b.Source) })
	r.buildWiring()
	return r, files, nil
}

// cand is an extension file found in the Agent Zero tree: hook is its folder
// under extensions/python/ (a hook's name, or _functions/<point>), point the
// _functions point, root the tree folder the extensions/ is in.
type cand struct{ rel, hook, file, point, root string }

// syntaxScript parses each file named on stdin (one per line) with Python's own
// parser and prints, per file that does not parse, "name<TAB>line<TAB>message".
const syntaxScript = `import ast, sys
for name in sys.stdin.read().splitlines():
    try:
        with open(name, "rb") as f:
            ast.parse(f.read(), name)
    except SyntaxError as e:
        print(f"{name}\t{e.lineno or 0}\t{e.msg}")
    except (OSError, ValueError) as e:
        print(f"{name}\t0\t{e}")
`

// checkSyntax parses the candidate files with the Python interpreter plugins run
// on (one process for the tree) and returns, by path relative to src, why each
// file that does not parse cannot be ported. Without the interpreter it returns
// nothing: the layer leaves such a file out when the plugin starts.
func checkSyntax(ctx context.Context, interpreter, src string, cands []cand) map[string]string {
	if len(cands) == 0 {
		return nil
	}
	var names strings.Builder
	byPath := map[string]string{}
	for _, c := range cands {
		p := filepath.Join(src, filepath.FromSlash(c.rel))
		byPath[p] = c.rel
		names.WriteString(p + "\n")
	}
	cmd := exec.CommandContext(ctx, interpreter, "-I", "-S", "-c", syntaxScript)
	cmd.Stdin = strings.NewReader(names.String())
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	bad := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 {
			continue
		}
		if rel, ok := byPath[parts[0]]; ok {
			bad[rel] = fmt.Sprintf("line %s: does not parse as Python (%s)", parts[1], parts[2])
		}
	}
	return bad
}

// copyPrompts copies the tree's prompt files (rel paths under src) into
// out/prompts/, flat, as Agent Zero's read_prompt finds them by name; the first
// file of a name wins.
func copyPrompts(src, out string, rels []string) error {
	if len(rels) == 0 {
		return nil
	}
	dir := filepath.Join(out, "prompts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	done := map[string]bool{}
	for _, rel := range rels {
		base := filepath.Base(rel)
		if done[base] {
			continue
		}
		done[base] = true
		b, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(rel)))
		if err != nil {
			return fmt.Errorf("reading the prompt file %s: %w", rel, err)
		}
		if err := os.WriteFile(filepath.Join(dir, base), b, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, base), err)
		}
	}
	return nil
}

// propagateNoLoad marks a file that imports another extension file of the tree
// which cannot load as one that cannot load either (Python fails the import
// the same way), naming the file it imports and why; repeated until nothing
// changes, for chains of such imports.
func (r *Report) propagateNoLoad() {
	for changed := true; changed; {
		changed = false
		byTarget := map[string]*File{}
		for i := range r.Files {
			f := &r.Files[i]
			byTarget[f.folder+"/"+path.Base(f.Source)] = f
		}
		for i := range r.Files {
			f := &r.Files[i]
			if f.noLoad {
				continue
			}
			for _, d := range f.crossDeps {
				dep, ok := byTarget[d.file]
				if !ok || !dep.noLoad {
					continue
				}
				f.Status = statusNeedsHand
				f.Notes = append(f.Notes, fmt.Sprintf("line %d: imports the tree's %s, which cannot load (%s): neither can this file", d.line, d.file, dep.noLoadWhy))
				f.cannotLoad(fmt.Sprintf("line %d imports %s, which cannot load", d.line, d.file))
				changed = true
				break
			}
		}
	}
}

// noteBlockingGuards lists the files at a gate that cannot load (Blocking).
func (r *Report) noteBlockingGuards() {
	for i := range r.Files {
		f := &r.Files[i]
		info, ok := hooks.Lookup(f.Hook)
		if !ok || !info.Gates || !f.noLoad || f.Status == statusNotPorted || f.Status == statusOverridden {
			continue
		}
		r.Blocking = append(r.Blocking, fmt.Sprintf("`%s` at %s does not load (%s): it is served as a guard that fails at every call, so every action it guards is stopped (guards fail closed); make it load, or remove it from the plugin", f.Source, f.Hook, f.noLoadWhy))
		f.Notes = append(f.Notes, "a guard that does not load: every action at "+f.Hook+" is stopped until it loads")
	}
}

// cannotLoad notes that the layer cannot load the file, and the first reason.
func (f *File) cannotLoad(why string) {
	if !f.noLoad {
		f.noLoad, f.noLoadWhy = true, why
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func sanitize(s string) string {
	s = strings.ToLower(s)
	s = regexp.MustCompile(`[^a-z0-9_-]+`).ReplaceAllString(s, "-")
	return strings.Trim(s, "-_")
}

const mainPy = `"""%s: Agent Zero extension files served unchanged by Exocortex's compatibility
layer (exocortex.a0compat). Written by ` + "`exocortex plugins port`" + `; the files are under
a0/extensions/python/<hook>/, the report in PORT.md."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the shims: helpers/extension.py, agent.py

import exocortex as exo  # noqa: E402
from exocortex import a0compat  # noqa: E402

if __name__ == "__main__":
    exo.serve(a0compat.plugin(os.path.join(HERE, "a0"), %q))
`
