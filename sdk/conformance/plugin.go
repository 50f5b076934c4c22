package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/state"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/protocol"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// Plugin holds the one plugin in pluginDir to what every plugin owes the host,
// whatever its extensions do. It is the part of the suite that fits any plugin, so a
// plugin's own tests (and `exocortex plugins new`'s generated ones) can run it:
//
//   - protocol, with go-plugin directly: the gRPC handshake at the SDK's protocol
//     version, the health check, the same manifest on every request, a refusal of
//     another protocol version, InvalidArgument for a request without its
//     HookCall, NotFound for an extension it does not serve, a graceful stop;
//     when the manifest says serves_batches, InvalidArgument for a batch without
//     its hook's request and an error result for each extension it does not serve;
//     when it says serves_dispatch, a Dispatch round (see checkDispatch);
//   - through the real host: it loads and wires; every extension it declares
//     answers its own hook's request with its own response type, carrying no
//     fields the hook does not allow, and with state changes the host's store
//     accepts; every tool it declares is implemented; when it serves batches, a
//     batch of all its extensions at each hook answers as RunBatch must (see
//     checkBatch).
func Plugin(t testing.TB, pluginDir string) {
	t.Helper()
	cands := discover.Scan([]discover.Dir{{Path: pluginDir, Source: discover.User}}).Plugins
	if len(cands) != 1 {
		t.Fatalf("conformance: discovery finds %d plugins in %s, want 1", len(cands), pluginDir)
	}
	m := checkProtocol(t, cands[0])
	throughHost(t, pluginDir, m)
}

