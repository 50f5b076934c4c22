// Package protocol binds the Exocortex plugin protocol (package exocortexv1,
// generated from proto/) to hashicorp/go-plugin: the handshake, the versioned
// plugin set, the transport settings and the protocol version. Both sides of a
// plugin connection import it and nothing else of each other: the host
// (core/host) does not import the author SDK (sdk), and the SDK does not import
// the host. It is the same split as go-plugin's examples/grpc, whose shared
// package holds only this glue, and as Terraform's tfprotov6, kept apart from
// the framework plugins are written with.
//
// A new SDK (another language) needs the values here: the magic cookie, the
// plugin name, the protocol version and the broker stream of the Host service.
package protocol

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// Version is the plugin protocol both sides speak: package exocortex.v1.
const Version = 1

// PluginName is the key under which a plugin process serves the protocol.
const PluginName = "exocortex"

// Handshake is the go-plugin handshake shared by the host and every plugin. The
// cookie is not a secret: it only stops a plugin binary from being run by hand as if
// it were an ordinary command.
func Handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  Version,
		MagicCookieKey:   "EXOCORTEX_PLUGIN",
		MagicCookieValue: "3f1c9a1e-exocortex-plugin-protocol",
	}
}

// BrokerUser is implemented by a plugin's server that dials the host's
// services through go-plugin's broker (the Go SDK's does, when an extension
// or tool first asks for them); GRPCServer hands it the broker.
type BrokerUser interface {
	UseBroker(*plugin.GRPCBroker)
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

// GRPCServer registers the plugin's implementation.
func (p *GRPCPlugin) GRPCServer(b *plugin.GRPCBroker, s *grpc.Server) error {
	if u, ok := p.Impl.(BrokerUser); ok {
		u.UseBroker(b)
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

// PluginSet is the versioned plugin set a plugin process passes to go-plugin
// (a host that only dispenses a client passes PluginSet(nil)).
func PluginSet(server exocortexv1.PluginServer) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		Version: {PluginName: &GRPCPlugin{Impl: server}},
	}
}

// HostPluginSet is the plugin set the host passes to go-plugin: it serves host,
// and memory beside it (when not nil), to every plugin it starts.
func HostPluginSet(host exocortexv1.HostServer, memory exocortexv1.MemoryServiceServer) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		Version: {PluginName: &GRPCPlugin{Host: host, Memory: memory}},
	}
}

// LogEventAttr is the log attribute by which a plugin's log record (hclog
// JSON on its stderr) tells the host of an event; its other attributes carry
// the details. Both sides name it here, so neither imports the other.
const LogEventAttr = "exocortex_event"

// LogEventLateStateWrite is the value of LogEventAttr on the record of a state
// change the SDK refused because its hook call had returned. The host reads
// it from the plugin's stderr and reports the plugin, extension, hook and key.
const LogEventLateStateWrite = "late_state_write"

// LogEventCommandHook is the value of LogEventAttr on the record of a
// command hook's warning (the command-hook bridge, extensions/cmdhooks): a
// hook that exited with a code other than 0 and 2, a systemMessage, a
// configuration it could not read. Its "detail" attribute says what; the
// host reports it as an event and on run's stderr.
const LogEventCommandHook = "command_hook"

// PluginCommandHooks is the built-in plugin that runs the operator's command
// hooks (Claude Code, Gemini CLI and Codex hook scripts, extensions/cmdhooks).
// The terminal has the operator's own !commands reviewed by its extensions
// only: they are the operator's scripts; the agent's guards do not review
// the operator.
const PluginCommandHooks = "command-hooks"
