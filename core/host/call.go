package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// RPC is a method of the generated Plugin client, e.g.
// exocortexv1.PluginClient.MessageLoopEnd.
type RPC[Req, Resp proto.Message] func(exocortexv1.PluginClient, context.Context, Req, ...grpc.CallOption) (Resp, error)

// FailureKind classifies a failed call.
type FailureKind string

const (
	// Crashed: the plugin process exited or panicked during the call.
	Crashed FailureKind = "crashed"
	// TimedOut: the call missed its deadline and the plugin was killed.
	TimedOut FailureKind = "timed_out"
	// Unavailable: the plugin is quarantined, restarting, or failed to start.
	Unavailable FailureKind = "unavailable"
	// Returned: the extension returned an error; the plugin is healthy.
	Returned FailureKind = "error"
	// Canceled: the caller gave up (the operator pressed Ctrl+C).
	Canceled FailureKind = "canceled"
)

// CallError is a failed extension or tool call.
type CallError struct {
	Plugin, Extension, Hook string
	// Provider names the tool provider of a tool that runs outside the
	// plugins (Plugin is then empty).
	Provider string
	Kind     FailureKind
	Err      error
	Stderr   string
}

func (e *CallError) Error() string {
	what := "extension " + e.Extension
	if e.Extension == "" {
		what = "tool call"
	}
	who := "plugin " + e.Plugin
	if e.Plugin == "" && e.Provider != "" {
		who = e.Provider
	}
	return fmt.Sprintf("%s, %s at %s %s: %v", who, what, e.Hook, e.Kind, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// Call runs one extension's hook RPC with the extension's deadline. A crash or a
// missed deadline is recorded against the plugin (which is then restarted on next
// use, or quarantined); every failure comes back as a *CallError.
func Call[Req, Resp proto.Message](ctx context.Context, ext *Extension, req Req, rpc RPC[Req, Resp]) (Resp, error) {
	return call(ctx, ext.Plugin, ext.Name(), ext.Hook.Name, ext.Timeout, req, rpc)
}

// CallBatch runs consecutive extensions of one plugin at one hook in one round
// trip (Plugin.RunBatch). Its deadline is the sum of theirs, as if each had its
// own call. A crash or a missed deadline fails the whole batch, recorded against
// the plugin once; the extensions' own errors come back in the results.
func CallBatch(ctx context.Context, exts []*Extension, req *exocortexv1.BatchRequest) (*exocortexv1.BatchResponse, error) {
	names := make([]string, len(exts))
	var timeout time.Duration
	for i, e := range exts {
		names[i] = e.Name()
		timeout += e.Timeout
	}
	return call(ctx, exts[0].Plugin, strings.Join(names, ", "), exts[0].Hook.Name, timeout, req, exocortexv1.PluginClient.RunBatch)
}

// ServesBatches reports whether the plugin answered that it serves RunBatch.
func (p *Plugin) ServesBatches() bool { return p.Manifest().GetServesBatches() }

// call is callAsIs with the request and the answer masked (secrets.go).
func call[Req, Resp proto.Message](ctx context.Context, p *Plugin, ext, hook string, timeout time.Duration, req Req, rpc RPC[Req, Resp]) (Resp, error) {
	resp, err := callAsIs(ctx, p, ext, hook, timeout, maskReq(p, req), rpc)
	if err != nil {
		return resp, err
	}
	return maskReq(p, resp), nil
}

func callAsIs[Req, Resp proto.Message](ctx context.Context, p *Plugin, ext, hook string, timeout time.Duration, req Req, rpc RPC[Req, Resp]) (Resp, error) {
	var zero Resp
	fail := func(kind FailureKind, err error) (Resp, error) {
		return zero, &CallError{Plugin: p.Name(), Extension: ext, Hook: hook, Kind: kind, Err: err, Stderr: p.StderrTail()}
	}
	client, err := p.live(ctx)
	if err != nil {
		return fail(Unavailable, err)
	}
	defer p.release()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := rpc(client, cctx, req)
	if err == nil {
		return resp, nil
	}
	switch {
	case ctx.Err() != nil:
		return fail(Canceled, ctx.Err())
	case errors.Is(cctx.Err(), context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded:
		err = fmt.Errorf("no answer within %s; the plugin was killed and restarts on next use", timeout)
		p.fail(err, true)
		return fail(TimedOut, err)
	case status.Code(err) == codes.Unavailable || status.Code(err) == codes.Canceled:
		p.fail(err, true)
		return fail(Crashed, fmt.Errorf("the plugin process died during the call (%v); it restarts on next use", err))
	}
	p.fail(err, false)
	return fail(Returned, err)
}
