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

	mu           sync.RWMutex
	subordinate  SubordinateRunner
	outputs      map[string]outputWatch // by the tool call's context id
	embedding    func(*EmbeddingChange)
	host         *Host // runs the memory tools for UseMemory
	utilityState       // CallUtilityModel (utility.go)
	memoryState        // MemoryService for plugins (memory.go)
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

// ToolOutput is one piece of partial output a running tool reported. The
// receiver sends what the operator was shown of the output so far on Reply
// (exactly once).
type ToolOutput struct {
	Delta string
	Reply chan<- string
}

// EmbeddingChange is a plugin's report that a memory store was built with
// another embedding model than the configured one.
type EmbeddingChange = exocortexv1.ReportEmbeddingModelChangedRequest

type outputWatch struct {
	ch   chan ToolOutput
	gone chan struct{}
}

// WatchToolOutput routes the partial output reported by the tool call whose
// ExecuteToolRequest carried contextID to the returned channel, until stop is
// called. A report that arrives with no watch (the call is over, or it never
// ran) is refused.
func (s *Services) WatchToolOutput(contextID string) (<-chan ToolOutput, func()) {
	w := outputWatch{ch: make(chan ToolOutput), gone: make(chan struct{})}
	s.mu.Lock()
	if s.outputs == nil {
		s.outputs = map[string]outputWatch{}
	}
	s.outputs[contextID] = w
	s.mu.Unlock()
	var once sync.Once
	return w.ch, func() {
		once.Do(func() {
			s.mu.Lock()
			delete(s.outputs, contextID)
			s.mu.Unlock()
			close(w.gone)
		})
	}
}

// ReportToolOutput hands a running tool's partial output to the agent that
// runs the call, and answers with what the operator was shown once the
// extensions at tool_output_update have seen it.
func (s *Services) ReportToolOutput(ctx context.Context, req *exocortexv1.ReportToolOutputRequest) (*exocortexv1.ReportToolOutputResponse, error) {
	id := req.GetContext().GetContextId()
	s.mu.RLock()
	w, ok := s.outputs[id]
	s.mu.RUnlock()
	if !ok {
		return nil, status.Errorf(codes.FailedPrecondition, "no tool call with context %q is running: report output with the context of the ExecuteToolRequest, while the tool runs", id)
	}
	reply := make(chan string, 1)
	select {
	case w.ch <- ToolOutput{Delta: req.GetDelta(), Reply: reply}:
	case <-w.gone:
		return nil, status.Errorf(codes.FailedPrecondition, "the tool call with context %q is over", id)
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	select {
	case d := <-reply:
		return &exocortexv1.ReportToolOutputResponse{Display: d}, nil
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}

// SetEmbeddingSink plugs in what receives reports of an embedding model
// change (the loop's agent, which fires embedding_model_changed).
func (s *Services) SetEmbeddingSink(f func(*EmbeddingChange)) {
	s.mu.Lock()
	s.embedding = f
	s.mu.Unlock()
}

// ReportEmbeddingModelChanged passes the report to the agent; the agent fires
// embedding_model_changed at its next point between hooks.
func (s *Services) ReportEmbeddingModelChanged(_ context.Context, req *exocortexv1.ReportEmbeddingModelChangedRequest) (*exocortexv1.ReportEmbeddingModelChangedResponse, error) {
	s.mu.RLock()
	f := s.embedding
	s.mu.RUnlock()
	if f == nil {
		return nil, status.Error(codes.FailedPrecondition, "this host runs no agent that could fire embedding_model_changed")
	}
	f(req)
	return &exocortexv1.ReportEmbeddingModelChangedResponse{}, nil
}

// IsMemoryTool reports whether UseMemory runs the tool name for a plugin: the
// memory store's similarity pair (memory_load, memory_forget) and keyed pair
// (memory_save, memory_delete). A plugin asking for any other tool is refused.
func IsMemoryTool(name string) bool {
	switch name {
	case "memory_delete", "memory_forget", "memory_load", "memory_save":
		return true
	}
	return false
}

// UseMemory runs a memory tool on a plugin's behalf, in the plugin that serves it,
// with the asking call's context (the records written carry its session and
// message). The tool's own failure is in the result's error, as the model would
// see it; a tool no plugin serves is refused with FailedPrecondition.
func (s *Services) UseMemory(ctx context.Context, req *exocortexv1.UseMemoryRequest) (*exocortexv1.UseMemoryResponse, error) {
	name := req.GetTool()
	if !IsMemoryTool(name) {
		return nil, status.Errorf(codes.InvalidArgument, "UseMemory runs the memory tools only (memory_load, memory_save, memory_forget, memory_delete), not %q", name)
	}
	s.mu.RLock()
	h := s.host
	s.mu.RUnlock()
	if h == nil {
		return nil, status.Error(codes.FailedPrecondition, "this host serves no memory tools")
	}
	t, ok := h.Tool(name)
	if !ok {
		return nil, status.Errorf(codes.FailedPrecondition, "no plugin serves %s: enable the memory-tools plugin to use the memory store", name)
	}
	resp, err := h.ExecuteTool(ctx, t, &exocortexv1.ExecuteToolRequest{
		Call:     &exocortexv1.HookCall{Extension: name, Context: req.GetContext()},
		ToolCall: &exocortexv1.ToolCall{Name: name, ArgsJson: req.GetArgsJson()},
	}, 0)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "running %s: %v", name, err)
	}
	return &exocortexv1.UseMemoryResponse{Result: resp.GetResult()}, nil
}
