// Command testplugin is the plugin the SDK's own tests start as a real process: one
// extension, "probe", at message_loop_end, three tools, "echo", "procs" and
// "started", and a Start that runs until the plugin stops.
//
//	go build -o /tmp/testplugin ./sdk/internal/testplugin
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// probe logs each call and answers with the iteration it saw; a reply of "panic"
// makes it panic.
type probe struct{}

func (e probe) Spec() sdk.Spec {
	return sdk.Spec{Name: "probe", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 50, Description: "Answers with the iteration it saw."}
}

func (probe) MessageLoopEnd(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	c.Logger().Info("probe called", "iteration", req.GetIteration())
	if req.GetReply() == "panic" {
		panic("probe was asked to panic")
	}
	msg := fmt.Sprintf("iteration %d", req.GetIteration())
	return &exocortexv1.MessageLoopEndResponse{Intervention: &msg}, nil
}

func main() {
	// Start runs until the plugin stops, as a slow preparation would; the
	// "started" tool says whether it began, and Close whether it ended.
	var started atomic.Bool
	startDone := make(chan struct{})
	sdk.Serve(sdk.Plugin{
		Name:       "testplugin",
		Version:    "0.0.1",
		Extensions: []sdk.Extension{probe{}},
		Tools: []sdk.Tool{{
			Name:        "echo",
			Description: "Returns its arguments.",
			Parameters:  `{"type":"object"}`,
			Run: func(_ context.Context, _ *sdk.Call, args json.RawMessage) (*exocortexv1.ToolResult, error) {
				return &exocortexv1.ToolResult{Content: string(args)}, nil
			},
		}, {
			Name:        "procs",
			Description: "Returns the plugin's GOMAXPROCS.",
			Run: func(context.Context, *sdk.Call, json.RawMessage) (*exocortexv1.ToolResult, error) {
				return &exocortexv1.ToolResult{Content: fmt.Sprint(runtime.GOMAXPROCS(0))}, nil
			},
		}, {
			Name:        "started",
			Description: "Says whether the plugin's Start is running.",
			Run: func(context.Context, *sdk.Call, json.RawMessage) (*exocortexv1.ToolResult, error) {
				return &exocortexv1.ToolResult{Content: fmt.Sprint(started.Load())}, nil
			},
		}},
		Start: func(ctx context.Context) {
			defer close(startDone)
			started.Store(true)
			<-ctx.Done()
		},
		// Close leaves a mark where SDK_TEST_CLOSE_MARKER says, for the test
		// that a graceful stop runs it.
		Close: func() error {
			if p := os.Getenv("SDK_TEST_CLOSE_MARKER"); p != "" {
				mark := "closed while Start ran"
				select {
				case <-startDone:
					mark = "closed"
				case <-time.After(5 * time.Second):
				}
				return os.WriteFile(p, []byte(mark), 0o644)
			}
			return nil
		},
	})
}
