// Package editor provides text_editor: read a text file by line ranges, write a
// whole file, or patch one by replacing an exact passage, confined to configured
// root directories (tools.editor.roots, default the project directory).
//
// # Confinement
//
// A relative path starts at the first root; an absolute path must lie inside one.
// Before any access the path is cleaned (so ".." that leaves the roots is
// refused), then the longest part of it that exists is resolved through its
// symbolic links (filepath.EvalSymlinks) and must still lie inside a root, also
// resolved. A link to a file or directory outside, a link in a parent directory,
// and a dangling link whose target is outside (a write would create it there) are
// all refused with an error naming the roots. The part of the path that does not exist yet holds no
// links, so the resolved path is where a write lands. What remains is the window
// between the check and the access: someone who can replace a checked directory
// with a link in that instant can still redirect one access.
//
// # Actions
//
//   - read: the lines line_from..line_to (1-based, inclusive; at most
//     tools.editor.max_read_lines per call), numbered; a directory is listed.
//   - write: the whole file, created with its parent directories if needed,
//     replaced atomically (temporary file and rename) keeping its permissions.
//   - patch: old_text must occur exactly once; it is replaced by new_text. Zero or
//     several occurrences are errors that say which and where.
//
// Binary files (a NUL byte near the start) and files larger than
// tools.editor.max_file_bytes are refused.
package editor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/renameio/v2"

	"github.com/exocortex/exocortex/extensions/internal/toolargs"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/toolsettings"
)

// ToolName is the tool's name.
const ToolName = "text_editor"

// Editor is the text_editor tool.
type Editor struct {
	load func() (toolsettings.Editor, error)
}

// New returns the editor; load gives its settings on every call (the built-in
// plugins pass the settings the host sent, toolsettings.FromEnv).
func New(load func() (toolsettings.Editor, error)) *Editor { return &Editor{load: load} }

// Fixed is a load function returning cfg.
func Fixed(cfg toolsettings.Editor) func() (toolsettings.Editor, error) {
	return func() (toolsettings.Editor, error) { return cfg, nil }
}

// Tool is the text_editor tool.
func (e *Editor) Tool() sdk.Tool {
	return sdk.Tool{
		Name:        ToolName,
		Description: "Read a text file by line ranges, write a whole file, or patch one by replacing an exact passage; only inside the project's allowed directories.",
		Parameters: `{"type":"object","properties":{` +
			`"action":{"type":"string","enum":["read","write","patch"]},` +
			`"path":{"type":"string","description":"File path, relative to the project directory (or absolute inside an allowed directory)."},` +
			`"line_from":{"type":"integer","minimum":1,"description":"read: first line (default 1)."},` +
			`"line_to":{"type":"integer","minimum":1,"description":"read: last line, inclusive."},` +
			`"content":{"type":"string","description":"write: the complete new content of the file."},` +
			`"old_text":{"type":"string","description":"patch: the exact passage to replace; it must occur exactly once."},` +
			`"new_text":{"type":"string","description":"patch: the text to put in its place (may be empty to delete)."}},` +
			`"required":["action","path"]}`,
		PromptFile: "agent.system.tool.text_editor.md",
		Run:        e.run,
	}
}

type args struct {
	Action   toolargs.Text  `json:"action"`
	Path     toolargs.Text  `json:"path"`
	LineFrom toolargs.Int   `json:"line_from"`
	LineTo   toolargs.Int   `json:"line_to"`
	Content  *toolargs.Text `json:"content"`
	OldText  *toolargs.Text `json:"old_text"`
	NewText  *toolargs.Text `json:"new_text"`
}

var actions = map[string]string{
	"read": "read", "view": "read", "show": "read", "cat": "read", "open": "read",
	"write": "write", "create": "write", "overwrite": "write",
	"patch": "patch", "replace": "patch", "str_replace": "patch", "edit": "patch",
}

