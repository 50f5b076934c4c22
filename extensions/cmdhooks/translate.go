package cmdhooks

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/exocortex/exocortex/toolsettings"
)

// The Exocortex tools the bridge translates, and their arguments.
const (
	toolCodeExecution = "code_execution"
	toolTextEditor    = "text_editor"
)

// ToolCall is a tool call as a hook script sees it: the tool's name in the
// script's dialect and its input object.
type ToolCall struct {
	Name  string         `json:"tool_name"`
	Input map[string]any `json:"tool_input"`
	// translated is how the call maps back to Exocortex's arguments.
	kind string
}

// Call kinds, for the way back.
const (
	kindNone  = ""
	kindShell = "shell"
	kindRead  = "read"
	kindWrite = "write"
	kindEdit  = "edit"
)

// names of each kind per dialect: Claude Code and Codex share theirs.
var dialectNames = map[string]map[string]string{
	kindShell: {toolsettings.DialectClaude: "Bash", toolsettings.DialectGemini: "run_shell_command"},
	kindRead:  {toolsettings.DialectClaude: "Read", toolsettings.DialectGemini: "read_file"},
	kindWrite: {toolsettings.DialectClaude: "Write", toolsettings.DialectGemini: "write_file"},
	kindEdit:  {toolsettings.DialectClaude: "Edit", toolsettings.DialectGemini: "replace"},
}

func dialectName(kind, dialect string) string {
	if dialect == toolsettings.DialectGemini {
		return dialectNames[kind][dialect]
	}
	return dialectNames[kind][toolsettings.DialectClaude]
}

// Translate gives an Exocortex tool call (name, arguments as JSON) in
// dialect's terms: code_execution's terminal as Bash (run_shell_command)
// with command, text_editor's read, write and patch as Read, Write and Edit
// (read_file, write_file, replace) with file_path, content, old_string and
// new_string. Relative paths are made absolute from project, as those tools
// give them. Every other tool keeps its name (an MCP tool's is
// mcp__server__tool already) and its arguments.
func Translate(dialect, name, argsJSON, project string) (ToolCall, error) {
	args := map[string]any{}
	if argsJSON != "" {
		if err := json.Unmarshal([]byte(argsJSON), &args); err != nil {
			return ToolCall{}, fmt.Errorf("the arguments of %s are not a JSON object: %w", name, err)
		}
	}
	str := func(k string) string { s, _ := args[k].(string); return s }
	abs := func(p string) string {
		if p != "" && !filepath.IsAbs(p) && project != "" {
			return filepath.Join(project, p)
		}
		return p
	}
	switch {
	case name == toolCodeExecution && (str("runtime") == "terminal" || str("runtime") == ""):
		return ToolCall{Name: dialectName(kindShell, dialect), Input: map[string]any{"command": str("code")}, kind: kindShell}, nil
	case name == toolTextEditor && str("action") == "read":
		in := map[string]any{"file_path": abs(str("path"))}
		if f, ok := args["line_from"].(float64); ok && f > 0 {
			in["offset"] = f
			if t, ok := args["line_to"].(float64); ok && t >= f {
				in["limit"] = t - f + 1
			}
		}
		return ToolCall{Name: dialectName(kindRead, dialect), Input: in, kind: kindRead}, nil
	case name == toolTextEditor && str("action") == "write":
		return ToolCall{Name: dialectName(kindWrite, dialect), Input: map[string]any{"file_path": abs(str("path")), "content": str("content")}, kind: kindWrite}, nil
	case name == toolTextEditor && str("action") == "patch":
		return ToolCall{Name: dialectName(kindEdit, dialect), Input: map[string]any{"file_path": abs(str("path")), "old_string": str("old_text"), "new_string": str("new_text")}, kind: kindEdit}, nil
	}
	return ToolCall{Name: name, Input: args}, nil
}

// Back applies a hook's new tool input (Claude Code's updatedInput, Gemini
// CLI's tool_input, merged into the input the hook was given) to the
// Exocortex arguments: the fields the translation produced go back to
// their Exocortex names, the others are kept from the original arguments.
func Back(call ToolCall, argsJSON string, updated map[string]any) (string, error) {
	args := map[string]any{}
	if argsJSON != "" {
		if err := json.Unmarshal([]byte(argsJSON), &args); err != nil {
			return "", fmt.Errorf("the tool's arguments are not a JSON object: %w", err)
		}
	}
	merged := map[string]any{}
	for k, v := range call.Input {
		merged[k] = v
	}
	for k, v := range updated {
		merged[k] = v
	}
	set := func(from, to string) {
		if v, ok := merged[from]; ok {
			args[to] = v
		}
	}
	switch call.kind {
	case kindShell:
		set("command", "code")
	case kindRead:
		set("file_path", "path")
	case kindWrite:
		set("file_path", "path")
		set("content", "content")
	case kindEdit:
		set("file_path", "path")
		set("old_string", "old_text")
		set("new_string", "new_text")
	default:
		args = merged
	}
	b, err := json.Marshal(args)
	if err != nil {
		return "", fmt.Errorf("encoding the rewritten arguments: %w", err)
	}
	return string(b), nil
}

// NameFor gives a tool's name, in any dialect's terms (Bash,
// run_shell_command, Read, read_file, ...), in dialect's.
func NameFor(dialect, name string) string {
	for kind, names := range dialectNames {
		for _, n := range names {
			if n == name {
				return dialectName(kind, dialect)
			}
		}
	}
	return name
}

// EventOf gives an event's Claude Code name, from a Claude Code, Codex or
// Gemini CLI name; ok is false for an event the bridge does not know.
func EventOf(name string) (string, bool) {
	if ev, ok := geminiEvents[name]; ok {
		return ev, true
	}
	_, ok := supported[name]
	return name, ok
}