func checkProtocol(t testing.TB, c discover.Candidate) *exocortexv1.ManifestResponse {
	t.Helper()
	cmd := exec.Command(c.Command[0], c.Command[1:]...)
	cmd.Dir = c.WorkDir
	log := &sdktest.Buffer{}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig: protocol.Handshake(), VersionedPlugins: protocol.PluginSet(nil), Cmd: cmd,
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
	raw, err := rpc.Dispense(protocol.PluginName)
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
	if m1.GetServesBatches() {
		if _, err := pc.RunBatch(ctx, &exocortexv1.BatchRequest{}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("conformance: a batch without its hook's request: %v, want InvalidArgument", err)
		}
		nobody := []*exocortexv1.HookCall{{Extension: "no_such_extension_here"}, {Extension: "no_such_extension_here_either"}}
		resp, err := pc.RunBatch(ctx, batchRequest(exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, &exocortexv1.MessageLoopEndRequest{}, nobody))
		if err != nil || len(resp.GetResults()) != 2 || !failed(resp.GetResults()[0]) || !failed(resp.GetResults()[1]) {
			t.Errorf("conformance: a batch of two extensions it does not serve: %v, %v; want two results, each an error and no response "+
				"(a failure does not stop a batch)", resp, err)
		}
	} else {
		t.Logf("conformance: %s does not say it serves batches; the host calls its extensions one by one", c.Name)
	}
	if m1.GetServesDispatch() {
		checkDispatch(ctx, t, pc, m1)
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
	if m.GetServesBatches() {
		for _, info := range hooks.All() {
			if exts := h.Extensions(info.Hook); len(exts) > 0 {
				checkBatch(ctx, t, store, info, exts)
			}
		}
	}
	for _, tool := range m.GetTools() {
		if !tool.GetImplemented() {
			t.Errorf("conformance: tool %s is declared without an implementation", tool.GetName())
		}
	}
}

// checkBatch runs every extension at one hook in one batch, in the host's order, as
// the host may, and checks the answer: one result per extension that ran, in order,
// each either the hook's own response (no fields the hook does not have, state
// changes the host's store accepts) or an error; the batch went on past a result
// only if that result sets nothing but state, and stopped early only after one
// that sets more.
func checkBatch(ctx context.Context, t testing.TB, store *state.Store, info hooks.Info, exts []*host.Extension) {
	t.Helper()
	calls := make([]*exocortexv1.HookCall, len(exts))
	names := make([]string, len(exts))
	for i, e := range exts {
		names[i] = e.Name()
		calls[i] = &exocortexv1.HookCall{Extension: e.Name(), State: store.Read(e.Access),
			Context: &exocortexv1.Context{SessionId: "conformance", Hook: info.Name, Iteration: 1}}
	}
	resp, err := host.CallBatch(ctx, exts, batchRequest(info.Hook, hookRequest(info.Hook, nil), calls))
	if err != nil {
		t.Errorf("conformance: a batch of %s at %s: %v", strings.Join(names, ", "), info.Name, err)
		return
	}
	results := resp.GetResults()
	if len(results) == 0 || len(results) > len(exts) {
		t.Errorf("conformance: a batch of %d extensions at %s answered %d results", len(exts), info.Name, len(results))
		return
	}
	for i, r := range results {
		who := fmt.Sprintf("conformance: %s at %s, in a batch", names[i], info.Name)
		if failed(r) {
			continue
		}
		out := batchResponseOf(r, info.Hook)
		if out == nil || r.GetError() != "" {
			t.Errorf("%s: result %v, want either %s or an error", who, r, info.Response.FullName())
			continue
		}
		if u := out.ProtoReflect().GetUnknown(); len(u) > 0 {
			t.Errorf("%s: answered fields its hook does not have (%d bytes)", who, len(u))
		}
		if ch, ok := out.(interface {
			GetChanges() *exocortexv1.StateChanges
		}); ok {
			if err := store.Apply(exts[i].Access, ch.GetChanges()); err != nil {
				t.Errorf("%s: the host's store refuses the changes: %v", who, err)
			}
		}
		if i < len(results)-1 && !stateOnly(out) {
			t.Errorf("%s: the result sets more than state (%v), yet the batch went on to %s", who, out, names[i+1])
		}
	}
	if len(results) == len(exts) {
		return
	}
	if last := results[len(results)-1]; failed(last) || (batchResponseOf(last, info.Hook) != nil && stateOnly(batchResponseOf(last, info.Hook))) {
		t.Errorf("conformance: a batch at %s stopped after %s, whose result sets nothing but state or is an error; %s did not run",
			info.Name, names[len(results)-1], strings.Join(names[len(results):], ", "))
	}
}

// checkDispatch sends, over one Dispatch stream as the host may, a batch of every
// extension the manifest declares at each hook (in the host's order: by order,
// then name; disabled ones left out), each after the answer to the one before,
// and checks that each is answered in turn: its results are of its own hook's
// response (or errors), and, when the plugin serves RunBatch, as many and of the
// same kinds as RunBatch's answer to the same batch. Their contents are left
// alone, since an extension may answer differently each time it runs (checkBatch
// holds the results to RunBatch's rules). Closing the sending side must end the
// stream cleanly, and a batch without its hook's request ends one with
// InvalidArgument, as RunBatch refuses it.
func checkDispatch(ctx context.Context, t testing.TB, pc exocortexv1.PluginClient, m *exocortexv1.ManifestResponse) {
	t.Helper()
	stream, err := pc.Dispatch(ctx)
	if err != nil {
		t.Errorf("conformance: opening a Dispatch stream (the manifest says serves_dispatch): %v", err)
		return
	}
	byHook := map[exocortexv1.Hook][]*exocortexv1.ExtensionSpec{}
	for _, e := range m.GetExtensions() {
		if !e.GetDisabled() {
			byHook[e.GetHook()] = append(byHook[e.GetHook()], e)
		}
	}
	for _, info := range hooks.All() {
		specs := byHook[info.Hook]
		if len(specs) == 0 {
			continue
		}
		sort.SliceStable(specs, func(i, j int) bool {
			if specs[i].GetOrder() != specs[j].GetOrder() {
				return specs[i].GetOrder() < specs[j].GetOrder()
			}
			return specs[i].GetName() < specs[j].GetName()
		})
		names := make([]string, len(specs))
		calls := make([]*exocortexv1.HookCall, len(specs))
		for i, e := range specs {
			names[i] = e.GetName()
			calls[i] = &exocortexv1.HookCall{Extension: e.GetName(),
				Context: &exocortexv1.Context{SessionId: "conformance", Hook: info.Name, Iteration: 1}}
		}
		req := batchRequest(info.Hook, hookRequest(info.Hook, nil), calls)
		var want *exocortexv1.BatchResponse
		if m.GetServesBatches() {
			if want, err = pc.RunBatch(ctx, req); err != nil {
				t.Errorf("conformance: RunBatch of %s at %s: %v", strings.Join(names, ", "), info.Name, err)
			}
		}
		if err := stream.Send(req); err != nil {
			t.Errorf("conformance: Dispatch: sending the batch at %s: %v", info.Name, err)
			return
		}
		got, err := stream.Recv()
		if err != nil {
			t.Errorf("conformance: Dispatch: the batch of %s at %s: %v", strings.Join(names, ", "), info.Name, err)
			return
		}
		results := got.GetResults()
		if len(results) == 0 || len(results) > len(calls) {
			t.Errorf("conformance: Dispatch: a batch of %d extensions at %s answered %d results", len(calls), info.Name, len(results))
			continue
		}
		for i, r := range results {
			if !failed(r) && (batchResponseOf(r, info.Hook) == nil || r.GetError() != "") {
				t.Errorf("conformance: Dispatch: %s at %s: result %v, want either %s or an error (an answer to another batch?)",
					names[i], info.Name, r, info.Response.FullName())
			}
		}
		if want != nil && !sameKinds(got, want) {
			t.Errorf("conformance: Dispatch: the batch of %s at %s answered %s; RunBatch answers the same batch %s",
				strings.Join(names, ", "), info.Name, kinds(got), kinds(want))
		}
	}
	if err := stream.CloseSend(); err != nil {
		t.Errorf("conformance: Dispatch: closing the sending side: %v", err)
		return
	}
	if resp, err := stream.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("conformance: Dispatch: after the host closed its side: %v, %v; want the stream to end cleanly", resp, err)
	}

	stream, err = pc.Dispatch(ctx)
	if err == nil {
		err = stream.Send(&exocortexv1.BatchRequest{})
	}
	if err != nil {
		t.Errorf("conformance: Dispatch: a second stream: %v", err)
		return
	}
	if resp, err := stream.Recv(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("conformance: Dispatch: a batch without its hook's request: %v, %v; want the stream to end with InvalidArgument", resp, err)
	}
}

