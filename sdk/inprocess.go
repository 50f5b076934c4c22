package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/exocortex/exocortex/protocol"
)

// ServeInProcess serves p inside the calling process, over the same
// protocol as Serve (go-plugin's gRPC transport on a local socket, the
// broker and the host's services included), for a host that runs one of
// its own built-in plugins without a process of its own. It returns the
// configuration a go-plugin client reattaches with and a channel closed when
// serving has ended: when ctx ends, or when the client shuts the plugin down
// (go-plugin's controller). p's log goes to stderr as Serve's would go to the
// process's stderr (JSON lines for the host to read), unless p.Logger is
// set. p.Start runs beside the first calls, as under Serve; p.Close runs when
// serving ends.
//
// What the process boundary gave and this does not: the plugin shares the
// host's environment, working directory and address space. A panic in a
// handler is still an error of that call (Server recovers it), but a panic
// in a goroutine of the plugin's own ends the host, and a hung handler
// cannot be killed, only abandoned. Use it for code the host ships.
func ServeInProcess(ctx context.Context, p Plugin, stderr io.Writer) (*plugin.ReattachConfig, <-chan struct{}, error) {
	if p.Logger == nil {
		p.Logger = slog.New(NewHostLogHandler(stderr, p.Name))
	}
	srv, err := NewServer(p)
	if err != nil {
		return nil, nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	reattach := make(chan *plugin.ReattachConfig, 1)
	served := make(chan struct{})
	done := make(chan struct{})
	closeOnce := sync.OnceFunc(func() {
		stop()
		if p.Close != nil {
			if err := p.Close(); err != nil {
				p.Logger.Error("closing the plugin", "plugin", p.Name, "err", err)
			}
		}
	})
	go func() {
		defer close(done)
		defer closeOnce()
		plugin.Serve(&plugin.ServeConfig{
			HandshakeConfig:  protocol.Handshake(),
			VersionedPlugins: protocol.PluginSet(srv),
			GRPCServer:       protocol.NewGRPCServer,
			Logger: hclog.New(&hclog.LoggerOptions{
				Name: p.Name, Level: hclog.Info, Output: stderr, JSONFormat: true,
			}),
			Test: &plugin.ServeTestConfig{Context: sctx, ReattachConfigCh: reattach, CloseCh: served},
		})
		<-served
	}()
	select {
	case rc := <-reattach:
		if p.Start != nil {
			go runStart(sctx, p.Name, p.Start, p.Logger)
		}
		return rc, done, nil
	case <-done:
		return nil, nil, fmt.Errorf("serving plugin %q in process: it stopped before it listened (see its log)", p.Name)
	case <-time.After(10 * time.Second):
		stop()
		return nil, nil, errors.New("serving plugin " + p.Name + " in process: no listener within 10s")
	}
}
