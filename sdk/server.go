package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// server implements the generated Plugin service for a Plugin. It embeds no
// Unimplemented stub, only the interface that opts out of one
// (UnsafePluginServer, never called): every RPC of the service is a method of
// server (the hooks' in hooks_gen.go), so a hook added to the protocol without
// its method fails to compile instead of being answered "unimplemented".
type server struct {
	exocortexv1.UnsafePluginServer
	b      *built
	logger *slog.Logger
	host   *hostConn
}

var _ exocortexv1.PluginServer = (*server)(nil)

// NewServer validates p and returns the Plugin service that serves it, for use in
// the same process (Serve uses it too). The error lists every problem found, each
// naming the extension, key or tool at fault.
func NewServer(p Plugin) (exocortexv1.PluginServer, error) {
	b, err := build(p)
	if err != nil {
		return nil, fmt.Errorf("plugin %q is not valid: %w", p.Name, err)
	}
	logger := p.Logger
	if logger == nil {
		logger = slog.New(NewHostLogHandler(os.Stderr, p.Name))
	}
	return &server{b: b, logger: logger, host: &hostConn{}}, nil
}

// Manifest answers the manifest built from the Plugin.
func (s *server) Manifest(_ context.Context, req *exocortexv1.ManifestRequest) (*exocortexv1.ManifestResponse, error) {
	if v := req.GetProtocolVersion(); v != 0 && v != ProtocolVersion {
		return nil, status.Errorf(codes.FailedPrecondition,
			"plugin %q speaks protocol version %d, the host asked for %d", s.b.manifest.Plugin, ProtocolVersion, v)
	}
	return proto.CloneOf(s.b.manifest), nil
}

// hookRequest is what every hook request has: the HookCall.
type hookRequest interface {
	proto.Message
	GetCall() *exocortexv1.HookCall
}

// handle runs one hook call: it finds the extension, builds the Call, runs the
// method of the handler its Spec.Hooks declares with panics recovered, checks the result and attaches the state changes.
func handle[Req hookRequest, Resp proto.Message](s *server, hook exocortexv1.Hook, req Req,
	run func(handler any, c *Call) (Resp, error)) (Resp, error) {
	var zero Resp
	hc := req.GetCall()
	if hc == nil {
		return zero, status.Errorf(codes.InvalidArgument, "plugin %q: %s request without a HookCall", s.b.manifest.Plugin, HookName(hook))
	}
	e := s.b.exts[hc.GetExtension()]
	if e == nil || !e.hooks[hook] {
		return zero, status.Errorf(codes.NotFound, "plugin %q has no extension %q at %s (it serves: %s)",
			s.b.manifest.Plugin, hc.GetExtension(), HookName(hook), s.servedAt(hook))
	}
	c := s.newCall(e, hook, hc)
	defer c.close()
	// The request as received, to tell a handler that changed it (readonly.go).
	before := takeSnapshot(req)

	resp, err, perr := protect(c, func() (Resp, error) { return run(e.handlers[hook], c) })
	if perr != nil {
		return zero, perr
	}
	if cerr := c.Err(); cerr != nil {
		return zero, status.Error(codes.FailedPrecondition, cerr.Error())
	}
	if err != nil {
		if _, isStatus := status.FromError(err); isStatus {
			return zero, err
		}
		return zero, status.Errorf(codes.Unknown, "extension %q at %s: %v", e.spec.Name, HookName(hook), err)
	}
	if path, top := requestChangedSince(before, req); path != "" {
		return zero, status.Error(codes.FailedPrecondition, mutationError(s.b.manifest.Plugin, e.spec.Name, hook, path, top))
	}
	m := resp.ProtoReflect()
	if !m.IsValid() {
		// nil response: no change.
		m = m.New()
		resp = m.Interface().(Resp)
	}
	if blocks := m.Descriptor().Fields().ByName("prompt_blocks"); blocks != nil && m.Get(blocks).List().Len() > 0 && !e.spec.InjectsPrompt {
		return zero, status.Errorf(codes.FailedPrecondition,
			"extension %q returned prompt blocks at %s but its Spec does not declare InjectsPrompt", e.spec.Name, HookName(hook))
	}
	setChanges(m, c.changes())
	return resp, nil
}

