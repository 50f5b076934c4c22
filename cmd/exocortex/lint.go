package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"
	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/state"
	"github.com/exocortex/exocortex/extensions/cmdhooks"
	"github.com/exocortex/exocortex/lint"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/scaffold/a0port"
	"github.com/exocortex/exocortex/sdk/python/pyimport"
	"github.com/exocortex/exocortex/signals"
	"github.com/exocortex/exocortex/toolsettings"
	"github.com/exocortex/exocortex/wiring"
)

// lintFlags are the flags of `exocortex lint`.
type lintFlags struct {
	json, write, builtinsOnly bool
	dirs                      []string
	wiring                    string
	wiringSet                 bool
}

func newLintCmd() *cobra.Command {
	var f lintFlags
	cmd := &cobra.Command{
		Use:   "lint",
		Short: "Check the plugins' wiring and write WIRING.md",
		Long: `Lint loads every plugin the host would load (the same discovery, the same
start-up and manifest), the prompt files and their signals, the state keys, tools
and data files they declare, and the files in and around the plugin directories,
and reports every place where the wiring is broken or fragile. Each finding has a
stable code (see docs/lint-codes.md), a severity, where it is, and how to fix it.

Python plugins' files are read for imports the plugin cannot load: third-party
modules not installed where its interpreter finds them (EXO136) and Agent Zero
modules without a stand-in (EXO135), at file:line; for a plugin written by
"exocortex plugins port" these are the porting report's own import findings.

WIRING.md is the generated wiring diagram. --write writes it; without --write, a
WIRING.md at --wiring (default ./WIRING.md) is compared with what --write would
write, and a difference is an error.

Exit status: 0 without errors (warnings and infos allowed), 1 on errors, 2 on a
usage error.`,
		Example: `  exocortex lint
  exocortex lint --json
  exocortex lint --builtins-only --write     # the repository's WIRING.md
  exocortex lint --dir ./plugins --dir ~/more-plugins`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &exitError{code: 2, err: fmt.Errorf("lint takes no arguments (got %q); see exocortex lint --help", args)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.wiringSet = cmd.Flags().Changed("wiring")
			if f.builtinsOnly && len(f.dirs) > 0 {
				return &exitError{code: 2, err: errors.New("--builtins-only and --dir exclude each other")}
			}
			errs, err := runLint(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
			if err != nil {
				return err
			}
			if errs > 0 {
				return &exitError{code: 1, err: fmt.Errorf("lint found %d error(s)", errs)}
			}
			return nil
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: 2, err: fmt.Errorf("%w (see exocortex lint --help)", err)}
	})
	fl := cmd.Flags()
	fl.BoolVar(&f.json, "json", false, "write the findings as JSON")
	fl.BoolVar(&f.write, "write", false, "write WIRING.md (to --wiring) from what was found")
	fl.StringArrayVar(&f.dirs, "dir", nil, "plugin directory to lint instead of the project, user and configured ones (repeatable)")
	fl.BoolVar(&f.builtinsOnly, "builtins-only", false, "lint only the plugins built into this binary, with the shipped defaults (no plugin directory, no configuration, no prompt overrides)")
	fl.StringVar(&f.wiring, "wiring", "WIRING.md", "where WIRING.md is checked and written")
	return cmd
}

// runLint lints and reports, and returns the number of errors found.
func runLint(ctx context.Context, out, errOut io.Writer, f lintFlags) (int, error) {
	a, err := loadApp()
	if err != nil {
		return 0, err
	}
	defer a.close()
	if f.builtinsOnly {
		// The shipped defaults: no operator's command hooks either.
		a.cfg.CommandHooks.Off = true
	}
	opts, err := a.hostOptions()
	if err != nil {
		return 0, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return 0, fmt.Errorf("finding the working directory: %w", err)
	}
	var overrides []string
	switch {
	case f.builtinsOnly:
		opts.Dirs, opts.Disabled, opts.Enabled, opts.Checksums = nil, nil, nil, nil
	default:
		if len(f.dirs) > 0 {
			opts.Dirs = nil
			for _, d := range f.dirs {
				abs, err := filepath.Abs(d)
				if err != nil {
					return 0, fmt.Errorf("plugin directory %s: %w", d, err)
				}
				opts.Dirs = append(opts.Dirs, discover.Dir{Path: abs, Source: discover.Extra})
			}
		}
		if overrides, err = prompts.OverrideDirs(wd); err != nil {
			return 0, err
		}
	}

	in, err := lintInput(ctx, opts, overrides, []string{
		filepath.Join(a.home, "extensions"),
		filepath.Join(wd, ".exocortex", "extensions"),
		filepath.Join(wd, "extensions"),
	})
	if err != nil {
		return 0, err
	}

	in.WiringPath = f.wiring
	if f.write {
		doc := wiring.Render(&in.Model)
		if err := writeFileAtomic(f.wiring, doc); err != nil {
			return 0, err
		}
		in.Wiring = doc
		fmt.Fprintf(errOut, "wrote %s\n", f.wiring)
	} else {
		doc, err := os.ReadFile(f.wiring)
		switch {
		case err == nil:
			in.Wiring = doc
		case errors.Is(err, fs.ErrNotExist) && !f.wiringSet:
			in.WiringPath = "" // nothing to compare with, and nobody asked
		case errors.Is(err, fs.ErrNotExist):
			in.Wiring = nil
		default:
			return 0, fmt.Errorf("reading %s: %w", f.wiring, err)
		}
	}

	if !f.builtinsOnly {
		in.CommandHooks = hookProblems(a.cfg.CommandHooksSettings(a.home, wd), wd)
	}
	findings := lint.Check(in)
	if f.json {
		err = lint.WriteJSON(out, findings)
	} else {
		err = lint.WriteText(out, findings)
	}
	errs, _, _ := lint.Count(findings)
	return errs, err
}

