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
// plugin process sets Impl; the host leaves it nil, sets Host to the services it
// offers its plugins, and dispenses a client.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl exocortexv1.PluginServer
	// Host is served to the plugin through the broker (host side only).
	Host exocortexv1.HostServer
	// Memory is the memory service served beside Host, on the same broker
	// stream (host side only; nil: none).
	Memory exocortexv1.MemoryServiceServer
}

// brokerUser is implemented by the SDK's server, which dials the host's services
// through the broker when an extension or tool first asks for them.
type brokerUser interface {
	useBroker(*plugin.GRPCBroker)
}

// GRPCServer registers the plugin's implementation.
func (p *GRPCPlugin) GRPCServer(b *plugin.GRPCBroker, s *grpc.Server) error {
	if u, ok := p.Impl.(brokerUser); ok {
		u.useBroker(b)
	}
	exocortexv1.RegisterPluginServer(s, p.Impl)
	return nil
}

// GRPCClient returns the generated client for the host, and starts serving the
// host's services to the plugin on the broker's fixed stream.
func (p *GRPCPlugin) GRPCClient(_ context.Context, b *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	if p.Host != nil {
		go b.AcceptAndServe(uint32(exocortexv1.HostBroker_HOST_BROKER_ID), func(opts []grpc.ServerOption) *grpc.Server {
			s := grpc.NewServer(opts...)
			exocortexv1.RegisterHostServer(s, p.Host)
			if p.Memory != nil {
				exocortexv1.RegisterMemoryServiceServer(s, p.Memory)
			}
			return s
		})
	}
	return exocortexv1.NewPluginClient(c), nil
}

// PluginSet is the versioned plugin set both sides pass to go-plugin.
func PluginSet(server exocortexv1.PluginServer) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion: {PluginName: &GRPCPlugin{Impl: server}},
	}
}

// HostPluginSet is the plugin set the host passes to go-plugin: it serves host,
// and memory beside it (when not nil), to every plugin it starts.
func HostPluginSet(host exocortexv1.HostServer, memory exocortexv1.MemoryServiceServer) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion: {PluginName: &GRPCPlugin{Host: host, Memory: memory}},
	}
}
