package sdk_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/protocol"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

const testPluginPkg = "github.com/exocortex/exocortex/sdk/internal/testplugin"

// startPlugin starts bin as the host does and returns the go-plugin client and the
// protocol client.
func startPlugin(t testing.TB, bin string, hostLog *sdktest.Buffer) (*plugin.Client, exocortexv1.PluginClient) {
	t.Helper()
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  protocol.Handshake(),
		VersionedPlugins: protocol.PluginSet(nil),
		Cmd:              exec.Command(bin),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hclog.New(&hclog.LoggerOptions{Output: hostLog, Level: hclog.Info, JSONFormat: true}),
	})
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatalf("start %s: %v\nhost log:\n%s", bin, err, hostLog)
	}
	raw, err := rpc.Dispense(protocol.PluginName)
	if err != nil {
		t.Fatalf("dispense %s: %v", bin, err)
	}
	return client, raw.(exocortexv1.PluginClient)
}

func TestRealPluginProcess(t *testing.T) {
	bin := sdktest.BuildPlugin(t, testPluginPkg)
	hostLog := &sdktest.Buffer{}
	client, pc := startPlugin(t, bin, hostLog)

	m, err := pc.Manifest(t.Context(), &exocortexv1.ManifestRequest{ProtocolVersion: sdk.ProtocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	if m.GetPlugin() != "testplugin" || len(m.GetExtensions()) != 1 || len(m.GetTools()) != 3 {
		t.Fatalf("manifest: %v", m)
	}

	call := sdktest.Call("probe")
	resp, err := pc.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{Call: call, Iteration: 3})
	if err != nil || resp.GetIntervention() != "iteration 3" {
		t.Fatalf("probe: %v, %v", resp, err)
	}

	// A panic is an error for this call only: the process keeps serving.
	_, err = pc.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{Call: sdktest.Call("probe"), Reply: "panic"})
	if err == nil || !strings.Contains(err.Error(), "probe was asked to panic") {
		t.Fatalf("panic: got %v", err)
	}
	if client.Exited() {
		t.Fatal("the plugin process exited after a panic in an extension")
	}
	// One processor unless the environment says otherwise (Plugin.Procs).
	if os.Getenv("GOMAXPROCS") == "" {
		pr, err := pc.ExecuteTool(t.Context(), &exocortexv1.ExecuteToolRequest{Call: sdktest.Call(""),
			ToolCall: &exocortexv1.ToolCall{Name: "procs", ArgsJson: `{}`}})
		if err != nil || pr.GetResult().GetContent() != "1" {
			t.Errorf("the plugin's GOMAXPROCS: %v, %v; want 1", pr.GetResult().GetContent(), err)
		}
	}
	tr, err := pc.ExecuteTool(t.Context(), &exocortexv1.ExecuteToolRequest{Call: sdktest.Call(""),
		ToolCall: &exocortexv1.ToolCall{Name: "echo", ArgsJson: `{"a":1}`}})
	if err != nil || tr.GetResult().GetContent() != `{"a":1}` {
		t.Fatalf("echo: %v, %v", tr, err)
	}

	// The extension's log line reaches the host's log as a structured Info record.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if rec := findLogRecord(hostLog.String(), "probe called"); rec != nil {
			if rec["@level"] != "info" || rec["extension"] != "probe" || rec["hook"] != "message_loop_end" || rec["iteration"] != float64(3) {
				t.Errorf("host log record: %v", rec)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no \"probe called\" record in the host log:\n%s", hostLog)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if strings.Contains(hostLog.String(), `"@level":"trace"`) || strings.Contains(hostLog.String(), `"@level":"debug"`) {
		t.Errorf("the plugin logged below Info:\n%s", hostLog)
	}
}

// findLogRecord returns the first JSON record of the log whose message is msg.
func findLogRecord(log, msg string) map[string]any {
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["@message"] == msg {
			return rec
		}
	}
	return nil
}

