// Command latewrite is a test plugin that changes state after its hook call
// has returned, as a port of Agent Zero's asyncio.create_task habit would:
// "late_writer" starts a goroutine at monologue_start that sets its key a
// moment after the method returned. "late_waiter" holds message_loop_end long
// enough for that to happen while the run goes on.
package main

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

func note() sdk.Key[*wrapperspb.StringValue] {
	return sdk.NewKey[*wrapperspb.StringValue]("latewrite_note", exocortexv1.Scope_SCOPE_SESSION, "What the background task found.")
}

type writer struct{ done chan struct{} }

func (e writer) Spec() sdk.Spec {
	return sdk.Spec{Name: "late_writer", Hooks: []sdk.Hook{sdk.MonologueStart(e)}, Order: 920, Writes: []sdk.KeyRef{note()}, Description: "Writes its key from a goroutine, too late."}
}

func (w writer) MonologueStart(_ context.Context, c *sdk.Call, _ *exocortexv1.MonologueStartRequest) (*exocortexv1.MonologueStartResponse, error) {
	go func() {
		time.Sleep(100 * time.Millisecond)
		note().Set(c, wrapperspb.String("found late"))
		close(w.done)
	}()
	return nil, nil
}

type waiter struct{ done chan struct{} }

func (e waiter) Spec() sdk.Spec {
	return sdk.Spec{Name: "late_waiter", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 921, Reads: []sdk.KeyRef{note()}, Description: "Waits for the late write."}
}

func (w waiter) MessageLoopEnd(context.Context, *sdk.Call, *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	select {
	case <-w.done:
		time.Sleep(300 * time.Millisecond) // the log line reaches the host
	case <-time.After(5 * time.Second):
	}
	return nil, nil
}

func main() {
	done := make(chan struct{})
	sdk.Serve(sdk.Plugin{Name: "latewrite", Version: "test", Extensions: []sdk.Extension{writer{done}, waiter{done}}})
}
