package lint

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/wiring"
)

// Plugin is a loaded plugin (see wiring.Plugin).
type Plugin = wiring.Plugin

// Prompt is a prompt file with its front matter (see wiring.Prompt).
type Prompt = wiring.Prompt

// Input is everything the checks look at. Check only reads it.
type Input struct {
	// Model holds the plugins with their manifests, the built-in state keys, the
	// prompt files, the generated signal constants, the core's own tools and the
	// operator's enabled and disabled extensions.
	wiring.Model
	// PluginDirs are the directories the loader scans, in priority order.
	PluginDirs []discover.Dir
	// Around are other directories where plugins tend to be put by mistake, such
	// as $EXOCORTEX_HOME/extensions (rule 8).
	Around []string
	// Tree lists what was found in and under PluginDirs and Around (ScanTree).
	Tree []Entry
	// Problems are the entries discovery could not make sense of, such as a
	// plugin.json that is not JSON.
	Problems []discover.Problem
	// Skipped is what the loader passed over although it looks meant to load
	// (host.Skipped): a plugin file without its execute bit, a configured
	// plugin directory that does not exist, an untrusted project's plugins.
	Skipped []discover.Skip
	// PromptText lists where plugins hold the opening text of a signal prompt
	// (FindPromptText), for EXO017.
	PromptText []PromptText
	// WiringPath is where WIRING.md is kept; "" leaves rule 12 out.
	WiringPath string
	// Wiring is the file's current content, nil when it does not exist.
	Wiring []byte
	// Ported are the plugins written by `exocortex plugins port`, with their
	// seams and key differences (EXO131 to EXO134).
	Ported []Ported
	// Imports are the imports of Python plugins' files that the plugins
	// cannot load (EXO135, EXO136), found by sdk/python/pyimport: for a
	// ported plugin the port's own findings, read again as the files are now.
	Imports []PluginImports
	// SecretReads are the places plugins' code reads the operator's secrets
	// (FindSecretReads), for EXO139.
	SecretReads []SecretRead
	// CommandHooks are the problems of the command hooks (the command-hooks
	// plugin's Claude Code, Gemini CLI and Codex configurations), as the
	// bridge's loader and checker find them (EXO141, EXO142).
	CommandHooks []CommandHookProblem
}

// CommandHookProblem is one problem of the command hooks
// (docs/command-hooks.md).
type CommandHookProblem struct {
	// Extension is the hook's extension name; "" for a problem of a file.
	Extension string `json:"extension,omitempty"`
	File      string `json:"file"`
	Message   string `json:"message"`
	// CannotRun: the hook's command cannot run (EXO141); otherwise the
	// configuration cannot be used in full (EXO142).
	CannotRun bool `json:"cannot_run,omitempty"`
	// Fix says what to do, in one line.
	Fix string `json:"fix"`
}

// Entry is one file or directory found in or under a scanned directory.
type Entry struct {
	// Root is the scanned directory (a PluginDirs path or an Around one).
	Root string
	// Rel is the path below Root, slash-separated.
	Rel string
	Dir bool
	// Exec is true for a regular file with an execute bit.
	Exec bool
}

// Severity says how much a finding matters. Only errors fail `exocortex lint`.
type Severity string

const (
	// Error: something will not work as declared (a reader that never sees a
	// value, a flag nobody resets, a tool without implementation).
	Error Severity = "error"
	// Warning: probably a mistake, or a trap for the next change.
	Warning Severity = "warning"
	// Info: worth knowing when reading the wiring, nothing to fix by default.
	Info Severity = "info"
)

func (s Severity) rank() int {
	switch s {
	case Error:
		return 0
	case Warning:
		return 1
	}
	return 2
}

// Finding is one problem, with where it is and how to fix it.
type Finding struct {
	// Code is stable across releases, e.g. "EXO041" (see Codes).
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	// Plugin, Extension, Key and File locate the finding; those that do not
	// apply are empty.
	Plugin    string `json:"plugin,omitempty"`
	Extension string `json:"extension,omitempty"`
	Key       string `json:"key,omitempty"`
	File      string `json:"file,omitempty"`
	// Message says what is wrong; Fix says in one line what to do about it.
	Message string `json:"message"`
	Fix     string `json:"fix"`
}

