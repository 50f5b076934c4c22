package sdk

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/exocortex/exocortex/protocol"
)

// ParentPollInterval is how often a serving plugin checks that the host that started
// it is still alive.
const ParentPollInterval = 250 * time.Millisecond

// Serve runs p as a plugin process: it validates p, then serves it to the host that
// started the process, over go-plugin's gRPC transport, until the host stops it or
// dies. Call it from main and nothing else; write nothing to stdout before it (the
// handshake line goes there).
//
// When p is not valid, Serve writes the problems to stderr and exits with status 1,
// so a plugin author who runs `go run .` sees them. Run by hand otherwise, the
// binary says it is a plugin and exits 1.
//
// No orphans: go-plugin does not stop a plugin whose host died without killing it
// (go-plugin issue #136), and a plugin that never writes to its closed pipes would
// live on. Serve therefore polls the parent process id every ParentPollInterval and
// exits when it changes, that is when the host died and the plugin was re-parented
// to init or a subreaper: a plugin outlives its host by well under a second.
func Serve(p Plugin) {
	srv, err := NewServer(p)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(max(p.Procs, 1))
	}
	logger := p.Logger
	if logger == nil {
		logger = slog.New(NewHostLogHandler(os.Stderr, p.Name))
	}
	// The parent's pid is read now, before the handshake: read inside the
	// goroutine, a host that died right after starting us would go unnoticed.
	startCtx, stopStart := context.WithCancel(context.Background())
	closeOnce := sync.OnceFunc(func() {
		stopStart()
		if p.Close != nil {
			if err := p.Close(); err != nil {
				logger.Error("closing the plugin", "plugin", p.Name, "err", err)
			}
		}
	})
	go watchParent(context.Background(), os.Getppid(), os.Getppid, ParentPollInterval, func() {
		logger.Info("the host process is gone; exiting", "plugin", p.Name)
		closeOnce()
		os.Exit(0)
	})
	defer closeOnce()
	if p.Start != nil {
		go runStart(startCtx, p.Name, p.Start, logger)
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  protocol.Handshake(),
		VersionedPlugins: protocol.PluginSet(srv),
		GRPCServer:       protocol.NewGRPCServer,
		Logger: hclog.New(&hclog.LoggerOptions{
			Name:       p.Name,
			Level:      hclog.Info,
			Output:     os.Stderr,
			JSONFormat: true,
		}),
	})
}

// runStart runs a plugin's Start, logging a panic instead of ending the
// process: what Start prepares is an optimisation, and the hooks that need it
// find it missing and do the work themselves.
func runStart(ctx context.Context, name string, start func(context.Context), logger *slog.Logger) {
	defer func() {
		if r := recover(); r != nil {
			logger.Error("the plugin's Start panicked", "plugin", name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	start(ctx)
}

// watchParent calls gone once when getppid's answer differs from start, then
// returns; it returns without calling gone when ctx ends.
func watchParent(ctx context.Context, start int, getppid func() int, every time.Duration, gone func()) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if getppid() != start {
				gone()
				return
			}
		}
	}
}

// hclogTimeFormat is the timestamp layout go-plugin's host expects in a JSON log
// line (hclog.TimeFormatJSON); a line it cannot parse is logged raw at Debug.
const hclogTimeFormat = "2006-01-02T15:04:05.000000Z07:00"

// NewHostLogHandler returns a slog handler writing, at Info level and above, one
// JSON object per line in the shape go-plugin's host parses from a plugin's stderr
// (hclog's JSON: "@level", "@message", "@timestamp", "@module", then the
// attributes), so the host logs each record at its own level with its attributes.
func NewHostLogHandler(w io.Writer, module string) slog.Handler {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level: slog.LevelInfo,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) > 0 {
				return a
			}
			switch a.Key {
			case slog.TimeKey:
				return slog.String("@timestamp", a.Value.Time().Format(hclogTimeFormat))
			case slog.LevelKey:
				return slog.String("@level", hclogLevel(a.Value.Any().(slog.Level)))
			case slog.MessageKey:
				return slog.String("@message", a.Value.String())
			}
			return a
		},
	})
	if module == "" {
		return h
	}
	return h.WithAttrs([]slog.Attr{slog.String("@module", module)})
}

func hclogLevel(l slog.Level) string {
	switch {
	case l < slog.LevelDebug:
		return "trace"
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warn"
	}
	return "error"
}
