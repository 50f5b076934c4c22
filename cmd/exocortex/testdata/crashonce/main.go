// Command crashonce is a test plugin that dies in the middle of its first hook
// call, to show that the turn survives it and that the host restarts it.
// EXOCORTEX_TEST_CRASH_MARKER names a file: while it does not exist, the plugin
// creates it and exits inside message_loop_end.
package main

import (
	"context"
	"os"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type crashOnce struct{}

func (e crashOnce) Spec() sdk.Spec {
	return sdk.Spec{Name: "crash_once", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 900, Description: "Exits mid-hook on its first call."}
}

func (crashOnce) MessageLoopEnd(context.Context, *sdk.Call, *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	marker := os.Getenv("EXOCORTEX_TEST_CRASH_MARKER")
	if _, err := os.Stat(marker); marker != "" && err != nil {
		_ = os.WriteFile(marker, nil, 0o644)
		os.Exit(7)
	}
	return nil, nil
}

func main() {
	sdk.Serve(sdk.Plugin{Name: "crashonce", Version: "test", Extensions: []sdk.Extension{crashOnce{}}})
}
