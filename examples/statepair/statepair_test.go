package statepair_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/protocol"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// start runs a plugin binary as the host does.
func start(t *testing.T, pkg string) exocortexv1.PluginClient {
	t.Helper()
	bin := sdktest.BuildPlugin(t, pkg)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  protocol.Handshake(),
		VersionedPlugins: protocol.PluginSet(nil),
		Cmd:              exec.Command(bin),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hclog.New(&hclog.LoggerOptions{Output: t.Output(), Level: hclog.Info}),
	})
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatalf("start %s: %v", pkg, err)
	}
	raw, err := rpc.Dispense(protocol.PluginName)
	if err != nil {
		t.Fatalf("dispense %s: %v", pkg, err)
	}
	return raw.(exocortexv1.PluginClient)
}

func TestWriterStateReachesReader(t *testing.T) {
	writer := start(t, "github.com/exocortex/exocortex/examples/statepair/writer")
	reader := start(t, "github.com/exocortex/exocortex/examples/statepair/reader")

	// The host's part: keep the latest value of failure_tracker and hand it to
	// whoever declared it.
	var stored *exocortexv1.StateEntry
	stateFor := func() []*exocortexv1.StateEntry {
		if stored == nil {
			return nil
		}
		return []*exocortexv1.StateEntry{stored}
	}
	for i, toolErr := range []string{"exit status 1", "exit status 1"} {
		resp, err := writer.ToolExecuteAfter(t.Context(), &exocortexv1.ToolExecuteAfterRequest{
			Call:     sdktest.Call("statepair_failure_counter", stateFor()...),
			ToolCall: &exocortexv1.ToolCall{Name: "shell"},
			Result:   &exocortexv1.ToolResult{Error: toolErr},
		})
		if err != nil {
			t.Fatal(err)
		}
		if w := resp.GetChanges().GetWrites(); len(w) == 1 && w[0].GetKey() == "failure_tracker" {
			stored = w[0]
		} else {
			t.Fatalf("call %d: writes %v", i, w)
		}

		end, err := reader.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{
			Call: sdktest.Call("statepair_failure_alarm", stateFor()...), Iteration: int32(i + 1)})
		if err != nil {
			t.Fatal(err)
		}
		switch i {
		case 0:
			if end.Intervention != nil {
				t.Errorf("after one failure: intervention %q", end.GetIntervention())
			}
		case 1:
			if !strings.Contains(end.GetIntervention(), "shell (2 times)") {
				t.Errorf("after two failures: intervention %q", end.GetIntervention())
			}
		}
	}
}
