// Command repeater is a test plugin whose extension returns the same prompt
// block twice for every request, as a port that appends to a list it already
// returned would: the loop reports it once.
package main

import (
	"context"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type twice struct{}

func (e twice) Spec() sdk.Spec {
	return sdk.Spec{Name: "repeat_notes", Hooks: []sdk.Hook{sdk.MessageLoopPromptsAfter(e)}, Order: 940, InjectsPrompt: true, Description: "Returns its note twice."}
}

func (twice) MessageLoopPromptsAfter(context.Context, *sdk.Call, *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	note := &exocortexv1.PromptBlock{Title: "notes", Content: "The operator prefers short answers."}
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: []*exocortexv1.PromptBlock{note, note}}, nil
}

func main() {
	sdk.Serve(sdk.Plugin{Name: "repeater", Version: "test", Extensions: []sdk.Extension{twice{}}})
}
