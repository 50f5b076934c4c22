// Package scaffold writes a new plugin's source tree: a working extension at the
// hook the developer names, a test that calls it through the real protocol, a
// Makefile (`make build` installs into the plugin directory atomically, `make
// test`, `make dev`) and a README. `exocortex plugins new` is its command line.
//
// The extension is small but complete: it declares a state key of its own,
// counts its calls in it (read and written through the SDK's typed keys), logs
// through the host, and at a prompt-assembly hook adds a prompt block. So the
// generated plugin exercises the declarations the host checks, and its test shows
// how to call an extension with state.
//
// Go plugins get their own module. Generated from an Exocortex checkout (Options.SDKDir),
// go.mod replaces the SDK module with the checkout and lists the checkout's own
// dependency versions, and go.sum is copied, so the plugin builds offline with
// exactly what the host was built with. Python plugins get a copy of the Python
// SDK beside main.py (sdk/python.Install) and a plugin.json that starts them with
// Debian's interpreter.
//
// The templates are text/template files embedded from templates/go and
// templates/python; Go output is gofmt'ed.
package scaffold

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"go/format"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"unicode"

	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/sdk/python"
)

//go:embed templates
var templates embed.FS

// SDKModule is the module path of the Exocortex SDK.
const SDKModule = "github.com/exocortex/exocortex"

// Languages the scaffold writes.
const (
	Go     = "go"
	Python = "python"
)

// Options describe the plugin to write.
type Options struct {
	// Name is the plugin's name: lower-case letters, digits, '-' and '_', starting
	// with a letter. It names the plugin directory (or binary), the extension
	// (with '-' as '_') and its state key (NAME_calls).
	Name string
	// Lang is Go or Python.
	Lang string
	// Hook is the hook the extension handles, by its snake_case name (e.g.
	// message_loop_prompts_after).
	Hook string
	// Order places the extension at its hook; pick one no other extension uses there.
	Order int
	// Module is the Go module path (default "exocortex.local/plugins/NAME").
	Module string
	// SDKDir is an Exocortex checkout to build the Go plugin against (a replace
	// directive, the checkout's dependency versions and go.sum). When empty,
	// go.mod requires SDKVersion and the developer runs `go mod tidy`.
	SDKDir string
	// SDKVersion is the SDK module version required when SDKDir is empty.
	SDKVersion string
	// Exocortex is the exocortex binary the Makefile's dev target runs
	// (EXOCORTEX ?= in it): the absolute path of the binary that wrote the
	// plugin, so `make dev` works where exocortex is not on PATH (default
	// "exocortex", looked up on PATH).
	Exocortex string
}

// HookNames lists the hooks an extension can be scaffolded for, in firing order.
func HookNames() []string {
	var out []string
	for _, in := range hooks.All() {
		out = append(out, in.Name)
	}
	return out
}