// lintInput loads everything the lint looks at: the plugins through the host,
// the prompts (built-in and overrides), the generated signals, the built-in
// state keys, and the files in and around the plugin directories.
func lintInput(ctx context.Context, opts host.Options, promptDirs, around []string) (lint.Input, error) {
	plugins, skipped, err := lintPlugins(ctx, opts)
	if err != nil {
		return lint.Input{}, err
	}
	ps, err := lint.LoadPrompts(prompts.Embedded(), promptDirs...)
	if err != nil {
		return lint.Input{}, err
	}
	// A plugin file that cannot be read is left out of the search; the rest
	// still gives findings.
	texts, _ := lint.FindPromptText(plugins, ps)
	in := lint.Input{
		Model: wiring.Model{
			Plugins:     plugins,
			BuiltinKeys: state.Builtin(),
			Prompts:     ps,
			Signals:     signals.All(),
			Disabled:    opts.Disabled,
			Enabled:     opts.Enabled,
			Services:    wiring.DefaultServices(),
		},
		PluginDirs: opts.Dirs,
		Around:     around,
		Problems:   discover.Scan(opts.Dirs).Problems,
		Skipped:    skipped,
		PromptText: texts,
	}
	var roots, owned []string
	for _, d := range opts.Dirs {
		roots = append(roots, d.Path)
	}
	for _, p := range plugins {
		owned = append(owned, p.Path)
	}
	// A tree that cannot be read in part still gives findings for the rest; the
	// unreadable part is left out, as the loader leaves it out.
	in.Tree, _ = lint.ScanTree(append(roots, around...), owned)
	if in.Ported, in.Imports, err = portedPlugins(ctx, plugins); err != nil {
		return lint.Input{}, err
	}
	in.Imports = append(in.Imports, pythonImports(ctx, plugins)...)
	in.SecretReads = secretReads(plugins)
	return in, nil
}

// portedPlugins reads what `exocortex plugins port` left in each plugin it wrote
// (a port.json beside the plugin's files): the seams of its Agent Zero files, read
// again as they are now, and the keys they used at run time against those found
// statically.
func portedPlugins(ctx context.Context, plugins []wiring.Plugin) ([]lint.Ported, []lint.PluginImports, error) {
	var out []lint.Ported
	var imports []lint.PluginImports
	for _, p := range plugins {
		if p.Path == "" || !a0port.IsPorted(p.Path) {
			continue
		}
		c, err := a0port.Lint(ctx, p.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("plugin %s: %w", p.Name, err)
		}
		imports = append(imports, lint.PluginImports{Plugin: p.Name, Ported: true, Problems: c.Imports, Unchecked: c.ImportCheck})
		lp := lint.Ported{Plugin: p.Name}
		for _, tk := range c.Tasks {
			lp.Tasks = append(lp.Tasks, lint.PortTask{File: tk.File, Line: tk.Line, Field: tk.Field, Key: tk.Key, Note: tk.TaskNote()})
		}
		for _, f := range c.Findings {
			lp.Seams = append(lp.Seams, lint.PortSeam{Seam: f.Seam, File: f.File, Line: f.Line, What: f.What, Fix: f.Fix})
		}
		for _, k := range c.KeyDiffs {
			lp.Keys = append(lp.Keys, lint.PortKeyDiff{File: k.File, Field: k.Field, Key: k.Key, Access: k.Access, Observed: k.Observed})
		}
		out = append(out, lp)
	}
	return out, imports, nil
}

