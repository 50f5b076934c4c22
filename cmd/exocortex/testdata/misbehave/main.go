// Command misbehave is a test plugin whose extensions break the protocol's
// rules in the ways a plugin author meets first: "mutator" changes its
// request instead of answering with the change, and "peeker" reads a state key
// its Spec does not list. The host skips both calls; `run -p` must say so on
// stderr.
package main

import (
	"context"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type mutator struct{}

func (e mutator) Spec() sdk.Spec {
	return sdk.Spec{Name: "misbehave_mutator", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 910, Description: "Changes its request's reply."}
}

func (mutator) MessageLoopEnd(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	req.Reply = "rewritten by the plugin"
	return nil, nil
}

type peeker struct{}

func (e peeker) Spec() sdk.Spec {
	return sdk.Spec{Name: "misbehave_peeker", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 911, Description: "Reads failure_tracker without declaring it."}
}

func (peeker) MessageLoopEnd(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	sdk.KeyOf[*exocortexv1.FailureTracker]().Get(c)
	return nil, nil
}

func main() {
	sdk.Serve(sdk.Plugin{Name: "misbehave", Version: "test", Extensions: []sdk.Extension{mutator{}, peeker{}}})
}
