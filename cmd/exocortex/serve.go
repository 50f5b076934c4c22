package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/extensions/builtin"
	"github.com/exocortex/exocortex/internal/procstat"
	"github.com/exocortex/exocortex/sdk"
)

// PluginCPUProfileEnv names a directory: a built-in plugin served while it is
// set writes a CPU profile of its whole life (start to Close) to
// DIR/NAME-PID.pprof, for `go tool pprof`, and its CPU time at Close to
// DIR/NAME-PID.cpu. A diagnostic (docs/perf/memory.md,
// "Where a `run -p` at 100k spends its time"); the host passes its environment
// to the plugins it starts, so setting it for `exocortex run` profiles every
// plugin process (the built-ins served in the host's process, the default,
// are in the host's own profile: EXOCORTEX_CPUPROFILE).
const PluginCPUProfileEnv = "EXOCORTEX_PLUGIN_CPUPROFILE"

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
		Long: `Serve a built-in plugin over the plugin protocol. The host starts it; it is not
meant to be run by hand.

With ` + PluginCPUProfileEnv + `=DIR in the environment, the plugin writes a CPU
profile of its whole life to DIR/NAME-PID.pprof (read it with go tool pprof),
and its CPU time (user and system, ms) at Close to DIR/NAME-PID.cpu.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, ok := builtin.Plugin(cmd.Context(), args[0], mcpSecrets(config.Home, takeMCPEnvSecrets()))
			if !ok {
				return fmt.Errorf("no built-in plugin %q (have: %s)", args[0], strings.Join(builtin.Names(), ", "))
			}
			if dir := os.Getenv(PluginCPUProfileEnv); dir != "" {
				stop, err := startCPUProfile(filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", p.Name, os.Getpid())))
				if err != nil {
					return err
				}
				closePlugin := p.Close
				p.Close = func() error {
					var err error
					if closePlugin != nil {
						err = closePlugin()
					}
					return errors.Join(err, stop())
				}
			}
			sdk.Serve(p)
			return nil
		},
	})
	return cmd
}

// startCPUProfile starts a CPU profile written to path; stop ends it and
// closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating the CPU profile %s (%s): %w", path, PluginCPUProfileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting the CPU profile %s: %w", path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("writing the CPU profile %s: %w", path, err)
		}
		// The process's CPU time so far, beside the profile (which samples
		// only part of it): user and system, in milliseconds.
		if user, sys, ok := procstat.CPU(); ok {
			cpu := fmt.Sprintf("user_ms %d\nsys_ms %d\n", user.Milliseconds(), sys.Milliseconds())
			_ = os.WriteFile(strings.TrimSuffix(path, ".pprof")+".cpu", []byte(cpu), 0o644)
		}
		return nil
	}, nil
}
