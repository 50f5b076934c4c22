package sdk

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// ProtocolVersion is the plugin protocol this SDK speaks: package exocortex.v1.
const ProtocolVersion = 1

// PluginName is the key under which a plugin process serves the protocol.
const PluginName = "exocortex"

// Handshake is the go-plugin handshake shared by the host and every plugin. The
// cookie is not a secret: it only stops a plugin binary from being run by hand as if
// it were an ordinary command.
func Handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  ProtocolVersion,
		MagicCookieKey:   "EXOCORTEX_PLUGIN",
		MagicCookieValue: "3f1c9a1e-exocortex-plugin-protocol",
	}
}

// GRPCPlugin binds the generated Plugin service to go-plugin, on both sides: a
// plugin process sets Impl; the host leaves it nil and dispenses a client.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl exocortexv1.PluginServer
}

// GRPCServer registers the plugin's implementation.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	exocortexv1.RegisterPluginServer(s, p.Impl)
	return nil
}

// GRPCClient returns the generated client for the host.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return exocortexv1.NewPluginClient(c), nil
}

// PluginSet is the versioned plugin set both sides pass to go-plugin.
func PluginSet(server exocortexv1.PluginServer) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion: {PluginName: &GRPCPlugin{Impl: server}},
	}
}