func (e *Editor) run(_ context.Context, _ *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
	var a args
	if err := toolargs.Decode(ToolName, raw, &a); err != nil {
		return nil, err
	}
	cfg, err := e.load()
	if err != nil {
		return nil, fmt.Errorf("%s: loading the configuration: %w", ToolName, err)
	}
	cfg = cfg.WithDefaults("")
	action, ok := actions[strings.ToLower(strings.TrimSpace(string(a.Action)))]
	if !ok {
		return nil, fmt.Errorf(`%s: unknown action %q: use "read", "write" or "patch"`, ToolName, string(a.Action))
	}
	rs, err := newRoots(cfg.Roots)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ToolName, err)
	}
	path, err := rs.resolve(string(a.Path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ToolName, err)
	}
	shown := string(a.Path)
	var out string
	switch action {
	case "read":
		out, err = read(path, shown, a.LineFrom, a.LineTo, cfg)
	case "write":
		if a.Content == nil {
			return nil, fmt.Errorf(`%s: write needs "content", the complete new text of the file`, ToolName)
		}
		out, err = write(path, shown, string(*a.Content), cfg)
	case "patch":
		if a.OldText == nil || *a.OldText == "" {
			return nil, fmt.Errorf(`%s: patch needs "old_text", the exact passage to replace`, ToolName)
		}
		if a.NewText == nil {
			return nil, fmt.Errorf(`%s: patch needs "new_text", the replacement (give "" to delete the passage)`, ToolName)
		}
		out, err = patch(path, shown, string(*a.OldText), string(*a.NewText), cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ToolName, err)
	}
	return &exocortexv1.ToolResult{Content: strings.ToValidUTF8(out, "\uFFFD")}, nil
}

// load reads a text file within the size limit.
func loadText(path, shown string, cfg toolsettings.Editor) ([]byte, os.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s does not exist", shown)
		}
		return nil, nil, fmt.Errorf("%s: %w", shown, err)
	}
	if fi.IsDir() {
		return nil, fi, fmt.Errorf("%s is a directory", shown)
	}
	if !fi.Mode().IsRegular() {
		return nil, fi, fmt.Errorf("%s is not a regular file", shown)
	}
	if fi.Size() > cfg.MaxFileBytes {
		return nil, fi, fmt.Errorf("%s has %d bytes, more than the %d text_editor handles (tools.editor.max_file_bytes); use code_execution (head, sed, grep) for it", shown, fi.Size(), cfg.MaxFileBytes)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fi, fmt.Errorf("%s: %w", shown, err)
	}
	if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
		return nil, fi, fmt.Errorf("%s looks binary (it holds NUL bytes); text_editor edits text files only", shown)
	}
	return b, fi, nil
}

// splitLines splits text into lines without their newlines; a final newline
// does not start another line.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func read(path, shown string, from, to toolargs.Int, cfg toolsettings.Editor) (string, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return listDir(path, shown)
	}
	b, _, err := loadText(path, shown, cfg)
	if err != nil {
		return "", err
	}
	lines := splitLines(string(b))
	if len(lines) == 0 {
		return fmt.Sprintf("%s is empty.", shown), nil
	}
	first := 1
	if from.Set {
		first = from.V
	}
	if first < 1 {
		return "", fmt.Errorf("line_from %d: lines are numbered from 1", first)
	}
	if first > len(lines) {
		return "", fmt.Errorf("line_from %d is past the end: %s has %d lines", first, shown, len(lines))
	}
	wanted := len(lines)
	if to.Set {
		if to.V < first {
			return "", fmt.Errorf("line_to %d is before line_from %d", to.V, first)
		}
		wanted = min(to.V, len(lines))
	}
	last := min(wanted, first+cfg.MaxReadLines-1)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s, lines %d-%d of %d:\n", shown, first, last, len(lines))
	for i := first; i <= last; i++ {
		fmt.Fprintf(&sb, "%6d\t%s\n", i, strings.TrimSuffix(lines[i-1], "\r"))
	}
	if last < wanted {
		fmt.Fprintf(&sb, "[lines %d-%d not shown (at most %d lines per read): read them with line_from %d]", last+1, wanted, cfg.MaxReadLines, last+1)
	}
	return strings.TrimRight(sb.String(), "\n"), nil
}

func listDir(path, shown string) (string, error) {
	ents, err := os.ReadDir(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", shown, err)
	}
	const most = 500
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s is a directory with %d entries:\n", shown, len(ents))
	for i, e := range ents {
		if i == most {
			fmt.Fprintf(&sb, "[%d more not shown]\n", len(ents)-most)
			break
		}
		name := e.Name()
		if e.IsDir() {
			name += "/"
		} else if e.Type()&fs.ModeSymlink != 0 {
			name += "@"
		}
		sb.WriteString(name + "\n")
	}
	return strings.TrimRight(sb.String(), "\n"), nil
}

// writeAtomic replaces path's content through a temporary file in the same
// directory, keeping the old file's permissions.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return renameio.WriteFile(path, data, mode, renameio.WithStaticPermissions(mode))
}