// kinds describes a batch answer's results, one word each: "ok" for a response,
// "error" for a failure.
func kinds(resp *exocortexv1.BatchResponse) string {
	out := make([]string, len(resp.GetResults()))
	for i, r := range resp.GetResults() {
		out[i] = "ok"
		if failed(r) {
			out[i] = "error"
		}
	}
	return "[" + strings.Join(out, " ") + "]"
}

func sameKinds(a, b *exocortexv1.BatchResponse) bool { return kinds(a) == kinds(b) }

// failed reports whether a batch result is an extension's failure: an error and no
// response.
func failed(r *exocortexv1.BatchResult) bool {
	m := r.ProtoReflect()
	return r.GetError() != "" && m.WhichOneof(m.Descriptor().Oneofs().ByName("response")) == nil
}

// CallHook calls ext at its hook with a request that carries only call, through
// the host (deadline, crash handling), and returns the response.
func CallHook(ctx context.Context, ext *host.Extension, call *exocortexv1.HookCall) (proto.Message, error) {
	req := hookRequest(ext.Hook.Hook, call)
	switch r := req.(type) {
	case *exocortexv1.AgentInitRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.AgentInit)
	case *exocortexv1.MonologueStartRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.MonologueStart)
	case *exocortexv1.HistAddBeforeRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.HistAddBefore)
	case *exocortexv1.MessageLoopStartRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.MessageLoopStart)
	case *exocortexv1.MessageLoopPromptsBeforeRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.MessageLoopPromptsBefore)
	case *exocortexv1.SystemPromptRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.SystemPrompt)
	case *exocortexv1.MessageLoopPromptsAfterRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.MessageLoopPromptsAfter)
	case *exocortexv1.BeforeMainLLMCallRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.BeforeMainLLMCall)
	case *exocortexv1.ResponseStreamChunkRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.ResponseStreamChunk)
	case *exocortexv1.ResponseStreamEndRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.ResponseStreamEnd)
	case *exocortexv1.ErrorFormatRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.ErrorFormat)
	case *exocortexv1.ToolExecuteBeforeRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.ToolExecuteBefore)
	case *exocortexv1.ToolExecuteAfterRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.ToolExecuteAfter)
	case *exocortexv1.MessageLoopEndRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.MessageLoopEnd)
	case *exocortexv1.MonologueEndRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.MonologueEnd)
	case *exocortexv1.ChatModelCallBeforeRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.ChatModelCallBefore)
	case *exocortexv1.ChatModelCallAfterRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.ChatModelCallAfter)
	case *exocortexv1.UtilModelCallBeforeRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.UtilModelCallBefore)
	case *exocortexv1.UtilModelCallAfterRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.UtilModelCallAfter)
	case *exocortexv1.ReasoningStreamChunkRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.ReasoningStreamChunk)
	case *exocortexv1.ReasoningStreamRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.ReasoningStream)
	case *exocortexv1.ReasoningStreamEndRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.ReasoningStreamEnd)
	case *exocortexv1.ResponseStreamRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.ResponseStream)
	case *exocortexv1.MessageLoopExceptionRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.MessageLoopException)
	case *exocortexv1.ProcessChainEndRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.ProcessChainEnd)
	case *exocortexv1.HistAddToolResultRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.HistAddToolResult)
	case *exocortexv1.ToolOutputUpdateRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.ToolOutputUpdate)
	case *exocortexv1.TextEditorReadAfterRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.TextEditorReadAfter)
	case *exocortexv1.TextEditorWriteBeforeRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.TextEditorWriteBefore)
	case *exocortexv1.TextEditorWriteAfterRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.TextEditorWriteAfter)
	case *exocortexv1.TextEditorPatchBeforeRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.TextEditorPatchBefore)
	case *exocortexv1.TextEditorPatchAfterRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.TextEditorPatchAfter)
	case *exocortexv1.EmbeddingModelChangedRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.EmbeddingModelChanged)
	case *exocortexv1.HistoryCompressBeforeRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.HistoryCompressBefore)
	case *exocortexv1.ToolApprovalRequestRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.ToolApprovalRequest)
	case *exocortexv1.OperatorNotificationRequest:
		return host.Call(ctx, ext, r, exocortexv1.PluginClient.OperatorNotification)
	}
	return nil, fmt.Errorf("conformance: no request for hook %v", ext.Hook.Hook)
}

