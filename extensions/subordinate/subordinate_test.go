package subordinate

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/protocol"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// fakeHost is the host's side of the Host service, as a test double of the loop
// that runs the child agent.
type fakeHost struct {
	exocortexv1.UnimplementedHostServer
	mu   sync.Mutex
	seen []*exocortexv1.RunSubordinateRequest
	resp *exocortexv1.RunSubordinateResponse
	err  error
}

func (h *fakeHost) RunSubordinate(_ context.Context, req *exocortexv1.RunSubordinateRequest) (*exocortexv1.RunSubordinateResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = append(h.seen, req)
	return h.resp, h.err
}

// serveWithHost serves the tool over a real gRPC connection whose broker also
// carries the Host service back to the plugin, as the host sets it up.
func serveWithHost(t *testing.T, host exocortexv1.HostServer) exocortexv1.PluginClient {
	t.Helper()
	srv, err := sdk.NewServer(sdk.Plugin{Name: "sub", Version: "test", Tools: []sdk.Tool{Tool()},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	client, _ := plugin.TestPluginGRPCConn(t, false, plugin.PluginSet{protocol.PluginName: &protocol.GRPCPlugin{Impl: srv, Host: host}})
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense(protocol.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(exocortexv1.PluginClient)
}

func call(t *testing.T, client exocortexv1.PluginClient, args string) *exocortexv1.ToolResult {
	t.Helper()
	hc := sdktest.Call(ToolName)
	hc.Context.AgentProfile = "default"
	resp, err := client.ExecuteTool(t.Context(), &exocortexv1.ExecuteToolRequest{Call: hc,
		ToolCall: &exocortexv1.ToolCall{Name: ToolName, ArgsJson: args}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetResult()
}

func TestCallSubordinate(t *testing.T) {
	host := &fakeHost{resp: &exocortexv1.RunSubordinateResponse{Response: "The log has 3 errors.", Iterations: 2}}
	client := serveWithHost(t, host)
	res := call(t, client, `{"message":"Count the errors in app.log.","reset":"true","profile":"researcher"}`)
	if res.GetError() != "" || res.GetContent() != "The log has 3 errors." {
		t.Fatalf("result %q, error %q", res.GetContent(), res.GetError())
	}
	if len(host.seen) != 1 {
		t.Fatalf("the host got %d requests", len(host.seen))
	}
	req := host.seen[0]
	if req.GetMessage() != "Count the errors in app.log." || req.GetProfile() != "researcher" || !req.GetFresh() ||
		req.GetContext().GetSessionId() != "sdktest-session" || req.GetContext().GetAgentProfile() != "default" {
		t.Errorf("request: %v", req)
	}

	host.resp = &exocortexv1.RunSubordinateResponse{Response: "Partial: 2 files read.", StopReason: "max iterations (25) reached", Iterations: 25}
	res = call(t, client, `{"message":"Summarize everything."}`)
	if !strings.Contains(res.GetError(), "the subordinate did not finish: max iterations (25) reached") ||
		res.GetContent() != "Partial: 2 files read.\n[the subordinate stopped without a final answer after 25 iteration(s): max iterations (25) reached]" {
		t.Errorf("stopped child: %q, error %q", res.GetContent(), res.GetError())
	}
	if host.seen[1].GetFresh() {
		t.Errorf("reset defaulted to true")
	}

	host.resp, host.err = nil, status.Error(codes.FailedPrecondition, "subordinates may not nest deeper than 3")
	res = call(t, client, `{"message":"x"}`)
	if res.GetError() != "call_subordinate: the subordinate could not run: subordinates may not nest deeper than 3" {
		t.Errorf("host error: %q", res.GetError())
	}
	if res := call(t, client, `{"message":"  "}`); !strings.Contains(res.GetError(), `"message" is empty`) {
		t.Errorf("empty message: %q", res.GetError())
	}
}
