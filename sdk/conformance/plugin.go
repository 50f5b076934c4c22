package conformance

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/state"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Plugin holds the one plugin in pluginDir to what every plugin owes the host,
// whatever its extensions do. It is the part of the suite that fits any plugin, so a
// plugin's own tests (and `exocortex plugins new`'s generated ones) can run it:
//
//   - protocol, with go-plugin directly: the gRPC handshake at the SDK's protocol
//     version, the health check, the same manifest on every request, a refusal of
//     another protocol version, InvalidArgument for a request without its
//     HookCall, NotFound for an extension it does not serve, a graceful stop;
//   - through the real host: it loads and wires; every extension it declares
//     answers its own hook's request with its own response type, carrying no
//     fields the hook does not allow, and with state changes the host's store
//     accepts; every tool it declares is implemented.
func Plugin(t testing.TB, pluginDir string) {
	t.Helper()
	cands := discover.Scan([]discover.Dir{{Path: pluginDir, Source: discover.User}}).Plugins
	if len(cands) != 1 {
		t.Fatalf("conformance: discovery finds %d plugins in %s, want 1", len(cands), pluginDir)
	}
	m := protocol(t, cands[0])
	throughHost(t, pluginDir, m)
}

func protocol(t testing.TB, c discover.Candidate) *exocortexv1.ManifestResponse {
	t.Helper()
	cmd := exec.Command(c.Command[0], c.Command[1:]...)
	cmd.Dir = c.WorkDir
	log := &lockedBuffer{}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig: sdk.Handshake(), VersionedPlugins: sdk.PluginSet(nil), Cmd: cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hclog.New(&hclog.LoggerOptions{Output: log, Level: hclog.Debug}),
	})
	defer client.Kill()
	rpc, err := client.Client()
	if err != nil {
		t.Fatalf("conformance: handshake with %s: %v\n%s", c.Name, err, log)
	}
	if client.Protocol() != plugin.ProtocolGRPC || client.NegotiatedVersion() != sdk.ProtocolVersion {
		t.Errorf("conformance: negotiated %s version %d, want grpc version %d", client.Protocol(), client.NegotiatedVersion(), sdk.ProtocolVersion)
	}
	if err := rpc.Ping(); err != nil {
		t.Errorf("conformance: health check: %v", err)
	}
	raw, err := rpc.Dispense(sdk.PluginName)
	if err != nil {
		t.Fatalf("conformance: dispense: %v", err)
	}
	pc := raw.(exocortexv1.PluginClient)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m1, err := pc.Manifest(ctx, &exocortexv1.ManifestRequest{ProtocolVersion: sdk.ProtocolVersion})
	if err != nil {
		t.Fatalf("conformance: manifest: %v", err)
	}
	m2, err := pc.Manifest(ctx, &exocortexv1.ManifestRequest{ProtocolVersion: sdk.ProtocolVersion})
	if err != nil || !proto.Equal(m1, m2) {
		t.Errorf("conformance: a second manifest differs (%v)", err)
	}
	if _, err := pc.Manifest(ctx, &exocortexv1.ManifestRequest{ProtocolVersion: sdk.ProtocolVersion + 1}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("conformance: manifest for protocol version %d: %v, want FailedPrecondition", sdk.ProtocolVersion+1, err)
	}
	if _, err := pc.MessageLoopEnd(ctx, &exocortexv1.MessageLoopEndRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("conformance: a request without HookCall: %v, want InvalidArgument", err)
	}
	if _, err := pc.MessageLoopEnd(ctx, &exocortexv1.MessageLoopEndRequest{Call: &exocortexv1.HookCall{Extension: "no_such_extension_here"}}); status.Code(err) != codes.NotFound {
		t.Errorf("conformance: an unknown extension: %v, want NotFound", err)
	}
	pid := client.ReattachConfig().Pid
	client.Kill()
	if err := syscall.Kill(pid, 0); err == nil && running(pid) {
		t.Errorf("conformance: the plugin (pid %d) still runs after a graceful stop", pid)
	}
	if strings.Contains(log.String(), "plugin failed to exit gracefully") {
		t.Errorf("conformance: the plugin did not stop gracefully:\n%s", log)
	}
	return m1
}

func throughHost(t testing.TB, pluginDir string, m *exocortexv1.ManifestResponse) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := host.New(ctx, host.Options{Dirs: []discover.Dir{{Path: pluginDir, Source: discover.User}}})
	if err != nil {
		t.Fatalf("conformance: the host does not load the plugin: %v", err)
	}
	defer h.Close()
	if f := h.FailedPlugins(); len(f) > 0 {
		t.Fatalf("conformance: the plugin did not start: %v", f[0])
	}
	store := state.NewStore(h.Registry())
	for _, spec := range m.GetExtensions() {
		info, _ := hooks.Of(spec.GetHook())
		var ext *host.Extension
		for _, e := range h.Extensions(spec.GetHook()) {
			if e.Name() == spec.GetName() {
				ext = e
			}
		}
		if ext == nil {
			if !spec.GetDisabled() {
				t.Errorf("conformance: %s at %s is declared but not wired", spec.GetName(), info.Name)
			}
			continue
		}
		call := &exocortexv1.HookCall{Extension: ext.Name(), Context: &exocortexv1.Context{SessionId: "conformance", Hook: info.Name, Iteration: 1}}
		resp, err := CallHook(ctx, ext, call)
		if err != nil {
			t.Errorf("conformance: %s at %s: %v", ext.Name(), info.Name, err)
			continue
		}
		if resp.ProtoReflect().Descriptor() != info.Response {
			t.Errorf("conformance: %s at %s answered %s, want %s", ext.Name(), info.Name, resp.ProtoReflect().Descriptor().FullName(), info.Response.FullName())
		}
		if u := resp.ProtoReflect().GetUnknown(); len(u) > 0 {
			t.Errorf("conformance: %s at %s answered fields its hook does not have (%d bytes)", ext.Name(), info.Name, len(u))
		}
		if ch, ok := resp.(interface {
			GetChanges() *exocortexv1.StateChanges
		}); ok {
			if err := store.Apply(ext.Access, ch.GetChanges()); err != nil {
				t.Errorf("conformance: the host's store refuses %s's changes: %v", ext.Name(), err)
			}
		}
	}
	for _, tool := range m.GetTools() {
		if !tool.GetImplemented() {
			t.Errorf("conformance: tool %s is declared without an implementation", tool.GetName())
		}
	}
}

