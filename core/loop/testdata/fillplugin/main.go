// Command fillplugin serves the test of the prompt size the host tells
// extensions at message_loop_prompts_after (prompt_tokens), with two
// extensions there:
//
//	big (order 1): a block of FILL_BYTES bytes, the same at every iteration
//	  (so from the second on it is already pinned in the history, unchanged);
//	fill (order 50): reads the prompt so far and adds a block (kept over
//	  BIG when the blocks are cut: priority 100) "FILL
//	  prompt_tokens=N num_ctx=M" with what the host told it.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type big struct{}

func (e big) Spec() sdk.Spec {
	return sdk.Spec{Name: "big", Hooks: []sdk.Hook{sdk.MessageLoopPromptsAfter(e)}, Order: 1, InjectsPrompt: true, EffectsDeclared: true}
}

func (big) MessageLoopPromptsAfter(context.Context, *sdk.Call, *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	n, _ := strconv.Atoi(os.Getenv("FILL_BYTES"))
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: []*exocortexv1.PromptBlock{{
		Title: "BIG", Content: strings.Repeat("lorem ipsum dolor sit amet ", n/27+1)[:n]}}}, nil
}

type fill struct{}

func (e fill) Spec() sdk.Spec {
	return sdk.Spec{Name: "fill", Hooks: []sdk.Hook{sdk.MessageLoopPromptsAfter(e)}, Order: 50, InjectsPrompt: true, ReadsPrompt: true, EffectsDeclared: true}
}

func (fill) MessageLoopPromptsAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: []*exocortexv1.PromptBlock{{
		Title: "FILL", Priority: 100, Content: fmt.Sprintf("prompt_tokens=%d num_ctx=%d", req.GetPromptTokens(), req.GetNumCtx())}}}, nil
}

func main() {
	sdk.Serve(sdk.Plugin{Name: "fill", Version: "test", Extensions: []sdk.Extension{big{}, fill{}}})
}
