// Command batchplugin serves the extensions of the batching tests: neighbours
// that hand state to each other, one that injects a prompt block (which ends a
// batch), readers of the conversation with and without declaring it, a tool
// filter, one that kills its process once when BATCHPLUGIN_CRASH names a file
// that does not exist yet, and one that hangs once when BATCHPLUGIN_HANG does
// (or BATCHPLUGIN_HANG_HARD, then ignoring its context).
// Each extension writes what it saw into a session key, for the test to read.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type str = *wrapperspb.StringValue

func key(name string) sdk.Key[str] {
	return sdk.NewKey[str]("batch_"+name, exocortexv1.Scope_SCOPE_SESSION, "what the batch test extension "+name+" saw")
}

func note() sdk.Key[str] { return key("note") }

// sawNote records the note as the extension saw it.
func sawNote(c *sdk.Call, into string) {
	v := "nothing"
	if n, ok := note().Get(c); ok {
		v = n.GetValue()
	}
	key(into).Set(c, wrapperspb.String(v))
}

type writeNote struct{}

func (e writeNote) Spec() sdk.Spec {
	return sdk.Spec{Name: "b_write", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 1, Writes: []sdk.KeyRef{note()}}
}
func (writeNote) MessageLoopEnd(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	note().Set(c, wrapperspb.String(fmt.Sprintf("iteration %d", req.GetIteration())))
	return nil, nil
}

type readNote struct{ name, into string }

func (e readNote) Spec() sdk.Spec {
	order := map[string]int{"b_read": 2, "b_read_after_reset": 4}[e.name]
	return sdk.Spec{Name: e.name, Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: order, Reads: []sdk.KeyRef{note()}, Writes: []sdk.KeyRef{key(e.into)}}
}
func (e readNote) MessageLoopEnd(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	sawNote(c, e.into)
	return nil, nil
}

type resetNote struct{}

func (e resetNote) Spec() sdk.Spec {
	return sdk.Spec{Name: "b_reset", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 3, Writes: []sdk.KeyRef{note()}, Resets: []sdk.KeyRef{note()}}
}
func (resetNote) MessageLoopEnd(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	note().Reset(c)
	return nil, nil
}

type failing struct{}

func (e failing) Spec() sdk.Spec {
	return sdk.Spec{Name: "b_fail", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 5}
}
func (failing) MessageLoopEnd(context.Context, *sdk.Call, *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	return nil, fmt.Errorf("b_fail fails on purpose")
}

type lastOfEnd struct{}

func (e lastOfEnd) Spec() sdk.Spec {
	return sdk.Spec{Name: "b_last", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 6, Writes: []sdk.KeyRef{key("last")}}
}
func (lastOfEnd) MessageLoopEnd(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	key("last").Set(c, wrapperspb.String(fmt.Sprintf("ran at iteration %d", req.GetIteration())))
	return nil, nil
}

type inject struct{}

func (e inject) Spec() sdk.Spec {
	return sdk.Spec{Name: "p_inject", Hooks: []sdk.Hook{sdk.MessageLoopPromptsAfter(e)}, Order: 1, InjectsPrompt: true}
}
func (inject) MessageLoopPromptsAfter(context.Context, *sdk.Call, *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: []*exocortexv1.PromptBlock{{Title: "INJECTED", Content: "from p_inject"}}}, nil
}

// count records the extras and the history it received; p_count declares
// reading the prompt so far, p_history the conversation.
type count struct {
	name            string
	order           int
	history, prompt bool
}

func (e count) Spec() sdk.Spec {
	return sdk.Spec{Name: e.name, Hooks: []sdk.Hook{sdk.MessageLoopPromptsAfter(e)}, Order: e.order, ReadsHistory: e.history, ReadsPrompt: e.prompt, Writes: []sdk.KeyRef{key(e.name)}}
}
func (e count) MessageLoopPromptsAfter(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	key(e.name).Set(c, wrapperspb.String(fmt.Sprintf("extras=%d history=%d recent=%d", len(req.GetExtras()), len(req.GetHistory()),
		len(c.Context().GetInteractionHistory().GetRecentMessages()))))
	return nil, nil
}

