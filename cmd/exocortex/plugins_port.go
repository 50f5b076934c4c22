package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/core/wirecheck"
	"github.com/exocortex/exocortex/lint"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/scaffold/a0port"
	"github.com/exocortex/exocortex/wiring"
)

func newPluginsPortCmd() *cobra.Command {
	var out, name, interpreter string
	var asJSON bool
	installed := true
	cmd := &cobra.Command{
		Use:   "port A0_DIR --out DIR",
		Short: "Port an Agent Zero tree of extension files into a Python plugin, reporting every seam it hits",
		Long: `port reads an Agent Zero (v1.7) tree - a profile, a plugin (plugin.yaml), usr/ or
a whole checkout - and writes into --out a Python plugin that serves each extension
file unchanged through the SDK's compatibility layer (exocortex.a0compat), loaded by
Agent Zero's rules: any *.py of extensions/python/<hook>/ in name order (the numeric
prefix is the order; a file without one follows the file before it), of two files
with one name at one point the one of higher priority (the other is reported as
overridden), and the _functions/<module>/<qualname>/start|end points of @extensible
functions at the Exocortex hook with the same effect (handle_exception at
message_loop_exception, monologue, hist_add_*, __init__) or reported by name as
having no counterpart (the model getters, context reset). get_data/set_data are
typed state keys (a key no file of the tree writes is kept in the plugin: Agent
Zero's UI sets it), entries added to loop_data.extras_temporary at a prompt hook
become prompt blocks, prompt files are read whole ({{ include }}, {{if}}, .py
variables files), a plugin's own modules (plugins.<name>..., usr.plugins.<name>...)
are copied with it, and an exception at tool_execute_before stops the tool call.
The tree's identity and tool catalogue give way to Exocortex's (two would put two
agents in one prompt); the report names the choice and the tree's tools with no
counterpart. Files at hooks Exocortex does not have yet are reported ("no hook
point yet") and the rest is ported.

At the tool-side hooks the files get Agent Zero's data/ctx keyword arguments; a change
a response field carries takes effect, one it does not is named in the report.

It prints the porting report (also written to DIR/PORT.md and DIR/port.json): what
was ported as is, what the layer adapted, what needs a hand, what was not ported and
why, every seam of the seed's table the tree hits with file, line and fix, the imports
the plugin cannot load (third-party modules named as such, with how to install them in
the plugin's environment, apart from Agent Zero internals without a stand-in; lint
repeats them as EXO136 and EXO135), and the wiring of the ported tree: DIR/WIRING.md, made by the generator of the project's own
WIRING.md (hooks in firing order, each file's order, state keys and what of it
reaches the model; --json carries it as "wiring" and "wiring_md"). Copy DIR into
$EXOCORTEX_HOME/plugins/ to load it.

Unless --installed=false, the plugins installed here (the built-ins and those in
the plugin directories) are started once to read their manifests, and a ported
file whose hook and order one of their extensions already has is served at the
next free order (reported as seam 4). The host's wiring check is then run over
them and the ported plugin: what would keep the plugin out at start is the
report's first section, with the fix.

The plugin runs on --python (default config.yaml's python:, else /usr/bin/python3);
the tree is checked against that interpreter's version, and a file that needs a
newer Python (from typing import override: 3.12) is named with the version.`,
		Example: "  exocortex plugins port ~/agent-zero/usr --out ./a0-usr",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("no --out: name the directory to write the plugin into")
			}
			// The configuration, read once: the interpreter, the installed
			// plugins and the prompt overrides the host's check would use.
			a, aerr := loadApp()
			var dirs []string
			if aerr == nil {
				defer a.close()
				dirs = a.promptDirs(cwd())
				if interpreter == "" {
					interpreter = a.cfg.Python
				}
			}
			r, err := a0port.PortWith(cmd.Context(), args[0], out, name, a0port.Options{Python: interpreter})
			if err != nil {
				return err
			}
			var others []wiring.Plugin
			if installed {
				plugins, err := installedPlugins(cmd.Context(), a, aerr)
				if err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "exocortex: the ported plugin was not checked against the installed plugins: %v\n", err)
				} else {
					r.CheckInstalled(installedExtensions(plugins))
					others = plugins
				}
			}
			r.Refused = refusals(r, others, dirs)
			if err := r.WriteReport(out); err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			}
			r.WriteMarkdown(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the directory to write the plugin into (required)")
	cmd.Flags().StringVar(&name, "name", "", "the plugin's name (default a0-<base name of A0_DIR>)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "write the report as JSON")
	cmd.Flags().StringVar(&interpreter, "python", "", "the Python interpreter the plugin runs on, written to its plugin.json; the tree is checked against its version (default: config.yaml's python:, else /usr/bin/python3)")
	cmd.Flags().BoolVar(&installed, "installed", true, "check the ported files' orders against the plugins installed here (starts them once)")
	return cmd
}

// installedPlugins starts the plugins installed here (as lint does) and
// returns them with their manifests.
func installedPlugins(ctx context.Context, a *app, loadErr error) ([]wiring.Plugin, error) {
	if loadErr != nil {
		return nil, loadErr
	}
	opts, err := a.hostOptions()
	if err != nil {
		return nil, err
	}
	plugins, _, err := lintPlugins(ctx, opts)
	return plugins, err
}

// refusals runs the host's wiring check over the installed plugins (others)
// and the ported one as the port wrote it, and returns the errors that name
// the ported plugin or one of its extensions, each with its fix: what would
// keep it out at start. dirs are the prompt override directories the host
// would load (app.promptDirs).
func refusals(r *a0port.Report, others []wiring.Plugin, dirs []string) []string {
	ps := []wiring.Plugin{{Name: r.Plugin, Path: r.Out, Manifest: r.Manifest()}}
	for _, p := range others {
		if p.Name != r.Plugin {
			ps = append(ps, p)
		}
	}
	own := map[string]bool{}
	for _, e := range ps[0].Manifest.GetExtensions() {
		own[e.GetName()] = true
	}
	var out []string
	for _, f := range lint.HostCheck(prompts.Embedded(), dirs...)(wirecheck.Input{Plugins: ps}) {
		if !f.Error || (f.Plugin != r.Plugin && !own[f.Extension] && !strings.Contains(f.Message, "plugin "+r.Plugin)) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s; fix: %s", f.Code, f.Message, f.Fix))
	}
	return out
}

// installedExtensions returns the installed plugins' extensions' hooks and
// orders.
func installedExtensions(plugins []wiring.Plugin) []a0port.Installed {
	var out []a0port.Installed
	for _, p := range plugins {
		for _, e := range p.Manifest.GetExtensions() {
			out = append(out, a0port.Installed{Plugin: p.Name, Extension: e.GetName(), Hook: hooks.Name(e.GetHook()), Order: int(e.GetOrder())})
		}
	}
	return out
}