// Location renders the finding's location fields, e.g. "plugin=recall extension=recall_memories".
func (f Finding) Location() string {
	var parts []string
	for _, kv := range [][2]string{{"plugin", f.Plugin}, {"extension", f.Extension}, {"key", f.Key}, {"file", f.File}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	return strings.Join(parts, " ")
}

// CodeInfo documents one finding code.
type CodeInfo struct {
	Code string
	// Severity is the usual one; a few codes are raised at a lower severity in
	// the case their description names.
	Severity Severity
	// Seam is the number of the seed's "known fragile seam" the code guards
	// (1-10), or 0 for checks beyond the seed's table.
	Seam int
	// Rule is the numbered finding of the lint's specification (1-12), or 0 for
	// the manifest checks every rule relies on.
	Rule    int
	Summary string
}

// Codes lists every finding code, in code order.
func Codes() []CodeInfo {
	return []CodeInfo{
		{"EXO001", Error, 0, 0, "A declaration is malformed: empty or spaced name, unknown hook, key without type or scope, file without id, path or access, resets not within writes, empty for_tools name."},
		{"EXO002", Warning, 0, 0, "Two plugins answer with the same plugin name in their manifests."},
		{"EXO003", Error, 4, 4, "One plugin declares the same extension at the same hook, or the same tool, twice; or two plugins of one directory declare the same tool."},
		{"EXO004", Info, 0, 0, "An extension or tool is shadowed by a higher-priority plugin (a warning when both plugins are in the same directory)."},
		{"EXO005", Warning, 0, 0, "The configuration disables or enables an extension no plugin declares."},
		{"EXO006", Warning, 0, 0, "A manifest names its plugin differently from the name it was discovered under."},
		{"EXO007", Error, 0, 0, "A manifest declares memory areas to write without uses_memory (the host refuses every memory call of the plugin), or an area that is not an area name."},
		{"EXO011", Error, 1, 1, "A prompt file's signal: has no generated constant."},
		{"EXO012", Error, 1, 1, "A generated signal constant has no prompt file declaring it."},
		{"EXO013", Error, 1, 1, "A generated signal constant is older than its prompt (the prompt file or description changed)."},
		{"EXO014", Error, 1, 1, "An extension consumes a signal that has no generated constant."},
		{"EXO015", Error, 1, 1, "Two prompt files declare the same signal."},
		{"EXO016", Error, 1, 1, "A prompt file's front matter cannot be read, or an override changes its prompt's signal."},
		{"EXO017", Error, 1, 1, "A plugin holds the opening text of a signal prompt (in its executable or a source file beside it): it recognises the core's message by wording, not by signal."},
		{"EXO021", Error, 2, 2, "A state key is declared twice with different types."},
		{"EXO022", Error, 2, 2, "A state key is declared twice with different scopes."},
		{"EXO023", Error, 3, 2, "A state key is read or written but declared by no one."},
		{"EXO031", Error, 3, 3, "A state key is read by a running extension and written by none that runs."},
		{"EXO032", Warning, 0, 3, "A state key is written but read by no running extension."},
		{"EXO033", Error, 0, 3, "A reader never sees a value: every writer of the key runs after it, or before the key's reset."},
		{"EXO034", Info, 0, 3, "A reader fires before any writer of the key in the same iteration and sees an earlier iteration's value."},
		{"EXO035", Error, 2, 3, "A key is read and never written (or written and never read) while another key's name is one or two edits away (fail_tracker, fail_trackers)."},
		{"EXO041", Error, 4, 4, "Two extensions run at the same hook with the same order (a warning when one of them does not run)."},
		{"EXO042", Warning, 4, 4, "An extension's numeric name prefix (_15_x) disagrees with its order; an octal literal (010) is named."},
		{"EXO043", Warning, 4, 4, "At one hook, numbered names sort differently as strings than their orders do as integers (_9_x, _10_y)."},
		{"EXO051", Error, 5, 5, "A flag key is set and nothing resets it."},
		{"EXO052", Error, 5, 5, "A flag key's only resetters do not run (disabled or shadowed)."},
		{"EXO061", Error, 6, 6, "Plugins declare one data file under different paths."},
		{"EXO062", Error, 6, 6, "A data file is read and never written."},
		{"EXO063", Warning, 6, 6, "One path is declared under two data-file ids."},
		{"EXO064", Info, 0, 6, "A data file is written and never read by a plugin."},
		{"EXO071", Error, 7, 7, "An extension declares prompt injection at a hook that fires after the prompt is built."},
		{"EXO081", Error, 8, 8, "Plugin-looking files sit in a hook-named directory inside a plugin directory, which the loader does not scan."},
		{"EXO082", Warning, 8, 8, "Plugin-looking files sit in a place that is not a plugin directory (e.g. $EXOCORTEX_HOME/extensions)."},
		{"EXO083", Warning, 8, 8, "A directory in a plugin directory looks like a plugin but has no executable of its name and no plugin.json."},
		{"EXO084", Error, 8, 8, "A plugin directory entry cannot be read as a plugin (e.g. a plugin.json without a command)."},
		{"EXO085", Warning, 8, 8, "A script or numbered file directly in a plugin directory is not executable, so it is not loaded."},
		{"EXO086", Warning, 8, 8, "A configured plugin directory (plugin_dirs) does not exist, so nothing loads from it."},
		{"EXO087", Warning, 8, 8, "A project's plugins are not loaded because the project is not trusted."},
		{"EXO091", Error, 9, 9, "A key that can hold a gate is read and set at two or more hooks, by one extension name or several: a hand-rolled once-per-session gate."},
		{"EXO101", Error, 10, 10, "A plugin fails to start, to hand-shake or to answer its manifest."},
		{"EXO111", Error, 0, 11, "A tool is declared without an implementation."},
		{"EXO112", Error, 0, 11, "A tool prompt file (agent.system.tool.NAME.md) documents a tool no plugin declares."},
		{"EXO113", Warning, 0, 11, "A declared tool has no prompt file."},
		{"EXO114", Error, 0, 11, "A tool names a prompt file that does not exist."},
		{"EXO115", Error, 0, 11, "An extension's for_tools names a tool no loaded plugin provides, so it never runs for it (a warning when a plugin did not load)."},
		{"EXO116", Warning, 0, 11, "An extension declares for_tools at a hook that does not fire for one tool call (any but tool_execute_before, tool_output_update, tool_execute_after, hist_add_tool_result), where it has no effect."},
		{"EXO121", Error, 0, 12, "WIRING.md is missing or differs from what `exocortex lint --write` produces."},
		{"EXO131", Error, 0, 0, "A ported Agent Zero file hits a seam of the seed's table (the seams `exocortex plugins port` reports), at its file and line; a warning for seams 2 and 4."},
		{"EXO132", Warning, 0, 0, "An Agent Zero file of a ported tree is not served: its hook has no Exocortex hook point yet, or it sits at extensions/<hook>/ without python/."},
		{"EXO133", Warning, 3, 0, "A ported Agent Zero file used an agent-data key at run time that the port did not find in it statically (recorded in the plugin's .a0compat/observed.json)."},
		{"EXO134", Info, 0, 0, "A ported Agent Zero file has run without using an agent-data key the port found in it statically."},
		{"EXO135", Error, 10, 0, "A Python plugin's file imports an Agent Zero module the compatibility layer has no stand-in for (or python.helpers, outside a ported tree): the file cannot load."},
		{"EXO136", Error, 0, 0, "A Python plugin's file imports a third-party module that is not installed where the plugin's interpreter finds it: the file cannot load."},
		{"EXO137", Warning, 0, 0, "A ported Agent Zero file stores an asyncio task (or a DeferredTask) in agent data the port declares as shared state: the layer keeps it in the plugin process, where the tree's later hooks await or poll it; other plugins never see it."},
		{"EXO138", Info, 0, 0, "The third-party imports of a Python plugin's files were not checked, because no Python interpreter could be asked which modules are installed."},
		{"EXO139", Warning, 0, 0, "A plugin's code reads the operator's secrets (Agent Zero's get_secrets_manager, load_secrets, replace_placeholders, an A0_SECRET_ variable) but none of its tools declares uses_secrets: the host keeps the values from it."},
		{"EXO141", Error, 0, 0, "A command hook (Claude Code, Gemini CLI or Codex hook configuration) cannot run: its script does not exist or is not executable, or its program is not on PATH; at a tool call it guards, the call is stopped."},
		{"EXO142", Warning, 0, 0, "A command-hook configuration cannot be used in full: a file that is not JSON, an event Exocortex has no hook for, an entry that is not a command, a bad matcher or timeout, or a project's file left out because the project is not trusted."},
	}
}

// Check runs every check over in and returns the findings, errors first, then by
// code and location. It is deterministic and does no I/O.
func Check(in Input) []Finding {
	c := &checker{in: &in, g: wiring.Build(&in.Model), hookNames: hookNames()}
	c.manifests()
	c.signals()
	c.promptText()
	c.keys()
	c.flow()
	c.nearMisses()
	c.timeline()
	c.orders()
	c.flags()
	c.files()
	c.injection()
	c.tree()
	c.skipped()
	c.gates()
	c.loads()
	c.tools()
	c.requestFields()
	c.wiringDoc()
	c.ported()
	c.imports()
	c.secretReads()
	c.commandHooks()
	SortFindings(c.out)
	return slices.CompactFunc(c.out, func(a, b Finding) bool { return a == b })
}

// SortFindings puts findings in the order Check returns them.
func SortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(a.Severity.rank(), b.Severity.rank()),
			strings.Compare(a.Code, b.Code),
			strings.Compare(a.Plugin, b.Plugin),
			strings.Compare(a.Extension, b.Extension),
			strings.Compare(a.Key, b.Key),
			strings.Compare(a.File, b.File),
			strings.Compare(a.Message, b.Message),
		)
	})
}