type onlyX struct{}

func (e onlyX) Spec() sdk.Spec {
	return sdk.Spec{Name: "t_only_x", Hooks: []sdk.Hook{sdk.ToolExecuteAfter(e)}, Order: 1, ForTools: []string{"x"}, Reads: []sdk.KeyRef{key("tools")}, Writes: []sdk.KeyRef{key("tools")}}
}
func (onlyX) ToolExecuteAfter(_ context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	seen, _ := key("tools").Get(c)
	key("tools").Set(c, wrapperspb.String(strings.TrimSpace(seen.GetValue()+" "+req.GetToolCall().GetName())))
	return nil, nil
}

type crash struct{}

func (e crash) Spec() sdk.Spec {
	return sdk.Spec{Name: "s_crash", Hooks: []sdk.Hook{sdk.MessageLoopStart(e)}, Order: 1}
}
func (crash) MessageLoopStart(context.Context, *sdk.Call, *exocortexv1.MessageLoopStartRequest) (*exocortexv1.MessageLoopStartResponse, error) {
	// Once: the marker file the variable names is made before dying.
	if f := os.Getenv("BATCHPLUGIN_CRASH"); f != "" {
		if _, err := os.Stat(f); err != nil {
			_ = os.WriteFile(f, nil, 0o644)
			os.Exit(3)
		}
	}
	return nil, nil
}

type afterCrash struct{}

func (e afterCrash) Spec() sdk.Spec {
	return sdk.Spec{Name: "s_after_crash", Hooks: []sdk.Hook{sdk.MessageLoopStart(e)}, Order: 2, Writes: []sdk.KeyRef{key("start")}}
}
func (afterCrash) MessageLoopStart(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopStartRequest) (*exocortexv1.MessageLoopStartResponse, error) {
	key("start").Set(c, wrapperspb.String(fmt.Sprintf("ran at iteration %d", req.GetIteration())))
	return nil, nil
}

// hang sleeps for a minute once when BATCHPLUGIN_HANG names a file that does
// not exist yet, or until its context ends; its deadline is half a second.
type hang struct{}

func (e hang) Spec() sdk.Spec {
	return sdk.Spec{Name: "s_hang", Hooks: []sdk.Hook{sdk.MessageLoopStart(e)}, Order: 3, Timeout: 500 * time.Millisecond}
}
func (hang) MessageLoopStart(ctx context.Context, _ *sdk.Call, _ *exocortexv1.MessageLoopStartRequest) (*exocortexv1.MessageLoopStartResponse, error) {
	if f := os.Getenv("BATCHPLUGIN_HANG"); f != "" {
		if _, err := os.Stat(f); err != nil {
			_ = os.WriteFile(f, nil, 0o644)
			select {
			case <-time.After(time.Minute):
			case <-ctx.Done():
			}
		}
	}
	if f := os.Getenv("BATCHPLUGIN_HANG_HARD"); f != "" { // ignoring its context
		if _, err := os.Stat(f); err != nil {
			_ = os.WriteFile(f, nil, 0o644)
			time.Sleep(time.Minute)
		}
	}
	return nil, nil
}

func tool(name string, done bool) sdk.Tool {
	return sdk.Tool{Name: name, Description: "a batch test tool", Run: func(_ context.Context, _ *sdk.Call, args json.RawMessage) (*exocortexv1.ToolResult, error) {
		return &exocortexv1.ToolResult{Content: name + " ran with " + string(args), BreakLoop: done}, nil
	}}
}

func main() {
	sdk.Serve(sdk.Plugin{
		Name: "batchy",
		Extensions: []sdk.Extension{
			writeNote{}, readNote{"b_read", "read"}, resetNote{}, readNote{"b_read_after_reset", "read_after_reset"}, failing{}, lastOfEnd{},
			inject{}, count{"p_count", 2, false, true}, count{"p_history", 3, true, false},
			onlyX{}, crash{}, afterCrash{}, hang{},
		},
		Tools: []sdk.Tool{tool("x", false), tool("y", false), tool("response", true)},
	})
}
