// Command replayprobe is the replay test's changed plugin: one extension at
// message_loop_prompts_before that adds a PROBE block to every request, the
// kind of change `exocortex replay` must report at every iteration.
package main

import (
	"context"
	"fmt"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type probe struct{}

func (e probe) Spec() sdk.Spec {
	return sdk.Spec{Name: "replay_probe", Hooks: []sdk.Hook{sdk.MessageLoopPromptsBefore(e)}, Order: 900, InjectsPrompt: true, Description: "Adds a PROBE block to every request."}
}

func (probe) MessageLoopPromptsBefore(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
	return &exocortexv1.MessageLoopPromptsBeforeResponse{PromptBlocks: []*exocortexv1.PromptBlock{{
		Title: "PROBE", Content: fmt.Sprintf("The probe was here at iteration %d.", req.GetIteration()),
	}}}, nil
}

func main() {
	sdk.Serve(sdk.Plugin{Name: "replayprobe", Version: "1.0.0", Extensions: []sdk.Extension{probe{}}})
}
