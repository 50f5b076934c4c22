// Command unordered is a test plugin whose extension sets no order (Spec.Order
// is 0), as an author who forgot it would write it: the lint reports EXO044.
package main

import (
	"context"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type first struct{}

func (e first) Spec() sdk.Spec {
	return sdk.Spec{Name: "unordered_first", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Description: "Declares no order."}
}

func (first) MessageLoopEnd(context.Context, *sdk.Call, *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	return nil, nil
}

func main() {
	sdk.Serve(sdk.Plugin{Name: "unordered", Version: "test", Extensions: []sdk.Extension{first{}}})
}
