package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/scaffold/a0port"
)

func newPluginsPortCmd() *cobra.Command {
	var out, name string
	var asJSON bool
	installed := true
	cmd := &cobra.Command{
		Use:   "port A0_DIR --out DIR",
		Short: "Port an Agent Zero tree of extension files into a Python plugin, reporting every seam it hits",
		Long: `port reads an Agent Zero (v1.7) tree - a profile, a plugin (plugin.yaml) or usr/,
any extensions/python/<hook>/_NN_name.py below A0_DIR - and writes into --out a
Python plugin that serves each file unchanged through the SDK's compatibility layer
(exocortex.a0compat): the numeric prefix is the order, get_data/set_data are typed
state keys, entries added to loop_data.extras_temporary at a prompt hook become
prompt blocks. Files at hooks Exocortex does not have yet are reported ("no hook
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
file whose hook and order one of their extensions already has is reported as seam
4, with a free prefix to use: the host would refuse to wire it.`,
		Example: "  exocortex plugins port ~/agent-zero/usr --out ./a0-usr",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("no --out: name the directory to write the plugin into")
			}
			r, err := a0port.Port(cmd.Context(), args[0], out, name)
			if err != nil {
				return err
			}
			if installed {
				ins, err := installedExtensions(cmd.Context())
				if err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "exocortex: the ported files' orders were not checked against the installed plugins: %v\n", err)
				} else if len(r.CheckInstalled(ins)) > 0 {
					if err := r.WriteReport(out); err != nil {
						return err
					}
				}
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
	cmd.Flags().BoolVar(&installed, "installed", true, "check the ported files' orders against the plugins installed here (starts them once)")
	return cmd
}

// installedExtensions starts the plugins installed here (as lint does) and
// returns their extensions' hooks and orders.
func installedExtensions(ctx context.Context) ([]a0port.Installed, error) {
	a, err := loadApp()
	if err != nil {
		return nil, err
	}
	defer a.close()
	opts, err := a.hostOptions()
	if err != nil {
		return nil, err
	}
	plugins, _, err := lintPlugins(ctx, opts)
	if err != nil {
		return nil, err
	}
	var out []a0port.Installed
	for _, p := range plugins {
		for _, e := range p.Manifest.GetExtensions() {
			out = append(out, a0port.Installed{Plugin: p.Name, Extension: e.GetName(), Hook: hooks.Name(e.GetHook()), Order: int(e.GetOrder())})
		}
	}
	return out, nil
}
