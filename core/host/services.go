package host

import (
	"context"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// SubordinateRunner runs a child agent for a plugin's RunSubordinate call.
type SubordinateRunner func(ctx context.Context, req *exocortexv1.RunSubordinateRequest) (*exocortexv1.RunSubordinateResponse, error)

// Services is the Host service the host offers every plugin it starts, through
// go-plugin's broker. The plugins start before the agent exists, so what needs the
// agent is plugged in afterwards.
type Services struct {
	exocortexv1.UnimplementedHostServer

	mu          sync.RWMutex
	subordinate SubordinateRunner
}

// SetSubordinateRunner plugs in what runs subordinates (the loop's agent).
func (s *Services) SetSubordinateRunner(f SubordinateRunner) {
	s.mu.Lock()
	s.subordinate = f
	s.mu.Unlock()
}

// RunSubordinate runs a child agent.
func (s *Services) RunSubordinate(ctx context.Context, req *exocortexv1.RunSubordinateRequest) (*exocortexv1.RunSubordinateResponse, error) {
	s.mu.RLock()
	f := s.subordinate
	s.mu.RUnlock()
	if f == nil {
		return nil, status.Error(codes.FailedPrecondition, "this host runs no agent that could start a subordinate")
	}
	return f(ctx, req)
}

// Services returns the services the host offers its plugins.
func (h *Host) Services() *Services { return h.services }
