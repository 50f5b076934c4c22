// Command lintplugin is a test plugin for `exocortex lint`. It takes its name from
// its file name, so one build copied under several names is several plugins: the
// digits in the name are its extension's order, and a name starting with "gate"
// declares an extension that sets a flag of its own (lint_test_gate) that nothing
// resets. (A built-in flag would not do: the built-ins reset theirs.)
package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type ext struct {
	name  string
	order int
	gate  bool
}

func (e ext) Spec() sdk.Spec {
	s := sdk.Spec{Name: e.name, Hooks: []sdk.Hook{sdk.MonologueEnd(e)}, Order: e.order, Description: "A test extension that does nothing."}
	if e.gate {
		s.Writes = []sdk.KeyRef{gateKey()}
	}
	return s
}

// gateKey is the plugin's own flag key.
func gateKey() sdk.Key[*exocortexv1.ActionGate] {
	return sdk.NewKey[*exocortexv1.ActionGate]("lint_test_gate", exocortexv1.Scope_SCOPE_SESSION, "A flag this test plugin sets and nobody resets.").AsFlag()
}

func (ext) MonologueEnd(context.Context, *sdk.Call, *exocortexv1.MonologueEndRequest) (*exocortexv1.MonologueEndResponse, error) {
	return nil, nil
}

func main() {
	name := filepath.Base(os.Args[0])
	order, _ := strconv.Atoi(strings.TrimLeft(name, "abcdefghijklmnopqrstuvwxyz_-"))
	sdk.Serve(sdk.Plugin{Name: name, Version: "test", Extensions: []sdk.Extension{
		ext{name: name + "_ext", order: order, gate: strings.HasPrefix(name, "gate")},
	}})
}
