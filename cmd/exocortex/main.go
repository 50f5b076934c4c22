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
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "exocortex:", err)
		os.Exit(exitCode(err))
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
