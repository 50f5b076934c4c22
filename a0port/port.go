// Package a0port ports an Agent Zero (v1.7) extension tree to an Exocortex
// Python plugin that serves each extension file unchanged through the Python
// SDK's compatibility layer (sdk/python/exocortex/a0compat.py), and reports
// what was ported as is, what the layer adapts, what needs a hand and which of
// the fragile seams of Agent Zero's wiring (seed 001) each file hits.
package a0port

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/sdk/python"
)

// hookOrder lists the Agent Zero hook names with an Exocortex hook of the same
// name, in the order they fire; the index is used to tell whether an injection
// comes too late to reach the model.
var hookOrder = []string{
	"agent_init", "monologue_start", "hist_add_before", "message_loop_start",
	"message_loop_prompts_before", "system_prompt", "message_loop_prompts_after",
	"before_main_llm_call", "response_stream_chunk", "response_stream_end", "error_format",
	"tool_execute_before", "tool_execute_after", "message_loop_end", "monologue_end",
}

func hookIndex(h string) int {
	for i, n := range hookOrder {
		if n == h {
			return i
		}
	}
	return -1
}

// promptHooks are the hooks whose responses carry prompt blocks.
var promptHooks = map[string]bool{"message_loop_prompts_before": true, "system_prompt": true, "message_loop_prompts_after": true}

// Status says how one file was ported.
type Status string

// The statuses of a ported file.
const (
	AsIs      Status = "ported as is"
	Adapted   Status = "adapted by the layer"
	NeedsHand Status = "needs a hand"
	NotPorted Status = "not ported"
)

// Seam is one fragile seam a file hits, with where and the fix.
type Seam struct {
	Seam    int    `json:"seam"`
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
	Fix     string `json:"fix"`
}

// File is one Agent Zero extension file and how it was ported.
type File struct {
	Source string   `json:"source"`
	Hook   string   `json:"hook"`
	Order  int      `json:"order"`
	Name   string   `json:"name"`
	Status Status   `json:"status"`
	Notes  []string `json:"notes,omitempty"`
	Out    string   `json:"out,omitempty"`
}

// Report is the result of porting one tree.
type Report struct {
	Source string `json:"source"`
	Out    string `json:"out"`
	Plugin string `json:"plugin"`
	Files  []File `json:"files"`
	Seams  []Seam `json:"seams"`
}

var fileRE = regexp.MustCompile(`^_(\d+)_([A-Za-z0-9_]+)\.py$`)

// Options configure a port.
type Options struct {
	// Plugin names the plugin; the out directory's base name when empty.
	Plugin string
}

// Port ports the Agent Zero tree at src into a Python plugin at out. A file
// that cannot be ported is reported and the rest still ported.
func Port(ctx context.Context, src, out string, o Options) (*Report, error) {
	st, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("porting %s: %w (give the Agent Zero directory: a profile, plugin or usr tree holding extensions/)", src, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("porting %s: not a directory (give the Agent Zero directory holding extensions/)", src)
	}
	name := o.Plugin
	if name == "" {
		name = sanitize(filepath.Base(filepath.Clean(out)))
	}
	r := &Report{Source: src, Out: out, Plugin: name}
	var exts []string
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "__pycache__" || strings.HasPrefix(d.Name(), ".")) && p != src {
			return filepath.SkipDir
		}
		if d.IsDir() && d.Name() == "extensions" {
			exts = append(exts, p)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("porting %s: %w", src, err)
	}
	if len(exts) == 0 {
		return nil, fmt.Errorf("porting %s: no extensions/ directory found (Agent Zero keeps extensions at extensions/python/<hook>/_NN_name.py)", src)
	}
	dst := filepath.Join(out, "extensions", "python")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, fmt.Errorf("porting into %s: %w", out, err)
	}
	for _, e := range exts {
		if err := r.portExtensions(src, e, dst); err != nil {
			return nil, err
		}
	}
	r.prefixCollisions()
	if err := writePlugin(out, name); err != nil {
		return nil, err
	}
	sort.SliceStable(r.Seams, func(i, j int) bool {
		if r.Seams[i].File != r.Seams[j].File {
			return r.Seams[i].File < r.Seams[j].File
		}
		return r.Seams[i].Line < r.Seams[j].Line
	})
	md := r.Markdown()
	if err := os.WriteFile(filepath.Join(out, "PORTING.md"), []byte(md), 0o644); err != nil {
		return nil, fmt.Errorf("writing the porting report: %w", err)
	}
	js, _ := json.MarshalIndent(r, "", "  ")
	if err := os.WriteFile(filepath.Join(out, "porting.json"), append(js, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("writing the porting report: %w", err)
	}
	return r, nil
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}

