package loop

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// MaxSubordinateDepth bounds nesting: a subordinate may start its own, this deep.
const MaxSubordinateDepth = 3

// family links an agent with the subordinates it started, so a RunSubordinate
// call, which arrives at the host without saying which agent asks, is matched to
// the asking agent by the request id of its context.
type family struct {
	mu        sync.Mutex
	byRequest map[string]*Agent
	// emitMu passes the family's events to the observer one at a time.
	emitMu sync.Mutex
}

func (f *family) enter(requestID string, a *Agent) {
	f.mu.Lock()
	f.byRequest[requestID] = a
	f.mu.Unlock()
}

func (f *family) leave(requestID string) {
	f.mu.Lock()
	delete(f.byRequest, requestID)
	f.mu.Unlock()
}

func (f *family) asking(requestID string) *Agent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byRequest[requestID]
}

// RunSubordinate runs a child agent inline, with its own profile, history and
// state, on the asking agent's behalf; plug it into the host with
// host.Services().SetSubordinateRunner. Asking again in the same request
// continues the same child unless req.fresh is set.
func (a *Agent) RunSubordinate(ctx context.Context, req *exocortexv1.RunSubordinateRequest) (*exocortexv1.RunSubordinateResponse, error) {
	parent := a.fam.asking(req.GetContext().GetRequestId())
	if parent == nil {
		parent = a
	}
	if parent.depth >= MaxSubordinateDepth {
		return nil, status.Errorf(codes.FailedPrecondition, "subordinates nest at most %d deep; do this step yourself", MaxSubordinateDepth)
	}
	if strings.TrimSpace(req.GetMessage()) == "" {
		return nil, status.Error(codes.InvalidArgument, "call_subordinate needs a message: the task for the subordinate")
	}
	profile := req.GetProfile()
	if profile == "" {
		profile = "subordinate"
	}
	parent.mu.Lock()
	key := req.GetContext().GetRequestId() + "\x00" + profile
	child := parent.children[key]
	parent.mu.Unlock()
	if child == nil || req.GetFresh() {
		opts := parent.opts
		opts.Session = nil
		opts.PersistentState = ""
		opts.AgentProfile = profile
		if obs := parent.opts.Observer; obs != nil {
			name := fmt.Sprintf("%s#%d", profile, parent.depth+1)
			opts.Observer = func(e Event) {
				if e.Agent == "" {
					e.Agent = name
				}
				obs(e)
			}
		}
		c, err := New(opts)
		if err != nil {
			return nil, err
		}
		c.depth = parent.depth + 1
		c.fam = parent.fam
		child = c
		parent.mu.Lock()
		parent.children[key] = child
		parent.mu.Unlock()
	}
	res, err := child.Monologue(ctx, req.GetMessage())
	out := &exocortexv1.RunSubordinateResponse{}
	if res != nil {
		out.Response, out.StopReason, out.Iterations = res.Response, res.StopReason, int32(res.Iterations)
	}
	if err != nil && res == nil {
		return nil, err
	}
	if err != nil && out.StopReason == "" {
		out.StopReason = err.Error()
	}
	return out, nil
}
