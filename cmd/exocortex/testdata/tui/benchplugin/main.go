// Command benchplugin is the plugin of the terminal session's first-paint
// benchmark. One binary is copied under several names (bench01, bench02, …);
// each copy takes its extension and tool names, and its order, from the name
// it was started under, so ten copies wire together without collisions.
package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type note struct {
	name  string
	order int
}

var _ sdk.MonologueStartHook = note{}

func (n note) Spec() sdk.Spec {
	return sdk.Spec{Hooks: []sdk.Hook{sdk.MonologueStart(n)}, Name: n.name + "_note", Order: n.order, Description: "Does nothing at monologue_start; it is there to be loaded."}
}

func (note) MonologueStart(context.Context, *sdk.Call, *exocortexv1.MonologueStartRequest) (*exocortexv1.MonologueStartResponse, error) {
	return &exocortexv1.MonologueStartResponse{}, nil
}

func main() {
	name := strings.TrimSuffix(filepath.Base(os.Args[0]), filepath.Ext(os.Args[0]))
	n, _ := strconv.Atoi(strings.TrimLeft(name, "abcdefghijklmnopqrstuvwxyz_-"))
	sdk.Serve(sdk.Plugin{
		Name: name, Version: "1.0.0",
		Extensions: []sdk.Extension{note{name: name, order: 900 + n}},
		Tools: []sdk.Tool{{
			Name: name + "_echo", Description: "Echoes its arguments.",
			Parameters: `{"type":"object"}`,
			Run: func(_ context.Context, _ *sdk.Call, args json.RawMessage) (*exocortexv1.ToolResult, error) {
				return &exocortexv1.ToolResult{Content: string(args)}, nil
			},
		}},
	})
}