func (r *Report) portExtensions(root, ext, dst string) error {
	hooks, err := os.ReadDir(ext)
	if err != nil {
		return fmt.Errorf("reading %s: %w", ext, err)
	}
	for _, h := range hooks {
		if !h.IsDir() {
			continue
		}
		if h.Name() == "python" {
			inner, err := os.ReadDir(filepath.Join(ext, "python"))
			if err != nil {
				return fmt.Errorf("reading %s: %w", ext, err)
			}
			for _, ih := range inner {
				if ih.IsDir() && ih.Name() != "__pycache__" {
					if err := r.portHook(root, filepath.Join(ext, "python", ih.Name()), ih.Name(), dst); err != nil {
						return err
					}
				}
			}
			continue
		}
		if h.Name() == "__pycache__" || h.Name() == "webui" {
			continue
		}
		// Seam 8: Agent Zero v1.7 loads only extensions/python/<hook>/.
		files, _ := os.ReadDir(filepath.Join(ext, h.Name()))
		for _, f := range files {
			if !strings.HasSuffix(f.Name(), ".py") {
				continue
			}
			p := rel(root, filepath.Join(ext, h.Name(), f.Name()))
			r.Files = append(r.Files, File{Source: p, Hook: h.Name(), Status: NotPorted,
				Notes: []string{"outside extensions/python/: Agent Zero v1.7 never loads it"}})
			r.Seams = append(r.Seams, Seam{Seam: 8, File: p,
				Message: fmt.Sprintf("extension at extensions/%s/ without python/: Agent Zero v1.7 skips it silently", h.Name()),
				Fix:     fmt.Sprintf("move it to extensions/python/%s/%s and port again", h.Name(), f.Name())})
		}
	}
	return nil
}

func (r *Report) portHook(root, dir, hook, dst string) error {
	files, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	for _, f := range files {
		if f.IsDir() || !strings.HasSuffix(f.Name(), ".py") {
			continue
		}
		p := rel(root, filepath.Join(dir, f.Name()))
		m := fileRE.FindStringSubmatch(f.Name())
		if m == nil {
			if f.Name() != "__init__.py" {
				r.Files = append(r.Files, File{Source: p, Hook: hook, Status: NotPorted,
					Notes: []string{"name is not _NN_name.py: rename it with a numeric prefix (its order)"}})
			}
			continue
		}
		order, _ := strconv.Atoi(m[1])
		file := File{Source: p, Hook: hook, Order: order, Name: m[2]}
		if hookIndex(hook) < 0 {
			file.Status = NotPorted
			file.Notes = append(file.Notes, "no hook point yet: "+hook)
			r.Files = append(r.Files, file)
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			file.Status = NotPorted
			file.Notes = append(file.Notes, err.Error())
			r.Files = append(r.Files, file)
			continue
		}
		file.Status = AsIs
		r.scan(&file, data)
		outp := filepath.Join(dst, hook, f.Name())
		if _, err := os.Stat(outp); err == nil {
			// The same file name from two extensions/ trees: Agent Zero lets
			// the later one override the earlier; so does the port.
			file.Notes = append(file.Notes, "overrides a file of the same name from another extensions/ tree")
		}
		if err := os.MkdirAll(filepath.Dir(outp), 0o755); err != nil {
			return fmt.Errorf("porting %s: %w", p, err)
		}
		if err := os.WriteFile(outp, data, 0o644); err != nil {
			return fmt.Errorf("porting %s: %w", p, err)
		}
		file.Out = filepath.Join("extensions", "python", hook, f.Name())
		r.Files = append(r.Files, file)
	}
	return nil
}