var validName = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// Generate writes the plugin into dir, which must not exist or be empty, and
// returns the files written (relative to dir, slash-separated), sorted.
func Generate(dir string, o Options) ([]string, error) {
	d, err := o.data()
	if err != nil {
		return nil, err
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("%s already exists and is not empty; choose another directory or remove it", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	files, err := render(o.Lang, d)
	if err != nil {
		return nil, err
	}
	if o.Lang == Go && o.SDKDir != "" {
		sum, err := os.ReadFile(filepath.Join(o.SDKDir, "go.sum"))
		if err != nil {
			return nil, fmt.Errorf("reading the checkout's go.sum: %w", err)
		}
		files["go.sum"] = sum
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	var written []string
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return nil, fmt.Errorf("writing %s: %w", p, err)
		}
		written = append(written, name)
	}
	if o.Lang == Python {
		if err := python.Install(dir); err != nil {
			return nil, err
		}
		written = append(written, python.Package+"/")
	}
	slices.Sort(written)
	return written, nil
}

// data is what the templates see.
type data struct {
	Name, Ext, Type, PyClass, Key, Title, Description string
	Hook, HookConst, Method, Request, Response        string
	StageText                                         string
	Prompt                                            bool
	Order                                             int
	Module, GoVersion, SDKVersion, Replace            string
	Requires                                          []Require
	Interpreter                                       string
	Exocortex                                         string
}

// Require is one requirement of a go.mod.
type Require struct{ Path, Version string }

func (o Options) data() (data, error) {
	if !validName.MatchString(o.Name) {
		return data{}, fmt.Errorf("plugin name %q: use lower-case letters, digits, '-' and '_', starting with a letter (e.g. my-notes)", o.Name)
	}
	if o.Lang != Go && o.Lang != Python {
		return data{}, fmt.Errorf("language %q: choose %s or %s", o.Lang, Go, Python)
	}
	info, ok := hooks.Lookup(o.Hook)
	if !ok {
		return data{}, fmt.Errorf("hook %q is not a hook; choose one of: %s", o.Hook, strings.Join(HookNames(), ", "))
	}
	ext := strings.ReplaceAll(o.Name, "-", "_")
	d := data{
		Name: o.Name, Ext: ext, Type: camel(ext), PyClass: camel(ext), Key: ext + "_calls",
		Title:     strings.ToUpper(strings.ReplaceAll(ext, "_", " ")),
		Hook:      info.Name,
		HookConst: info.Hook.String(),
		Method:    info.Method, Request: string(info.Request.Name()), Response: string(info.Response.Name()),
		Prompt: info.InjectsPrompt, Order: o.Order,
		StageText:   stageText(info),
		Module:      o.Module,
		GoVersion:   "1.26.0",
		SDKVersion:  o.SDKVersion,
		Interpreter: python.Interpreter,
		Exocortex:   o.Exocortex,
	}
	if d.Exocortex == "" {
		d.Exocortex = "exocortex"
	}
	d.Description = fmt.Sprintf("Counts its calls at %s", info.Name)
	if info.InjectsPrompt {
		d.Description += " and adds a " + d.Title + " block to the prompt"
	}
	d.Description += "."
	if d.Module == "" {
		d.Module = "exocortex.local/plugins/" + o.Name
	}
	if o.Lang == Go {
		if o.SDKDir != "" {
			abs, err := filepath.Abs(o.SDKDir)
			if err != nil {
				return data{}, err
			}
			mod, err := readGoMod(filepath.Join(abs, "go.mod"))
			if err != nil {
				return data{}, err
			}
			if mod.module != SDKModule {
				return data{}, fmt.Errorf("%s is module %q, not %s", abs, mod.module, SDKModule)
			}
			d.Replace, d.Requires, d.GoVersion = abs, mod.requires, mod.goVersion
			d.SDKVersion = "v0.0.0-00010101000000-000000000000"
		} else if d.SDKVersion == "" {
			return data{}, errors.New("no Exocortex checkout to build against and no SDK version to require; give one")
		}
	}
	return d, nil
}

func stageText(in hooks.Info) string {
	switch in.Stage {
	case hooks.PerSession:
		return "once per session"
	case hooks.PerMonologue:
		return "once per monologue"
	case hooks.PerMessage:
		return "for every message added to the history"
	case hooks.PerProcess:
		return "once per host process, at its start"
	case hooks.Periodic:
		return "once a minute in a long-running front end"
	}
	return "in every iteration"
}

// render executes the language's templates. A template "x.tmpl" becomes file
// "x"; "gitignore.tmpl" becomes ".gitignore".
func render(lang string, d data) (map[string][]byte, error) {
	root := path.Join("templates", lang)
	entries, err := fs.ReadDir(templates, root)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range entries {
		src := path.Join(root, e.Name())
		t, err := template.ParseFS(templates, src)
		if err != nil {
			return nil, fmt.Errorf("scaffold template %s: %w", src, err)
		}
		var b bytes.Buffer
		if err := t.Execute(&b, d); err != nil {
			return nil, fmt.Errorf("scaffold template %s: %w", src, err)
		}
		name := strings.TrimSuffix(e.Name(), ".tmpl")
		if name == "gitignore" {
			name = ".gitignore"
		}
		body := b.Bytes()
		if strings.HasSuffix(name, ".go") {
			if body, err = format.Source(body); err != nil {
				return nil, fmt.Errorf("scaffold template %s renders Go that does not parse: %w\n%s", src, err, b.Bytes())
			}
		}
		out[name] = body
	}
	return out, nil
}

type goMod struct {
	module, goVersion string
	requires          []Require
}

// readGoMod reads the module path, go version and requirements of a go.mod (the
// simple forms a go.mod written by the go command has).
func readGoMod(file string) (goMod, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return goMod{}, fmt.Errorf("reading the checkout's go.mod: %w", err)
	}
	var m goMod
	inBlock := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case inBlock && f[0] == ")":
			inBlock = false
		case inBlock && len(f) >= 2:
			m.requires = append(m.requires, Require{f[0], f[1]})
		case f[0] == "module" && len(f) == 2:
			m.module = strings.Trim(f[1], `"`)
		case f[0] == "go" && len(f) == 2:
			m.goVersion = f[1]
		case f[0] == "require" && len(f) == 2 && f[1] == "(":
			inBlock = true
		case f[0] == "require" && len(f) == 3:
			m.requires = append(m.requires, Require{f[1], f[2]})
		}
	}
	if m.module == "" {
		return goMod{}, fmt.Errorf("%s has no module line", file)
	}
	if m.goVersion == "" {
		m.goVersion = "1.26.0"
	}
	return m, nil
}

// FindCheckout looks for an Exocortex checkout in dir and its parents: a go.mod
// whose module is SDKModule. It returns "" when there is none.
func FindCheckout(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if m, err := readGoMod(filepath.Join(d, "go.mod")); err == nil && m.module == SDKModule {
			return d
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

func camel(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if r == '_' || r == '-' {
			up = true
			continue
		}
		if up {
			b.WriteRune(unicode.ToUpper(r))
			up = false
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
