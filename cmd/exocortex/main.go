// Command exocortex is the Exocortex extension host: an agent loop for local LLMs
// whose hooks run in out-of-process plugins, with typed shared state and a memory
// store. Run it without arguments for an operator session; see --help for the rest.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/exocortex/exocortex/sandbox"
	"github.com/spf13/cobra"
)

// softMemoryLimit keeps the garbage collector working before the heap passes
// 2 GiB: rebuilding a 1M-record memory store from its journal peaks at 3 GiB
// without it and stays near 2 GiB with it (docs/perf/memory.md). GOMEMLIMIT, when
// set, wins.
const softMemoryLimit = 1900 << 20

func main() {
	// Started as the sandbox launcher for a tool's command: set the sandbox up,
	// run the command, never return (sandbox package).
	sandbox.Launch()
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := hostCPUProfile()
	err := newRootCmd().ExecuteContext(ctx)
	stopProfile()
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "exocortex:", err)
		os.Exit(exitCode(err))
	}
}

// HostCPUProfileEnv names a directory: a command of this binary other than a
// built-in plugin's server (which has PluginCPUProfileEnv) run while it is set
// writes a CPU profile of its life to DIR/host-PID.pprof and its CPU time to
// DIR/host-PID.cpu. A diagnostic (docs/perf/startup.md): with
// PluginCPUProfileEnv too, `exocortex run -p` profiles the whole process tree.
const HostCPUProfileEnv = "EXOCORTEX_CPUPROFILE"

// hostCPUProfile starts the host's CPU profile when HostCPUProfileEnv is set;
// the returned function ends it (a failure to start is said on stderr).
func hostCPUProfile() func() {
	dir := os.Getenv(HostCPUProfileEnv)
	if dir == "" || (len(os.Args) > 2 && os.Args[1] == "plugin" && os.Args[2] == "serve") {
		return func() {}
	}
	stop, err := startCPUProfile(fmt.Sprintf("%s/host-%d.pprof", dir, os.Getpid()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "exocortex:", err)
		return func() {}
	}
	return func() {
		if err := stop(); err != nil {
			fmt.Fprintln(os.Stderr, "exocortex:", err)
		}
	}
}

// newRootCmd assembles the command tree. Each subcommand lives in its own file.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "exocortex",
		Short:         "An extension host for local LLM agents",
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version (and -v): the commit and the Go version (version.go).
		Version: versionText(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(
		// Subcommands register here, one line each.
		newRunCmd(),
		newPluginsCmd(),
		newPluginServeCmd(),
		newHTTPServeCmd(),
		newMemoryCmd(),
		newLintCmd(),
		newDevCmd(),
		newTrustCmd(),
		newSleepCmd(),
		newSecretsCmd(),
		newConfigCmd(),
		newReplayCmd(),
		newMCPCmd(),
		newHooksCmd(),
	)
	// Without a subcommand: the operator's terminal session (session.go).
	setSessionCmd(root)
	return root
}

// exitError carries a process exit status through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}