var (
	helpersRE  = regexp.MustCompile(`^\s*(from\s+python\.helpers(\.[\w.]+)?\s+import\s+.*|import\s+python\.helpers[\w.]*.*)$`)
	injectRE   = regexp.MustCompile(`\b(extras_temporary|extras_persistent)\b\s*(\[|\.update|\.setdefault)|\bloop_data\.system\b\s*(\.append|\.extend|\+=|\.insert)`)
	internalRE = regexp.MustCompile(`\b(call_utility_model|call_chat_model|memory\.Memory|Memory\.get|self\.agent\.context\.(?:communicate|nudge|reset)|history\.compress|rate_limiter)\b`)
)

// internals maps Agent Zero internals with no direct counterpart in the layer
// to what Exocortex has in their place.
var internals = map[string]string{
	"call_utility_model": "Exocortex's utility model (config utility_model): call it from a tool or the host, not an extension",
	"call_chat_model":    "Exocortex's main model: extensions do not call it; return prompt blocks instead",
	"memory.Memory":      "Exocortex's memory store (exocortex memory; the memory extension): read recalled memories from state",
	"Memory.get":         "Exocortex's memory store (exocortex memory; the memory extension): read recalled memories from state",
	"history.compress":   "Exocortex compresses history itself (core/history); drop the call",
	"rate_limiter":       "no counterpart: the host schedules model calls",
}

func (r *Report) scan(f *File, data []byte) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1024*1024), 1024*1024)
	idx := hookIndex(f.Hook)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := helpersRE.FindStringSubmatch(line); m != nil {
			use := strings.Replace(strings.TrimSpace(line), "python.helpers", "helpers", 1)
			r.Seams = append(r.Seams, Seam{Seam: 10, File: f.Source, Line: n,
				Message: "imports python.helpers: the v1.7 layout is helpers/, and the port serves only the layer's helpers",
				Fix:     "use `" + use + "`"})
			if f.Status == AsIs {
				f.Status = Adapted
			}
			f.Notes = append(f.Notes, "python.helpers import served by the layer's shim")
		}
		if injectRE.MatchString(line) && !promptHooks[f.Hook] {
			when := "after the prompt is built"
			if idx < hookIndex("message_loop_prompts_before") {
				when = "at a hook that does not carry prompt blocks in Exocortex"
			}
			r.Seams = append(r.Seams, Seam{Seam: 7, File: f.Source, Line: n,
				Message: fmt.Sprintf("adds prompt text at %s, %s: it never reaches the model", f.Hook, when),
				Fix:     "move the file to extensions/python/message_loop_prompts_after/ (or system_prompt for system text)"})
			f.Status = NeedsHand
		}
		for _, m := range internalRE.FindAllString(line, -1) {
			f.Status = NeedsHand
			f.Notes = append(f.Notes, fmt.Sprintf("line %d: %s: %s", n, m, internals[m]))
		}
	}
}

// prefixCollisions reports two files at one hook with the same numeric prefix
// (seam 4): their order is then decided by file name alone.
func (r *Report) prefixCollisions() {
	seen := map[string][]int{}
	for i, f := range r.Files {
		if f.Status == NotPorted {
			continue
		}
		k := f.Hook + "\x00" + strconv.Itoa(f.Order)
		seen[k] = append(seen[k], i)
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		idx := seen[k]
		if len(idx) < 2 {
			continue
		}
		var names []string
		for _, i := range idx {
			names = append(names, r.Files[i].Source)
		}
		for _, i := range idx {
			f := r.Files[i]
			r.Seams = append(r.Seams, Seam{Seam: 4, File: f.Source,
				Message: fmt.Sprintf("prefix _%02d_ at %s is shared by %s: the order between them is by file name only", f.Order, f.Hook, strings.Join(names, ", ")),
				Fix:     "give each file its own numeric prefix"})
		}
	}
}