func write(path, shown, content string, cfg toolsettings.Editor) (string, error) {
	if int64(len(content)) > cfg.MaxFileBytes {
		return "", fmt.Errorf("the content has %d bytes, more than the %d text_editor writes (tools.editor.max_file_bytes)", len(content), cfg.MaxFileBytes)
	}
	mode := fs.FileMode(0o644)
	verb := "created"
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return "", fmt.Errorf("%s is a directory", shown)
		}
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("%s is not a regular file", shown)
		}
		mode, verb = fi.Mode().Perm(), "replaced"
	}
	if err := writeAtomic(path, []byte(content), mode); err != nil {
		return "", fmt.Errorf("writing %s: %w", shown, err)
	}
	return fmt.Sprintf("Wrote %s (%s): %d lines, %d bytes.", shown, verb, len(splitLines(content)), len(content)), nil
}

// lineAt is the 1-based line number of byte offset i.
func lineAt(s string, i int) int { return strings.Count(s[:i], "\n") + 1 }

func patch(path, shown, old, repl string, cfg toolsettings.Editor) (string, error) {
	b, fi, err := loadText(path, shown, cfg)
	if err != nil {
		return "", err
	}
	text := string(b)
	n := strings.Count(text, old)
	if n == 0 && strings.Contains(text, "\r\n") && !strings.Contains(old, "\r\n") {
		// The file has Windows line ends the model did not copy.
		if crlf := strings.ReplaceAll(old, "\n", "\r\n"); strings.Count(text, crlf) > 0 {
			old, repl = crlf, strings.ReplaceAll(repl, "\n", "\r\n")
			n = strings.Count(text, old)
		}
	}
	switch {
	case n == 0:
		return "", fmt.Errorf("old_text was not found in %s, so nothing was changed. Read the file again and copy the passage exactly, with its indentation and line breaks%s",
			shown, nearMiss(text, old))
	case n > 1:
		var at []string
		for i, off := 0, 0; i < n && i < 10; i++ {
			j := strings.Index(text[off:], old)
			at = append(at, fmt.Sprint(lineAt(text, off+j)))
			off += j + len(old)
		}
		return "", fmt.Errorf("old_text occurs %d times in %s (at lines %s), so nothing was changed: include more of the surrounding lines so that it occurs exactly once",
			n, shown, strings.Join(at, ", "))
	}
	i := strings.Index(text, old)
	updated := text[:i] + repl + text[i+len(old):]
	if int64(len(updated)) > cfg.MaxFileBytes {
		return "", fmt.Errorf("the patched file would have %d bytes, more than the %d text_editor writes", len(updated), cfg.MaxFileBytes)
	}
	if err := writeAtomic(path, []byte(updated), fi.Mode().Perm()); err != nil {
		return "", fmt.Errorf("writing %s: %w", shown, err)
	}
	first := lineAt(text, i)
	oldLines, newLines := countLines(old), countLines(repl)
	var sb strings.Builder
	fmt.Fprintf(&sb, "Patched %s: replaced %d line(s) from line %d with %d line(s). Now:\n", shown, oldLines, first, newLines)
	lines := splitLines(updated)
	lo, hi := max(1, first-2), min(len(lines), first+max(newLines, 1)+1)
	if hi-lo > 20 {
		hi = lo + 20
	}
	for k := lo; k <= hi; k++ {
		fmt.Fprintf(&sb, "%6d\t%s\n", k, strings.TrimSuffix(lines[k-1], "\r"))
	}
	return strings.TrimRight(sb.String(), "\n"), nil
}

// countLines is how many lines a passage spans: "b\n" is one line, "a\nb" two.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// nearMiss points at lines where the passage's first line occurs with other
// spacing, the usual cause of a missed patch.
func nearMiss(text, old string) string {
	want := ""
	for _, l := range strings.Split(old, "\n") {
		if want = strings.Join(strings.Fields(l), " "); want != "" {
			break
		}
	}
	if want == "" {
		return ""
	}
	var at []int
	for i, l := range splitLines(text) {
		if strings.Contains(strings.Join(strings.Fields(l), " "), want) {
			at = append(at, i+1)
		}
	}
	if len(at) == 0 {
		return ""
	}
	sort.Ints(at)
	if len(at) > 5 {
		at = at[:5]
	}
	return fmt.Sprintf(" (its first line appears, with different spacing or different lines after it, at line %s)", strings.Trim(strings.Join(strings.Fields(fmt.Sprint(at)), ", "), "[]"))
}