// hookRequest is a plausible request at hook carrying call; nil for an unknown
// hook.
func hookRequest(hook exocortexv1.Hook, call *exocortexv1.HookCall) proto.Message {
	switch hook {
	case exocortexv1.Hook_HOOK_AGENT_INIT:
		return &exocortexv1.AgentInitRequest{Call: call}
	case exocortexv1.Hook_HOOK_MONOLOGUE_START:
		return &exocortexv1.MonologueStartRequest{Call: call, UserMessage: &exocortexv1.Message{Role: "user", Content: "hello"}}
	case exocortexv1.Hook_HOOK_HIST_ADD_BEFORE:
		return &exocortexv1.HistAddBeforeRequest{Call: call, Message: &exocortexv1.Message{Role: "user", Content: "hello"}}
	case exocortexv1.Hook_HOOK_MESSAGE_LOOP_START:
		return &exocortexv1.MessageLoopStartRequest{Call: call, Iteration: 1}
	case exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE:
		return &exocortexv1.MessageLoopPromptsBeforeRequest{Call: call, Iteration: 1}
	case exocortexv1.Hook_HOOK_SYSTEM_PROMPT:
		return &exocortexv1.SystemPromptRequest{Call: call, SystemPrompt: "You are a test agent."}
	case exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER:
		return &exocortexv1.MessageLoopPromptsAfterRequest{Call: call, Iteration: 1, NumCtx: 8192, PromptTokens: 100}
	case exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL:
		return &exocortexv1.BeforeMainLLMCallRequest{Call: call, Iteration: 1, NumCtx: 8192, PromptTokens: 100}
	case exocortexv1.Hook_HOOK_RESPONSE_STREAM_CHUNK:
		return &exocortexv1.ResponseStreamChunkRequest{Call: call, Delta: "{", Text: "{"}
	case exocortexv1.Hook_HOOK_RESPONSE_STREAM_END:
		return &exocortexv1.ResponseStreamEndRequest{Call: call, Text: "{}"}
	case exocortexv1.Hook_HOOK_ERROR_FORMAT:
		return &exocortexv1.ErrorFormatRequest{Call: call, Reply: "prose", Error: "no JSON object", Fault: "no_json_object"}
	case exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE:
		return &exocortexv1.ToolExecuteBeforeRequest{Call: call, ToolCall: &exocortexv1.ToolCall{Name: "response", ArgsJson: `{"text":"hi"}`}}
	case exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER:
		return &exocortexv1.ToolExecuteAfterRequest{Call: call, ToolCall: &exocortexv1.ToolCall{Name: "response", ArgsJson: `{"text":"hi"}`}, Result: &exocortexv1.ToolResult{Content: "hi"}}
	case exocortexv1.Hook_HOOK_MESSAGE_LOOP_END:
		return &exocortexv1.MessageLoopEndRequest{Call: call, Iteration: 1}
	case exocortexv1.Hook_HOOK_MONOLOGUE_END:
		return &exocortexv1.MonologueEndRequest{Call: call, FinalResponse: "hi"}
	case exocortexv1.Hook_HOOK_CHAT_MODEL_CALL_BEFORE:
		return &exocortexv1.ChatModelCallBeforeRequest{Call: call, Iteration: 1, Model: "m", NumCtx: 8192, PromptTokens: 100}
	case exocortexv1.Hook_HOOK_CHAT_MODEL_CALL_AFTER:
		return &exocortexv1.ChatModelCallAfterRequest{Call: call, Iteration: 1, Model: "m", Response: "{}"}
	case exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_BEFORE:
		return &exocortexv1.UtilModelCallBeforeRequest{Call: call, Iteration: 1, Purpose: "compress_history", Model: "u", System: "Summarise.", Message: "a: b"}
	case exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_AFTER:
		return &exocortexv1.UtilModelCallAfterRequest{Call: call, Iteration: 1, Purpose: "compress_history", Model: "u", Response: "- b"}
	case exocortexv1.Hook_HOOK_REASONING_STREAM_CHUNK:
		return &exocortexv1.ReasoningStreamChunkRequest{Call: call, Delta: "hm", Text: "hm"}
	case exocortexv1.Hook_HOOK_REASONING_STREAM:
		return &exocortexv1.ReasoningStreamRequest{Call: call, Text: "hm"}
	case exocortexv1.Hook_HOOK_REASONING_STREAM_END:
		return &exocortexv1.ReasoningStreamEndRequest{Call: call, Text: "hm"}
	case exocortexv1.Hook_HOOK_RESPONSE_STREAM:
		return &exocortexv1.ResponseStreamRequest{Call: call, Text: "{"}
	case exocortexv1.Hook_HOOK_MESSAGE_LOOP_EXCEPTION:
		return &exocortexv1.MessageLoopExceptionRequest{Call: call, Iteration: 1, Error: "model m: connection refused", Stage: "model"}
	case exocortexv1.Hook_HOOK_PROCESS_CHAIN_END:
		return &exocortexv1.ProcessChainEndRequest{Call: call, FinalResponse: "hi", Iterations: 1}

	case exocortexv1.Hook_HOOK_HIST_ADD_TOOL_RESULT:
		return &exocortexv1.HistAddToolResultRequest{Call: call, ToolCall: &exocortexv1.ToolCall{Name: "response"}, Result: &exocortexv1.ToolResult{Content: "hi"}, Text: "hi"}
	case exocortexv1.Hook_HOOK_TOOL_OUTPUT_UPDATE:
		return &exocortexv1.ToolOutputUpdateRequest{Call: call, ToolCall: &exocortexv1.ToolCall{Name: "code_execution"}, Delta: "b", Output: "ab"}
	case exocortexv1.Hook_HOOK_TEXT_EDITOR_READ_AFTER:
		return &exocortexv1.TextEditorReadAfterRequest{Call: call, ToolCall: &exocortexv1.ToolCall{Name: "text_editor"}, Path: "a.txt", LineFrom: 1, LineTo: 2, Content: "1: a"}
	case exocortexv1.Hook_HOOK_TEXT_EDITOR_WRITE_BEFORE:
		return &exocortexv1.TextEditorWriteBeforeRequest{Call: call, ToolCall: &exocortexv1.ToolCall{Name: "text_editor"}, Path: "a.txt", Content: "a"}
	case exocortexv1.Hook_HOOK_TEXT_EDITOR_WRITE_AFTER:
		return &exocortexv1.TextEditorWriteAfterRequest{Call: call, ToolCall: &exocortexv1.ToolCall{Name: "text_editor"}, Path: "a.txt", Content: "a", Result: &exocortexv1.ToolResult{Content: "wrote a.txt"}}
	case exocortexv1.Hook_HOOK_TEXT_EDITOR_PATCH_BEFORE:
		return &exocortexv1.TextEditorPatchBeforeRequest{Call: call, ToolCall: &exocortexv1.ToolCall{Name: "text_editor"}, Path: "a.txt", OldText: "a", NewText: "b"}
	case exocortexv1.Hook_HOOK_TEXT_EDITOR_PATCH_AFTER:
		return &exocortexv1.TextEditorPatchAfterRequest{Call: call, ToolCall: &exocortexv1.ToolCall{Name: "text_editor"}, Path: "a.txt", OldText: "a", NewText: "b", Result: &exocortexv1.ToolResult{Content: "patched a.txt"}}
	case exocortexv1.Hook_HOOK_EMBEDDING_MODEL_CHANGED:
		return &exocortexv1.EmbeddingModelChangedRequest{Call: call, OldModel: "glove-100d", NewModel: "nomic-embed-text", OldDims: 100, NewDims: 768}
	case exocortexv1.Hook_HOOK_HISTORY_COMPRESS_BEFORE:
		return &exocortexv1.HistoryCompressBeforeRequest{Call: call, Trigger: "auto", To: 1, Leaving: []*exocortexv1.Message{{Role: "user", Content: "a"}}}
	case exocortexv1.Hook_HOOK_TOOL_APPROVAL_REQUEST:
		return &exocortexv1.ToolApprovalRequestRequest{Call: call, ToolCall: &exocortexv1.ToolCall{Name: "code_execution"}, Action: "ls", Mode: "default"}
	case exocortexv1.Hook_HOOK_OPERATOR_NOTIFICATION:
		return &exocortexv1.OperatorNotificationRequest{Call: call, Kind: "permission_prompt", Message: "approve?"}
	}
	return nil
}