// TestPluginExitsWhenHostDies starts a host in a child process (this test binary,
// running TestHelperHost), lets the host start the plugin and then die without
// stopping it, and checks that the orphaned plugin exits on its own.
func TestPluginExitsWhenHostDies(t *testing.T) {
	bin := sdktest.BuildPlugin(t, testPluginPkg)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHost$")
	cmd.Env = append(os.Environ(), "SDK_TEST_HELPER_HOST_PLUGIN="+bin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper host: %v\n%s", err, out)
	}
	hostDied := time.Now()
	var pid int
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "PLUGIN_PID "); ok {
			pid, _ = strconv.Atoi(rest)
		}
	}
	if pid == 0 {
		t.Fatalf("helper host printed no plugin pid:\n%s", out)
	}
	t.Cleanup(func() {
		if processRunning(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	for processRunning(pid) {
		if time.Since(hostDied) > 5*time.Second {
			t.Fatalf("plugin %d still runs %v after its host died", pid, time.Since(hostDied))
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Logf("plugin exited %v after its host", time.Since(hostDied).Round(time.Millisecond))
}

// TestHelperHost is the host of TestPluginExitsWhenHostDies; it does nothing in an
// ordinary run.
func TestHelperHost(t *testing.T) {
	bin := os.Getenv("SDK_TEST_HELPER_HOST_PLUGIN")
	if bin == "" {
		t.Skip("helper process for TestPluginExitsWhenHostDies")
	}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  protocol.Handshake(),
		VersionedPlugins: protocol.PluginSet(nil),
		Cmd:              exec.Command(bin),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hclog.NewNullLogger(),
	})
	if _, err := client.Client(); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	fmt.Printf("PLUGIN_PID %d\n", client.ReattachConfig().Pid)
	// Die without stopping the plugin, as a crashed host would.
	os.Exit(0)
}

// processRunning reports whether pid is a live process (not gone, not a zombie).
func processRunning(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || (stat[i+2] != 'Z' && stat[i+2] != 'X')
}

// TestStartRunsBesideServing: a plugin's Start runs in the background from the
// moment the process starts: a Start that never returns by itself delays
// neither the handshake nor the calls the host makes meanwhile.
func TestStartRunsBesideServing(t *testing.T) {
	bin := sdktest.BuildPlugin(t, testPluginPkg)
	_, pc := startPlugin(t, bin, &sdktest.Buffer{})
	call := sdktest.Call("probe")
	resp, err := pc.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{Call: call, Iteration: 1})
	if err != nil || resp.GetIntervention() != "iteration 1" {
		t.Fatalf("a hook while Start runs: %v, %v", resp, err)
	}
	tr, err := pc.ExecuteTool(t.Context(), &exocortexv1.ExecuteToolRequest{Call: sdktest.Call(""),
		ToolCall: &exocortexv1.ToolCall{Name: "started", ArgsJson: `{}`}})
	if err != nil || tr.GetResult().GetContent() != "true" {
		t.Fatalf("Start did not run when the process started: %v, %v", tr.GetResult().GetContent(), err)
	}
}

// TestCloseRunsOnGracefulStop: when the host stops a healthy plugin, the plugin's
// Close runs before the process exits (the memory plugin closes its index there),
// after Start's context ended (the test plugin's Start returns only then).
func TestCloseRunsOnGracefulStop(t *testing.T) {
	bin := sdktest.BuildPlugin(t, testPluginPkg)
	marker := filepath.Join(t.TempDir(), "closed")
	t.Setenv("SDK_TEST_CLOSE_MARKER", marker)
	client, _ := startPlugin(t, bin, &sdktest.Buffer{})
	client.Kill()
	b, err := os.ReadFile(marker)
	if err != nil || string(b) != "closed" {
		t.Fatalf("Close did not run on a graceful stop: %v %q", err, b)
	}
}