// Count returns how many findings have each severity.
func Count(fs []Finding) (errors, warnings, infos int) {
	for _, f := range fs {
		switch f.Severity {
		case Error:
			errors++
		case Warning:
			warnings++
		default:
			infos++
		}
	}
	return
}

type checker struct {
	in        *Input
	g         *wiring.Graph
	hookNames map[string]bool
	out       []Finding
}

func (c *checker) add(f Finding) { c.out = append(c.out, f) }

// commandHooks reports the command hooks that cannot run (EXO141) and the
// configurations that cannot be used in full (EXO142).
func (c *checker) commandHooks() {
	for _, p := range c.in.CommandHooks {
		f := Finding{Code: "EXO142", Severity: Warning, Plugin: "command-hooks", Extension: p.Extension, File: p.File, Message: p.Message, Fix: p.Fix}
		if p.CannotRun {
			f.Code, f.Severity = "EXO141", Error
		}
		c.add(f)
	}
}

// at names an extension at its hook for messages: "recall at message_loop_prompts_after (order 55)".
func at(e *wiring.Extension) string {
	return fmt.Sprintf("%s at %s (order %d)", e.Name, e.Hook.Name, e.Order())
}

// ats lists extensions with at, joined.
func ats(es []*wiring.Extension) string {
	var out []string
	for _, e := range es {
		out = append(out, at(e))
	}
	return strings.Join(out, ", ")
}

// running returns the extensions of es that run.
func running(es []*wiring.Extension) []*wiring.Extension {
	var out []*wiring.Extension
	for _, e := range es {
		if e.Runs() {
			out = append(out, e)
		}
	}
	return out
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
