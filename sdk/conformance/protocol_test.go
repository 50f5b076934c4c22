package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/exocortex/exocortex/core/discover"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/protocol"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// bareClient starts a discovered plugin with go-plugin directly (no host around
// it), logging go-plugin's view at Debug into w.
func bareClient(c discover.Candidate, w io.Writer) *plugin.Client {
	cmd := exec.Command(c.Command[0], c.Command[1:]...)
	cmd.Dir = c.WorkDir
	return plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  protocol.Handshake(),
		VersionedPlugins: protocol.PluginSet(nil),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hclog.New(&hclog.LoggerOptions{Output: w, Level: hclog.Debug}),
	})
}

// startBare starts the plugin and returns its process id, leaving it running.
func startBare(c discover.Candidate, w io.Writer) (int, error) {
	client := bareClient(c, w)
	if _, err := client.Client(); err != nil {
		return 0, err
	}
	return client.ReattachConfig().Pid, nil
}

func (s *suite) testProtocol(t *testing.T) {
	c := discover.Scan([]discover.Dir{{Path: s.dir, Source: discover.User}}).Plugins[0]
	clientLog := &sdktest.Buffer{}
	client := bareClient(c, clientLog)
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatalf("handshake: %v\n%s", err, clientLog)
	}
	if client.Protocol() != plugin.ProtocolGRPC || client.NegotiatedVersion() != sdk.ProtocolVersion {
		t.Errorf("negotiated %s version %d, want grpc version %d", client.Protocol(), client.NegotiatedVersion(), sdk.ProtocolVersion)
	}
	if addr := client.ReattachConfig().Addr; addr.Network() != "unix" {
		t.Errorf("the plugin listens on %s %s, want a Unix socket", addr.Network(), addr)
	}
	// go-plugin's health check (grpc.health.v1, service "plugin").
	if err := rpc.Ping(); err != nil {
		t.Errorf("health check: %v", err)
	}
	raw, err := rpc.Dispense(protocol.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	pc := raw.(exocortexv1.PluginClient)

	// The same manifest, byte for byte, every time it is asked; and the host's.
	var first []byte
	for i := range 3 {
		m, err := pc.Manifest(t.Context(), &exocortexv1.ManifestRequest{ProtocolVersion: sdk.ProtocolVersion})
		if err != nil {
			t.Fatal(err)
		}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
			if !proto.Equal(m, s.p.Manifest()) {
				t.Errorf("a second process answered another manifest: %v", m)
			}
		} else if !bytes.Equal(b, first) {
			t.Errorf("manifest %d differs from the first", i)
		}
	}
	_, err = pc.Manifest(t.Context(), &exocortexv1.ManifestRequest{ProtocolVersion: 2})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "protocol version") {
		t.Errorf("manifest for protocol version 2: got %v, want FailedPrecondition naming the version", err)
	}

	// A graceful stop: the host asks through go-plugin's controller and the process
	// exits by itself, without being killed.
	pid := client.ReattachConfig().Pid
	client.Kill()
	if !client.Exited() || processRunning(pid) {
		t.Errorf("the plugin process %d still runs after Kill", pid)
	}
	for _, bad := range []string{"plugin failed to exit gracefully", "stdio service not available", "[ERROR]", "[WARN]"} {
		if strings.Contains(clientLog.String(), bad) {
			t.Errorf("go-plugin's log has %q:\n%s", bad, clientLog)
		}
	}
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

func killIfRunning(pid int) {
	if processRunning(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
