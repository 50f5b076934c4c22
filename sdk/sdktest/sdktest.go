// Package sdktest tests Exocortex extensions through the real protocol.
//
// Serve runs a sdk.Plugin in the test process behind a real gRPC connection (the one
// go-plugin sets up between a host and a plugin) and returns the generated client,
// so a test calls the extension exactly as the host does:
//
//	func TestCountsFailures(t *testing.T) {
//		client := sdktest.Serve(t, plugin())
//		tracker := sdk.KeyOf[*exocortexv1.FailureTracker]()
//		resp, err := client.ToolExecuteAfter(t.Context(), &exocortexv1.ToolExecuteAfterRequest{
//			Call:     sdktest.Call("failure_counter", sdktest.State(tracker, &exocortexv1.FailureTracker{})),
//			ToolCall: &exocortexv1.ToolCall{Name: "shell"},
//			Result:   &exocortexv1.ToolResult{Error: "exit status 1"},
//		})
//		if err != nil {
//			t.Fatal(err)
//		}
//		got, ok := sdktest.Written(t, resp.GetChanges(), tracker)
//		// ...
//	}
//
// BuildPlugin compiles a plugin's main package, for tests that start real plugin
// processes.
package sdktest

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/protocol"
	"github.com/exocortex/exocortex/sdk"
)

// Serve validates p, serves it in this process over a real gRPC connection, and
// returns the client the host would use. The test fails at once when p is not
// valid. Connection and server are closed when the test ends. When p.Logger is nil,
// the plugin's log goes to t.Log.
func Serve(t testing.TB, p sdk.Plugin) exocortexv1.PluginClient {
	t.Helper()
	return ServeMemory(t, p, nil)
}

// ServeMemory is Serve with memory served to the plugin as the host serves it,
// on the Host service's broker stream: the plugin's Call.Memory reaches it. Pass
// the host's gate (host.Services.MemoryFor) to test the plugin's declarations,
// or a memory service itself (memory/service.NewServer); nil serves none.
func ServeMemory(t testing.TB, p sdk.Plugin, memory exocortexv1.MemoryServiceServer) exocortexv1.PluginClient {
	t.Helper()
	if p.Logger == nil {
		p.Logger = slog.New(slog.NewTextHandler(&testWriter{t: t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	srv, err := sdk.NewServer(p)
	if err != nil {
		t.Fatal(err)
	}
	// Closing the client asks the server to stop, as a host does; stopping the
	// server as well would race with that inside go-plugin.
	//
	// The host side serves the Host service with nothing implemented, so a
	// call of it (sdk.Call.ReportOutput from a tool) is answered at once with
	// Unimplemented instead of waiting for a service nobody announces.
	set := protocol.PluginSet(srv)[sdk.ProtocolVersion]
	set[protocol.PluginName].(*protocol.GRPCPlugin).Host = noHost{}
	set[protocol.PluginName].(*protocol.GRPCPlugin).Memory = memory
	client, _ := plugin.TestPluginGRPCConn(t, false, set)
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense(protocol.PluginName)
	if err != nil {
		t.Fatalf("dispense plugin %q: %v", p.Name, err)
	}
	pc, ok := raw.(exocortexv1.PluginClient)
	if !ok {
		t.Fatalf("dispense plugin %q: got %T, want exocortexv1.PluginClient", p.Name, raw)
	}
	return pc
}

// Call builds the HookCall of a request to the named extension, with a context whose
// ids are filled in (a fresh context_id, a fixed session and request) and the given
// state entries. Set further context fields on the result as the test needs.
func Call(extension string, state ...*exocortexv1.StateEntry) *exocortexv1.HookCall {
	return &exocortexv1.HookCall{
		Extension: extension,
		Context: &exocortexv1.Context{
			ContextId:    rand.Text(),
			SessionId:    "sdktest-session",
			RequestId:    "sdktest-request",
			MessageId:    "sdktest-message",
			TimestampUtc: time.Now().UTC().Format(time.RFC3339),
			SourceEntity: &exocortexv1.SourceEntity{Id: "operator", Type: "user"},
		},
		State: state,
	}
}

// State is one state entry for Call: the key's value as the host would send it.
// It panics if v cannot be encoded, which a generated message always can.
func State[T proto.Message](k sdk.Key[T], v T) *exocortexv1.StateEntry {
	a, err := anypb.New(v)
	if err != nil {
		panic(fmt.Sprintf("sdktest.State(%s): %v", k, err))
	}
	return &exocortexv1.StateEntry{Key: k.Name(), Value: a}
}

// Written returns the value a response's changes write to the key (the last write
// if there are several); ok is false when they do not write it. The test fails when
// the value is not of the key's type.
func Written[T proto.Message](t testing.TB, changes *exocortexv1.StateChanges, k sdk.Key[T]) (v T, ok bool) {
	t.Helper()
	for _, w := range changes.GetWrites() {
		if w.GetKey() != k.Name() {
			continue
		}
		var zero T
		msg := zero.ProtoReflect().New().Interface().(T)
		if err := w.GetValue().UnmarshalTo(msg); err != nil {
			t.Fatalf("state key %q: written value of type %q is not a %s: %v", k.Name(), w.GetValue().GetTypeUrl(), k, err)
		}
		v, ok = msg, true
	}
	return v, ok
}

// WasReset reports whether a response's changes reset the key.
func WasReset(changes *exocortexv1.StateChanges, k sdk.KeyRef) bool {
	for _, r := range changes.GetResets() {
		if r == k.Name() {
			return true
		}
	}
	return false
}

// testWriter sends each log line to t.Log.
type testWriter struct {
	t  testing.TB
	mu sync.Mutex
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// noHost is a Host service that offers nothing.
type noHost struct {
	exocortexv1.UnimplementedHostServer
}
