package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// dispatcher holds a plugin's Dispatch stream. One round trip at a time uses
// it; a call that finds it busy goes by a call of its own instead.
type dispatcher struct {
	busy sync.Mutex // held for a round trip

	mu     sync.Mutex // guards the fields below
	stream exocortexv1.Plugin_DispatchClient
	cancel context.CancelFunc
	owner  *plugin.Client // the process the stream goes to
}

// open returns the stream to the process owner, opening one when there is none
// or it went to an earlier process.
func (d *dispatcher) open(client exocortexv1.PluginClient, owner *plugin.Client) (exocortexv1.Plugin_DispatchClient, context.CancelFunc, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stream != nil && d.owner == owner {
		return d.stream, d.cancel, nil
	}
	if d.cancel != nil {
		d.cancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, err := client.Dispatch(ctx)
	if err != nil {
		cancel()
		d.stream, d.cancel, d.owner = nil, nil, nil
		return nil, nil, err
	}
	d.stream, d.cancel, d.owner = st, cancel, owner
	return st, cancel, nil
}

// drop closes the stream; the next round trip opens another.
func (d *dispatcher) drop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cancel != nil {
		d.cancel()
	}
	d.stream, d.cancel, d.owner = nil, nil, nil
}

// Dispatch runs consecutive extensions of one plugin at one hook (one or more)
// over the plugin's Dispatch stream, which saves setting up a call per round
// trip. Deadline and failures are as for CallBatch. ok is false when the
// plugin does not serve Dispatch or its stream is in use: the caller then uses
// CallBatch, or Call for a single extension.
func Dispatch(ctx context.Context, exts []*Extension, req *exocortexv1.BatchRequest) (resp *exocortexv1.BatchResponse, err error, ok bool) {
	p := exts[0].Plugin
	if !p.Manifest().GetServesDispatch() || !p.disp.busy.TryLock() {
		return nil, nil, false
	}
	defer p.disp.busy.Unlock()
	names := make([]string, len(exts))
	var timeout time.Duration
	for i, e := range exts {
		names[i] = e.Name()
		timeout += e.Timeout
	}
	fail := func(kind FailureKind, err error) (*exocortexv1.BatchResponse, error, bool) {
		return nil, &CallError{Plugin: p.Name(), Extension: strings.Join(names, ", "), Hook: exts[0].Hook.Name, Kind: kind, Err: err, Stderr: p.StderrTail()}, true
	}
	client, err := p.live(ctx)
	if err != nil {
		return fail(Unavailable, err)
	}
	defer p.release()
	p.mu.Lock()
	owner := p.client
	p.mu.Unlock()
	st, cancel, err := p.disp.open(client, owner)
	if err != nil {
		p.fail(err, true)
		return fail(Crashed, fmt.Errorf("opening the dispatch stream: %w", err))
	}

	// The stream has no deadline per message: a timer and ctx end it instead.
	req.TimeoutMs = uint32(min(timeout.Milliseconds(), 1<<32-1))
	const (
		deadline = iota + 1
		canceled
	)
	var why atomic.Int32
	timer := time.AfterFunc(timeout, func() { why.CompareAndSwap(0, deadline); cancel() })
	stopCtx := context.AfterFunc(ctx, func() { why.CompareAndSwap(0, canceled); cancel() })
	err = st.Send(maskReq(p, req))
	if err == nil {
		resp, err = st.Recv()
		resp = maskReq(p, resp)
	}
	if stopped, unhooked := timer.Stop(), stopCtx(); !stopped || !unhooked {
		p.disp.drop() // ended, even when the answer came first
	}
	if err == nil {
		return resp, nil, true
	}
	p.disp.drop()
	switch {
	case why.Load() == canceled || ctx.Err() != nil:
		return fail(Canceled, ctx.Err())
	case why.Load() == deadline:
		err = fmt.Errorf("no answer within %s; the plugin was killed and restarts on next use", timeout)
		p.fail(err, true)
		return fail(TimedOut, err)
	case errors.Is(err, io.EOF) || status.Code(err) == codes.Unavailable || status.Code(err) == codes.Canceled:
		p.fail(err, true)
		return fail(Crashed, fmt.Errorf("the plugin process died during the call (%v); it restarts on next use", err))
	}
	p.fail(err, false)
	return fail(Returned, err)
}

// ServesDispatch reports whether the plugin answered that it serves Dispatch.
func (p *Plugin) ServesDispatch() bool { return p.Manifest().GetServesDispatch() }
