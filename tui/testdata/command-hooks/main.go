// Command command-hooks is a test plugin of package tui: the command-hook bridge
// (extensions/cmdhooks) serving the Claude Code hooks file named by
// EXO_TEST_HOOKS, as the built-in plugin command-hooks serves the
// operator's files.
package main

import (
	"os"

	"github.com/exocortex/exocortex/extensions/cmdhooks"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/toolsettings"
)

func main() {
	b := &cmdhooks.Bridge{Project: os.Getenv("EXOCORTEX_PROJECT"), Home: os.Getenv("EXOCORTEX_HOME")}
	b.Settings = b.Settings.WithDefaults()
	b.Hooks, b.Problems = cmdhooks.Load([]toolsettings.HookFile{{Path: os.Getenv("EXO_TEST_HOOKS"), Dialect: toolsettings.DialectClaude, Scope: "user"}})
	sdk.Serve(b.Plugin("1.0.0"))
}
