package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// The utility-model service (Host.CallUtilityModel): a plugin that declares
// uses_utility_model in its manifest runs one completion of the host's utility
// model, as Agent Zero's extensions do with agent.call_utility_model. The host
// owns the bounds, per plugin: a deadline for each call, how many calls run at
// once and how many start per minute (a token bucket, golang.org/x/time/rate),
// and the largest prompt. What runs the completion (the hooks around it, the
// model client) is the agent's, plugged in with SetUtilityRunner.

// Defaults of UtilityLimits.
const (
	DefaultUtilityTimeout     = 60 * time.Second
	DefaultUtilityPerMinute   = 30
	DefaultUtilityBurst       = 5
	DefaultUtilityConcurrent  = 2
	DefaultUtilityPromptBytes = 64 << 10
)

// UtilityLimits bound the utility-model calls of each plugin; a zero field
// takes its default.
type UtilityLimits struct {
	// Timeout bounds one call, the hooks around it included (and the asking
	// call's own deadline, when it is sooner).
	Timeout time.Duration
	// PerMinute calls may start per minute, Burst of them at once after a quiet
	// spell; a call over the rate waits for its turn within its deadline.
	PerMinute, Burst int
	// Concurrent calls of one plugin run at once; the next waits within its
	// deadline.
	Concurrent int
	// MaxPromptBytes bounds the system prompt and the message together.
	MaxPromptBytes int
}

func (l UtilityLimits) withDefaults() UtilityLimits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultUtilityTimeout
	}
	if l.PerMinute <= 0 {
		l.PerMinute = DefaultUtilityPerMinute
	}
	if l.Burst <= 0 {
		l.Burst = DefaultUtilityBurst
	}
	if l.Concurrent <= 0 {
		l.Concurrent = DefaultUtilityConcurrent
	}
	if l.MaxPromptBytes <= 0 {
		l.MaxPromptBytes = DefaultUtilityPromptBytes
	}
	return l
}

// UtilityRunner runs one utility-model completion for plugin: it fires
// util_model_call_before, calls the model (passing each piece of its text to
// onDelta when it is not nil), fires util_model_call_after, and returns the
// response as the extensions left it and the model that answered.
type UtilityRunner func(ctx context.Context, plugin string, req *exocortexv1.CallUtilityModelRequest, onDelta func(string) error) (response, model string, err error)

// SetUtilityRunner plugs in what runs plugins' utility-model calls (the
// loop's agent).
func (s *Services) SetUtilityRunner(f UtilityRunner) {
	s.mu.Lock()
	s.utility = f
	s.mu.Unlock()
}

// utilityGate is one plugin's share of the utility model.
type utilityGate struct {
	rate    *rate.Limiter
	running chan struct{} // a slot per call running
}

func (s *Services) gate(plugin string, l UtilityLimits) *utilityGate {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gates == nil {
		s.gates = map[string]*utilityGate{}
	}
	g := s.gates[plugin]
	if g == nil {
		g = &utilityGate{
			rate:    rate.NewLimiter(rate.Limit(float64(l.PerMinute)/60), l.Burst),
			running: make(chan struct{}, l.Concurrent),
		}
		s.gates[plugin] = g
	}
	return g
}

// pluginServices is the Host service as one plugin sees it: the calls that
// depend on who asks (CallUtilityModel) know the plugin by its connection,
// not by anything the request says.
type pluginServices struct {
	*Services
	p *Plugin
}

// forPlugin is the Host service p's process is given.
func (s *Services) forPlugin(p *Plugin) exocortexv1.HostServer {
	return &pluginServices{Services: s, p: p}
}

// CallUtilityModel runs one utility-model completion for the plugin.
func (ps *pluginServices) CallUtilityModel(req *exocortexv1.CallUtilityModelRequest, stream grpc.ServerStreamingServer[exocortexv1.CallUtilityModelReply]) error {
	send := func(r *exocortexv1.CallUtilityModelReply) error { return stream.Send(r) }
	return ps.callUtility(stream.Context(), ps.p.Name(), ps.p.Manifest().GetUsesUtilityModel(), req, send)
}

// callUtility checks the call against the plugin's declaration and the
// limits, then runs it, sending the deltas (when asked for) and the final reply.
func (s *Services) callUtility(ctx context.Context, plugin string, declared bool, req *exocortexv1.CallUtilityModelRequest, send func(*exocortexv1.CallUtilityModelReply) error) error {
	if !declared {
		return status.Errorf(codes.PermissionDenied, "plugin %s called the utility model, but its manifest does not declare uses_utility_model: "+
			"declare it (Go: sdk.Plugin{UsesUtilityModel: true}; Python: Plugin(uses_utility_model=True); `plugins port` declares it for a tree whose files call call_utility_model)", plugin)
	}
	s.mu.RLock()
	run, h := s.utility, s.host
	s.mu.RUnlock()
	if run == nil {
		return status.Error(codes.FailedPrecondition, "this host runs no agent, so it has no utility model to call")
	}
	var l UtilityLimits
	if h != nil {
		l = h.opts.Utility
	}
	l = l.withDefaults()
	if n := len(req.GetSystem()) + len(req.GetMessage()); n > l.MaxPromptBytes {
		return status.Errorf(codes.InvalidArgument, "plugin %s: the utility-model prompt is %d bytes (system %d, message %d), over the host's limit of %d: "+
			"send only what the model needs, or raise utility_calls.max_prompt_bytes in config.yaml", plugin, n, len(req.GetSystem()), len(req.GetMessage()), l.MaxPromptBytes)
	}
	cctx, cancel := context.WithTimeout(ctx, l.Timeout)
	defer cancel()
	g := s.gate(plugin, l)
	if err := g.rate.Wait(cctx); err != nil {
		return status.Errorf(codes.ResourceExhausted, "plugin %s: over its utility-model rate of %d calls a minute (burst %d), and its turn would come after the call's deadline: "+
			"call less often, or raise utility_calls.per_minute in config.yaml (%v)", plugin, l.PerMinute, l.Burst, err)
	}
	select {
	case g.running <- struct{}{}:
		defer func() { <-g.running }()
	case <-cctx.Done():
		return status.Errorf(codes.ResourceExhausted, "plugin %s: %d utility-model calls of its own were still running at the call's deadline (its limit at once; utility_calls.concurrent in config.yaml)", plugin, l.Concurrent)
	}
	var onDelta func(string) error
	if req.GetStream() {
		onDelta = func(d string) error {
			if d == "" {
				return nil
			}
			return send(&exocortexv1.CallUtilityModelReply{Delta: d})
		}
	}
	resp, model, err := run(cctx, plugin, req, onDelta)
	switch {
	case err != nil && ctx.Err() != nil:
		return status.FromContextError(ctx.Err()).Err()
	case err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded):
		return status.Errorf(codes.DeadlineExceeded, "plugin %s: no utility-model answer within %s (utility_calls.timeout in config.yaml): %v", plugin, l.Timeout, err)
	case err != nil:
		if _, ok := status.FromError(err); ok {
			return err
		}
		return status.Errorf(codes.Unavailable, "plugin %s: the utility-model call failed: %v", plugin, err)
	}
	if err := send(&exocortexv1.CallUtilityModelReply{Done: true, Response: resp, Model: model}); err != nil {
		return fmt.Errorf("sending the utility model's answer to plugin %s: %w", plugin, err)
	}
	return nil
}

// utilityState is the part of Services the utility service keeps.
type utilityState struct {
	utility UtilityRunner
	gates   map[string]*utilityGate // by plugin name
}
