// Command benchplugin serves ten small extensions for the dispatch benchmarks:
// two at each of five hooks, with orders base+0 … base+9 (benchplugin BASE NAME).
// Their only effects are the keys they declare, and they say so
// (EffectsDeclared), so the loop calls the plugins' batches at a hook at once,
// as it called every extension before issue 12 made in-order the default for
// extensions that do not declare it.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

func tracker() sdk.Key[*exocortexv1.FailureTracker] { return sdk.KeyOf[*exocortexv1.FailureTracker]() }

type base struct {
	name  string
	order int
}

type start struct{ base }

func (e start) Spec() sdk.Spec {
	return sdk.Spec{Name: e.name, Hooks: []sdk.Hook{sdk.MessageLoopStart(e)}, Order: e.order, EffectsDeclared: true}
}
func (start) MessageLoopStart(context.Context, *sdk.Call, *exocortexv1.MessageLoopStartRequest) (*exocortexv1.MessageLoopStartResponse, error) {
	return nil, nil
}

type prompts struct{ base }

func (e prompts) Spec() sdk.Spec {
	return sdk.Spec{Name: e.name, Hooks: []sdk.Hook{sdk.MessageLoopPromptsAfter(e)}, Order: e.order, EffectsDeclared: true, InjectsPrompt: true}
}
func (e prompts) MessageLoopPromptsAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: []*exocortexv1.PromptBlock{{Title: e.name, Content: fmt.Sprintf("iteration %d", req.GetIteration())}}}, nil
}

type before struct{ base }

func (e before) Spec() sdk.Spec {
	return sdk.Spec{Name: e.name, Hooks: []sdk.Hook{sdk.BeforeMainLLMCall(e)}, Order: e.order, EffectsDeclared: true, Reads: []sdk.KeyRef{tracker()}}
}
func (before) BeforeMainLLMCall(_ context.Context, c *sdk.Call, _ *exocortexv1.BeforeMainLLMCallRequest) (*exocortexv1.BeforeMainLLMCallResponse, error) {
	tracker().Get(c)
	return nil, nil
}

type after struct{ base }

func (e after) Spec() sdk.Spec {
	return sdk.Spec{Name: e.name, Hooks: []sdk.Hook{sdk.ToolExecuteAfter(e)}, Order: e.order, EffectsDeclared: true, Reads: []sdk.KeyRef{tracker()}, Writes: []sdk.KeyRef{tracker()}}
}
func (e after) ToolExecuteAfter(_ context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	ft, _ := tracker().Get(c)
	if ft == nil || ft.Failures == nil {
		ft = &exocortexv1.FailureTracker{Failures: map[string]int32{}}
	}
	ft.Failures[e.name] = 0
	tracker().Set(c, ft)
	return nil, nil
}

type end struct{ base }

func (e end) Spec() sdk.Spec {
	return sdk.Spec{Name: e.name, Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: e.order, EffectsDeclared: true, Reads: []sdk.KeyRef{tracker()}}
}
func (end) MessageLoopEnd(context.Context, *sdk.Call, *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	return nil, nil
}

// Extensions returns the ten extensions of one plugin.
func Extensions(name string, b int) []sdk.Extension {
	n := func(i int) base { return base{name: fmt.Sprintf("%s_%d", name, i), order: b + i} }
	return []sdk.Extension{
		start{n(0)}, start{n(1)}, prompts{n(2)}, prompts{n(3)}, before{n(4)},
		before{n(5)}, after{n(6)}, after{n(7)}, end{n(8)}, end{n(9)},
	}
}

// BENCHPLUGIN_CPUPROFILE=DIR writes each process's CPU profile, start to close,
// to DIR/NAME.pprof: where the plugin's side of a benchmarked call goes.
func main() {
	b, _ := strconv.Atoi(os.Args[1])
	name := os.Args[2]
	p := sdk.Plugin{Name: name, Version: "bench", Extensions: Extensions(name, b)}
	if dir := os.Getenv("BENCHPLUGIN_CPUPROFILE"); dir != "" {
		f, err := os.Create(filepath.Join(dir, name+".pprof"))
		if err == nil && pprof.StartCPUProfile(f) == nil {
			p.Close = func() error { pprof.StopCPUProfile(); return f.Close() }
		}
	}
	sdk.Serve(p)
}
