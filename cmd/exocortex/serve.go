package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/extensions/builtin"
	"github.com/exocortex/exocortex/sdk"
)

// newPluginServeCmd is how the host starts a built-in plugin: this binary,
// re-executed as a plugin server speaking the same protocol as any other plugin.
func newPluginServeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:    "plugin",
		Short:  "Plugin plumbing used by the host",
		Hidden: true,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "serve NAME",
		Short: "Serve a built-in plugin over the plugin protocol (started by the host, not by hand)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			p, ok := builtin.Plugins()[args[0]]
			if !ok {
				return fmt.Errorf("no built-in plugin %q (have: %s)", args[0], strings.Join(builtin.Names(), ", "))
			}
			sdk.Serve(p)
			return nil
		},
	})
	return cmd
}
