package host

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/protocol"
)

// InProcessServer serves one built-in plugin inside the host's process, over
// the protocol's gRPC on a local socket (the SDK's ServeInProcess): env is
// the environment its process would have had, stderr takes its log. It
// returns the configuration to reattach to it and a channel closed when it
// has stopped serving; ctx's end stops it.
//
// The client side is the one every plugin has (handshake version, broker,
// the host's services, the manifest, calls, batches, the Dispatch stream),
// so what a hook sees does not change. What does: no process start (the
// point: about 70-90 CPU-ms each at start-up), and no process boundary. A
// crash (a failed call that kills a plugin) stops the server and starts a
// fresh one, with fresh state, as a process restart would; but a hung
// handler cannot be killed, only abandoned, and a panic outside a handler
// ends the host. docs/plugin-development.md, "Built-in plugins in the host's
// process".
type InProcessServer func(ctx context.Context, env []string, stderr io.Writer) (*plugin.ReattachConfig, <-chan struct{}, error)

// inProcess is a running in-process plugin server.
type inProcess struct {
	cancel context.CancelFunc
	done   <-chan struct{}
	rpc    plugin.ClientProtocol
}

// stop ends the server: asked through the client (go-plugin's controller)
// and then cancelled; now skips the asking, for a crashed or hung plugin.
func (ip *inProcess) stop(now bool) {
	if !now && ip.rpc != nil {
		_ = ip.rpc.Close()
		select {
		case <-ip.done:
		case <-time.After(2 * time.Second):
		}
	}
	ip.cancel()
}

// inProcessServer is the server for p when the host serves it in process.
func (p *Plugin) inProcessServer() InProcessServer {
	if p.cand.Dir.Source != discover.Builtin {
		return nil
	}
	if _, pinned := p.h.opts.Checksums[p.cand.Name]; pinned {
		return nil
	}
	return p.h.opts.InProcess[p.cand.Name]
}

// startInProcess is start for a plugin served in the host's process. p.mu is held.
func (p *Plugin) startInProcess(ctx context.Context, serve InProcessServer, began time.Time) error {
	env := append(p.h.pluginEnviron(), p.h.opts.PluginEnv...)
	env = append(env, p.h.opts.BuiltinEnv[p.Name()]...)
	sctx, cancel := context.WithCancel(context.Background())
	rc, done, err := serve(sctx, env, p.stderr)
	if err != nil {
		cancel()
		return p.startError(err)
	}
	attached := *rc
	attached.ReattachFunc = func() (runner.AttachedRunner, error) { return &inProcRunner{done: done, cancel: cancel}, nil }
	set := protocol.HostPluginSet(p.h.services.forPlugin(p), p.h.services.memoryFor(p))
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  protocol.Handshake(),
		VersionedPlugins: set,
		// A reattached client negotiates nothing: it dispenses from Plugins.
		Plugins:          set[attached.ProtocolVersion],
		Reattach:         &attached,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           p.h.hclog.Named(p.cand.Name),
		StartTimeout:     p.h.opts.StartTimeout,
		GRPCDialOptions:  protocol.DialOptions(),
	})
	ip := &inProcess{cancel: cancel, done: done}
	rpcClient, err := client.Client()
	if err != nil {
		ip.stop(true)
		return p.startError(err)
	}
	ip.rpc = rpcClient
	pc, m, err := p.handshake(ctx, rpcClient)
	if err != nil {
		ip.stop(true)
		return p.startError(err)
	}
	p.client, p.rpc, p.manifest, p.inproc = client, pc, m, ip
	p.started(began)
	return nil
}

// inProcRunner is go-plugin's view of an in-process server: it has exited
// when the server has stopped serving (so Client.Exited reports a stopped
// plugin as it would a dead process), and killing it cancels the server.
type inProcRunner struct {
	done   <-chan struct{}
	cancel context.CancelFunc
	once   sync.Once
}

func (r *inProcRunner) Wait(ctx context.Context) error {
	select {
	case <-r.done:
	case <-ctx.Done():
	}
	return nil
}

func (r *inProcRunner) Kill(context.Context) error { r.once.Do(r.cancel); return nil }

// ID is empty: there is no process of its own to signal (go-plugin's Kill
// then leaves it alone; the host stops it through inProcess.stop).
func (r *inProcRunner) ID() string { return "" }

func (r *inProcRunner) PluginToHost(n, a string) (string, string, error) { return n, a, nil }
func (r *inProcRunner) HostToPlugin(n, a string) (string, string, error) { return n, a, nil }

// killLocked stops p's process or in-process server; now for a crashed or
// hung plugin. p.mu is held.
func (p *Plugin) killLocked(now bool) {
	if p.inproc != nil {
		p.inproc.stop(now)
		p.inproc = nil
		return
	}
	killClient(p.client, now)
}