// setChanges fills field 1, "changes", which every hook response has.
func setChanges(m protoreflect.Message, sc *exocortexv1.StateChanges) {
	fd := m.Descriptor().Fields().ByName("changes")
	m.Set(fd, protoreflect.ValueOfMessage(sc.ProtoReflect()))
}

func (s *server) servedAt(hook exocortexv1.Hook) string {
	var names []string
	for name, e := range s.b.exts {
		if e.hooks[hook] {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "none at this hook"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func (s *server) newCall(e *extEntry, hook exocortexv1.Hook, hc *exocortexv1.HookCall) *Call {
	c := &Call{
		plugin:     s.b.manifest.Plugin,
		extension:  e.spec.Name,
		hook:       hook,
		context:    hc.GetContext(),
		reads:      e.reads,
		writes:     e.writes,
		state:      make(map[string]*anypb.Any, len(hc.GetState())),
		baseLogger: s.logger,
		logAttrs:   []any{"extension", e.spec.Name, "hook", HookName(hook)},
		host:       s.host,
	}
	if c.context == nil {
		c.context = &exocortexv1.Context{}
	}
	for _, st := range hc.GetState() {
		if st.GetValue() != nil {
			c.state[st.GetKey()] = st.GetValue()
		}
	}
	return c
}

// protect runs f, turning a panic into perr, a gRPC Internal error that carries the
// panic value and the head of the stack, and logging the whole stack. The plugin
// keeps serving.
func protect[T any](c *Call, f func() (T, error)) (v T, err, perr error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		head := stackHead(5)
		c.Logger().Error("panic in "+c.who(), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		where := HookName(c.hook)
		if c.tool != "" {
			where = "ExecuteTool"
		}
		perr = status.Errorf(codes.Internal, "%s panicked at %s: %v\n%s", c.who(), where, r, head)
	}()
	v, err = f()
	return v, err, nil
}

// stackHead formats the innermost frames of the panicking goroutine, starting at the
// frame that panicked.
func stackHead(n int) string {
	pcs := make([]uintptr, 64)
	pcs = pcs[:runtime.Callers(1, pcs)]
	frames := runtime.CallersFrames(pcs)
	var lines []string
	afterPanic := false
	for {
		fr, more := frames.Next()
		if afterPanic && len(lines) < n {
			lines = append(lines, fmt.Sprintf("  at %s (%s:%d)", fr.Function, fr.File, fr.Line))
		}
		if fr.Function == "runtime.gopanic" || strings.HasPrefix(fr.Function, "runtime.panic") {
			afterPanic = true
		}
		if !more {
			break
		}
	}
	return strings.Join(lines, "\n")
}

// ExecuteTool runs one of the plugin's tools.
func (s *server) ExecuteTool(ctx context.Context, req *exocortexv1.ExecuteToolRequest) (*exocortexv1.ExecuteToolResponse, error) {
	name := req.GetToolCall().GetName()
	t, ok := s.b.tools[name]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "plugin %q has no tool %q (it serves: %s)", s.b.manifest.Plugin, name, s.toolNames())
	}
	args := json.RawMessage(req.GetToolCall().GetArgsJson())
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		return nil, status.Errorf(codes.InvalidArgument, "tool %q: args_json is not valid JSON: %.200q", name, string(args))
	}
	c := &Call{
		extension:  name,
		tool:       name,
		context:    req.GetCall().GetContext(),
		baseLogger: s.logger,
		logAttrs:   []any{"tool", name},
		host:       s.host,
	}
	if c.context == nil {
		c.context = &exocortexv1.Context{}
	}
	res, err, perr := protect(c, func() (*exocortexv1.ToolResult, error) { return t.Run(ctx, c, args) })
	if perr != nil {
		return nil, perr
	}
	if cerr := c.Err(); cerr != nil {
		return nil, status.Error(codes.FailedPrecondition, cerr.Error())
	}
	if res == nil {
		res = &exocortexv1.ToolResult{}
	}
	if err != nil {
		res = proto.CloneOf(res)
		res.Error = err.Error()
	}
	return &exocortexv1.ExecuteToolResponse{Result: res}, nil
}

func (s *server) toolNames() string {
	if len(s.b.tools) == 0 {
		return "no tools"
	}
	names := make([]string, 0, len(s.b.tools))
	for n := range s.b.tools {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
