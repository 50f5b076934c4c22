// Command prompttextplugin is a fixture for a port's natural mistake (issue
// 12): extension loop_escalator recognises the core's repeat message by its
// opening text, as the seed's REPEAT_SIGNAL = "LOOP DETECTED." did, instead of
// msg.Signal == signals.Repeat. The text sits in the binary's string data,
// where the wiring lint finds it (EXO017). It is a program of its own so that
// the other fixtures' binaries do not hold the text.
package main

import (
	"context"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type loopEscalator struct{}

func (e loopEscalator) Spec() sdk.Spec {
	return sdk.Spec{Name: "loop_escalator", Hooks: []sdk.Hook{sdk.HistAddBefore(e)}, Order: 50, Description: "Escalates when the model repeats itself."}
}

func (loopEscalator) HistAddBefore(_ context.Context, c *sdk.Call, req *exocortexv1.HistAddBeforeRequest) (*exocortexv1.HistAddBeforeResponse, error) {
	// The mistake: the message's wording, not msg.Signal == signals.Repeat.
	if strings.HasPrefix(req.GetMessage().GetContent(), "Your reply is word for word the same") {
		c.Logger().Info("loop detected")
	}
	return nil, nil
}

func main() {
	sdk.Serve(sdk.Plugin{Name: "prompttext", Version: "test", Extensions: []sdk.Extension{loopEscalator{}}})
}