// CallHook calls ext at its hook with a request that carries only call, through
// the host (deadline, crash handling), and returns the response.
func CallHook(ctx context.Context, ext *host.Extension, call *exocortexv1.HookCall) (proto.Message, error) {
	switch ext.Hook.Hook {
	case exocortexv1.Hook_HOOK_AGENT_INIT:
		return host.Call(ctx, ext, &exocortexv1.AgentInitRequest{Call: call}, exocortexv1.PluginClient.AgentInit)
	case exocortexv1.Hook_HOOK_MONOLOGUE_START:
		return host.Call(ctx, ext, &exocortexv1.MonologueStartRequest{Call: call, UserMessage: &exocortexv1.Message{Role: "user", Content: "hello"}}, exocortexv1.PluginClient.MonologueStart)
	case exocortexv1.Hook_HOOK_HIST_ADD_BEFORE:
		return host.Call(ctx, ext, &exocortexv1.HistAddBeforeRequest{Call: call, Message: &exocortexv1.Message{Role: "user", Content: "hello"}}, exocortexv1.PluginClient.HistAddBefore)
	case exocortexv1.Hook_HOOK_MESSAGE_LOOP_START:
		return host.Call(ctx, ext, &exocortexv1.MessageLoopStartRequest{Call: call, Iteration: 1}, exocortexv1.PluginClient.MessageLoopStart)
	case exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE:
		return host.Call(ctx, ext, &exocortexv1.MessageLoopPromptsBeforeRequest{Call: call, Iteration: 1}, exocortexv1.PluginClient.MessageLoopPromptsBefore)
	case exocortexv1.Hook_HOOK_SYSTEM_PROMPT:
		return host.Call(ctx, ext, &exocortexv1.SystemPromptRequest{Call: call, SystemPrompt: "You are a test agent."}, exocortexv1.PluginClient.SystemPrompt)
	case exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER:
		return host.Call(ctx, ext, &exocortexv1.MessageLoopPromptsAfterRequest{Call: call, Iteration: 1, NumCtx: 8192, PromptTokens: 100}, exocortexv1.PluginClient.MessageLoopPromptsAfter)
	case exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL:
		return host.Call(ctx, ext, &exocortexv1.BeforeMainLLMCallRequest{Call: call, Iteration: 1, NumCtx: 8192, PromptTokens: 100}, exocortexv1.PluginClient.BeforeMainLLMCall)
	case exocortexv1.Hook_HOOK_RESPONSE_STREAM_CHUNK:
		return host.Call(ctx, ext, &exocortexv1.ResponseStreamChunkRequest{Call: call, Delta: "{", Text: "{"}, exocortexv1.PluginClient.ResponseStreamChunk)
	case exocortexv1.Hook_HOOK_RESPONSE_STREAM_END:
		return host.Call(ctx, ext, &exocortexv1.ResponseStreamEndRequest{Call: call, Text: "{}"}, exocortexv1.PluginClient.ResponseStreamEnd)
	case exocortexv1.Hook_HOOK_ERROR_FORMAT:
		return host.Call(ctx, ext, &exocortexv1.ErrorFormatRequest{Call: call, Reply: "prose", Error: "no JSON object", Fault: "no_json_object"}, exocortexv1.PluginClient.ErrorFormat)
	case exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE:
		return host.Call(ctx, ext, &exocortexv1.ToolExecuteBeforeRequest{Call: call, ToolCall: &exocortexv1.ToolCall{Name: "response", ArgsJson: `{"text":"hi"}`}}, exocortexv1.PluginClient.ToolExecuteBefore)
	case exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER:
		return host.Call(ctx, ext, &exocortexv1.ToolExecuteAfterRequest{Call: call, ToolCall: &exocortexv1.ToolCall{Name: "response", ArgsJson: `{"text":"hi"}`}, Result: &exocortexv1.ToolResult{Content: "hi"}}, exocortexv1.PluginClient.ToolExecuteAfter)
	case exocortexv1.Hook_HOOK_MESSAGE_LOOP_END:
		return host.Call(ctx, ext, &exocortexv1.MessageLoopEndRequest{Call: call, Iteration: 1}, exocortexv1.PluginClient.MessageLoopEnd)
	case exocortexv1.Hook_HOOK_MONOLOGUE_END:
		return host.Call(ctx, ext, &exocortexv1.MonologueEndRequest{Call: call, FinalResponse: "hi"}, exocortexv1.PluginClient.MonologueEnd)
	}
	return nil, fmt.Errorf("conformance: no request for hook %v", ext.Hook.Hook)
}

func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

// lockedBuffer collects log output written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