// batchRequest builds the RunBatch request of hook: req (a request of that hook,
// whose call is ignored) once, and calls. It panics when req is not hook's request.
func batchRequest(hook exocortexv1.Hook, req proto.Message, calls []*exocortexv1.HookCall) *exocortexv1.BatchRequest {
	out := &exocortexv1.BatchRequest{Calls: calls}
	m := out.ProtoReflect()
	fd := m.Descriptor().Fields().ByName(hookField(hook))
	if fd == nil || fd.ContainingOneof() == nil || fd.Message() != req.ProtoReflect().Descriptor() {
		panic(fmt.Sprintf("conformance: %s is not the request of hook %v", req.ProtoReflect().Descriptor().FullName(), hook))
	}
	req = proto.Clone(req)
	r := req.ProtoReflect()
	r.Clear(r.Descriptor().Fields().ByName("call"))
	m.Set(fd, protoreflect.ValueOfMessage(r))
	return out
}

// batchResponseOf returns the response a batch result holds for hook, or nil when
// it holds none (the extension failed) or one of another hook.
func batchResponseOf(res *exocortexv1.BatchResult, hook exocortexv1.Hook) proto.Message {
	m := res.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("response"))
	if fd == nil || fd.Name() != hookField(hook) {
		return nil
	}
	return m.Get(fd).Message().Interface()
}

// stateOnly reports whether a hook response sets nothing but its state changes:
// the results a batch goes on after.
func stateOnly(resp proto.Message) bool {
	m := resp.ProtoReflect()
	only := true
	m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		only = fd.Name() == "changes"
		return only
	})
	return only && len(m.GetUnknown()) == 0
}

func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

// hookField is the name of the BatchRequest and BatchResult field that holds
// hook's message: the hook's snake_case name.
func hookField(hook exocortexv1.Hook) protoreflect.Name {
	return protoreflect.Name(strings.ToLower(strings.TrimPrefix(hook.String(), "HOOK_")))
}