func sanitize(s string) string {
	s = strings.ToLower(s)
	s = regexp.MustCompile(`[^a-z0-9_]+`).ReplaceAllString(s, "_")
	s = strings.Trim(s, "_")
	if s == "" {
		return "a0_ported"
	}
	return s
}

const mainPy = `"""%s: an Agent Zero extension tree ported by ` + "`exocortex plugins port`" + `.

Each file under extensions/python/<hook>/ is served unchanged through the
Python SDK's Agent Zero layer (exocortex.a0compat). Generated; PORTING.md says
what was ported and what needs a hand.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import exocortex as exo  # noqa: E402
from exocortex import a0compat  # noqa: E402


def plugin():
    return a0compat.plugin(HERE, %q)


if __name__ == "__main__":
    exo.serve(plugin())
`

var shims = map[string]string{
	"helpers/__init__.py":         "",
	"helpers/extension.py":        "# Generated by exocortex plugins port: Agent Zero's Extension, served by the layer.\nfrom exocortex.a0compat import Extension, LoopData  # noqa: F401\n",
	"python/__init__.py":          "",
	"python/helpers/__init__.py":  "",
	"python/helpers/extension.py": "# Generated by exocortex plugins port: the pre-v1.7 import path (seam 10).\nfrom exocortex.a0compat import Extension, LoopData  # noqa: F401\n",
	"agent.py":                    "# Generated by exocortex plugins port: Agent Zero's agent module, served by the layer.\nfrom exocortex.a0compat import Agent, LoopData  # noqa: F401\n",
}

func writePlugin(out, name string) error {
	files := map[string]string{"main.py": fmt.Sprintf(mainPy, name, name)}
	for k, v := range shims {
		files[k] = v
	}
	pj, _ := json.MarshalIndent(discover.Manifest{Command: []string{"python3", "main.py"}}, "", "  ")
	files["plugin.json"] = string(pj) + "\n"
	for p, data := range files {
		full := filepath.Join(out, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("writing %s: %w", full, err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", full, err)
		}
	}
	if err := python.Install(out); err != nil {
		return fmt.Errorf("installing the Python SDK into %s: %w", out, err)
	}
	return nil
}

// Markdown renders the report.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Porting report: %s\n\nFrom `%s` into `%s` (plugin `%s`).\n", r.Plugin, r.Source, r.Out, r.Plugin)
	for _, st := range []Status{AsIs, Adapted, NeedsHand, NotPorted} {
		fmt.Fprintf(&b, "\n## %s\n\n", strings.ToUpper(st[:1].String())+string(st[1:]))
		n := 0
		for _, f := range r.Files {
			if f.Status != st {
				continue
			}
			n++
			fmt.Fprintf(&b, "- `%s` (%s, order %d)", f.Source, f.Hook, f.Order)
			if len(f.Notes) > 0 {
				fmt.Fprintf(&b, ": %s", strings.Join(f.Notes, "; "))
			}
			b.WriteString("\n")
		}
		if n == 0 {
			b.WriteString("None.\n")
		}
	}
	b.WriteString("\n## Seams\n\n")
	if len(r.Seams) == 0 {
		b.WriteString("None found.\n")
	}
	for _, s := range r.Seams {
		loc := s.File
		if s.Line > 0 {
			loc += ":" + strconv.Itoa(s.Line)
		}
		fmt.Fprintf(&b, "- seam %d, %s: %s. Fix: %s\n", s.Seam, loc, s.Message, s.Fix)
	}
	return b.String()
}

func (s Status) String() string { return string(s) }