// pythonImports finds, in every Python plugin that `plugins port` did not write
// (those get theirs from the port's own check, above), the imports its files
// cannot load: the plugin's .py files, its copy of the SDK left out, resolved
// against its directory and its interpreter. A plugin whose files cannot be
// read, or whose interpreter cannot be asked, gives what could be found, and
// the lint says (EXO138) that the third-party imports went unchecked.
func pythonImports(ctx context.Context, plugins []wiring.Plugin) []lint.PluginImports {
	var out []lint.PluginImports
	for _, p := range plugins {
		if p.Path == "" || a0port.IsPorted(p.Path) {
			continue
		}
		interp, ok := pythonCommand(p.Path)
		if !ok {
			continue
		}
		var sources []pyimport.Source
		eachPythonFile(p.Path, func(rel string, code []byte) {
			sources = append(sources, pyimport.Source{File: rel, Code: code})
		})
		probs, err := pyimport.Env{Dir: p.Path, Interpreter: interp}.Check(ctx, sources)
		pi := lint.PluginImports{Plugin: p.Name, Problems: probs}
		if err != nil {
			pi.Unchecked = err.Error()
		}
		if len(probs) > 0 || pi.Unchecked != "" {
			out = append(out, pi)
		}
	}
	return out
}

// pythonCommand reads the plugin.json of the plugin directory dir and returns
// its interpreter when the command starts Python.
func pythonCommand(dir string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "plugin.json"))
	if err != nil {
		return "", false
	}
	var m discover.Manifest
	if json.Unmarshal(b, &m) != nil || len(m.Command) == 0 || !strings.HasPrefix(filepath.Base(m.Command[0]), "python") {
		return "", false
	}
	return m.Command[0], true
}

// lintPlugins starts every plugin the host would start and returns each with
// its manifest, or with why it did not load, and what the loader skipped.
// Built-in plugins have no directory.
//
// It goes through host.Load, the host's own discovery and start-up without the
// wiring check, so it sees exactly what would run, and reports broken wiring as
// findings with codes and fixes rather than as the host's refusal.
func lintPlugins(ctx context.Context, opts host.Options) ([]wiring.Plugin, []discover.Skip, error) {
	h, err := host.Load(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	defer h.Close()
	priority := map[string]int{}
	for i, d := range opts.Dirs {
		priority[d.Path] = i
	}
	failed := map[string]*host.StartError{}
	for _, se := range h.FailedPlugins() {
		failed[se.Plugin] = se
	}
	var out []wiring.Plugin
	for _, p := range h.Plugins() {
		c := p.Candidate()
		wp := wiring.Plugin{Name: p.Name(), Path: c.Path, Manifest: p.Manifest(), StderrTail: p.StderrTail()}
		if c.Dir.Source == discover.Builtin {
			wp.Priority = len(opts.Dirs)
		} else {
			wp.Dir, wp.Priority = c.Dir.Path, priority[c.Dir.Path]
		}
		if se, ok := failed[p.Name()]; ok {
			wp.LoadError, wp.Manifest = se, nil
		}
		out = append(out, wp)
	}
	return out, h.Skipped(), nil
}

// writeFileAtomic replaces path with data through a temporary file in the same
// directory, so a reader never sees half a file.
func writeFileAtomic(path string, data []byte) error {
	if err := renameio.WriteFile(path, data, 0o644, renameio.WithStaticPermissions(0o644)); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// hookProblems are the command hooks' problems for the lint
// (docs/command-hooks.md): a hook that cannot run (EXO141), a configuration
// that cannot be used in full (EXO142).
func hookProblems(s toolsettings.CommandHooks, project string) []lint.CommandHookProblem {
	hooks, probs := cmdhooks.Load(s.Files)
	var out []lint.CommandHookProblem
	for _, h := range hooks {
		if p := cmdhooks.Check(h, project); p != "" {
			out = append(out, lint.CommandHookProblem{Extension: h.Ext(), File: h.File, CannotRun: true,
				Message: fmt.Sprintf("command hook %s (%s) cannot run: %s", h.Ext(), h.Where(), p),
				Fix:     "create the script or chmod +x it, or remove the entry"})
		}
	}
	for _, p := range probs {
		out = append(out, lint.CommandHookProblem{File: p.File, Message: p.String(), Fix: "fix the file (docs/command-hooks.md)"})
	}
	for _, f := range s.Skipped {
		out = append(out, lint.CommandHookProblem{File: f.Path, Message: fmt.Sprintf("the command hooks in %s are not run: the project is not trusted", f.Path),
			Fix: "exocortex trust " + project})
	}
	return out
}
