// Command slowstart is a test plugin that does its set-up before serving, as a
// plugin loading a model or an index at start would: it takes 1.5 s to hand
// shake, and every run waits for it. The host must say so.
package main

import (
	"context"
	"time"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type idle struct{}

func (e idle) Spec() sdk.Spec {
	return sdk.Spec{Name: "slow_idle", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 930, Description: "Does nothing, after a slow start."}
}

func (idle) MessageLoopEnd(context.Context, *sdk.Call, *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	return nil, nil
}

func main() {
	time.Sleep(1500 * time.Millisecond)
	sdk.Serve(sdk.Plugin{Name: "slowstart", Version: "test", Extensions: []sdk.Extension{idle{}}})
}
