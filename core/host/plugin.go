package host

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/exocortex/exocortex/core/discover"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/protocol"
)

// Crash policy: a plugin that crashes is restarted on its next use, at once after
// its first crash and after a doubling backoff for further ones; the third crash
// within crashWindow quarantines it until its file changes on disk.
const (
	crashWindow     = 60 * time.Second
	crashQuarantine = 3
	backoffBase     = 100 * time.Millisecond
	backoffMax      = 5 * time.Second
)

// State is a plugin process's condition.
type State string

const (
	StateRunning     State = "running"
	StateStopped     State = "stopped"
	StateFailed      State = "failed"
	StateQuarantined State = "quarantined"
	// StateRejected: a plugin found while running whose first version was
	// refused (reload.go); it never ran.
	StateRejected State = "rejected"
	// StateUntrusted: a project plugin not loaded because the project is not
	// trusted (trust.go).
	StateUntrusted State = "untrusted"
)

// Plugin is one plugin process and what the host knows about it.
type Plugin struct {
	cand discover.Candidate
	h    *Host

	mu          sync.Mutex
	client      *plugin.Client
	rpc         exocortexv1.PluginClient
	manifest    *exocortexv1.ManifestResponse
	stamp       fileStamp
	crashes     []time.Time
	totalCrash  int
	restarts    int
	starts      int
	quarantined bool
	nextStart   time.Time
	lastErr     error
	stderr      *tail
	// startTook is how long the last start took, process start to manifest.
	startTook time.Duration

	// Hot reload (reload.go): a replaced plugin is retired, refuses new calls,
	// and is stopped once the calls in flight have drained.
	retired  bool
	inflight int
	drained  chan struct{}

	// disp is the Dispatch stream (dispatch.go).
	disp dispatcher

	// inproc is set while the plugin is served in the host's process
	// (inprocess.go) instead of a process of its own.
	inproc *inProcess
	// overruns are the extensions' exceeded time budgets (budget.go).
	overruns map[string]*Overrun
}

// Name is the plugin's name from discovery.
func (p *Plugin) Name() string { return p.cand.Name }

// Candidate returns where the plugin was found.
func (p *Plugin) Candidate() discover.Candidate { return p.cand }

// Manifest returns the manifest the plugin answered when it was loaded.
func (p *Plugin) Manifest() *exocortexv1.ManifestResponse {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.manifest
}

// StderrTail returns the last lines the plugin wrote to stderr.
func (p *Plugin) StderrTail() string { return p.masker().Mask(p.stderr.String()) }

// fileStamp identifies the plugin's file contents cheaply, to notice a rebuild.
type fileStamp struct {
	size    int64
	modTime time.Time
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{size: fi.Size(), modTime: fi.ModTime()}
}

// start launches the process, hand-shakes and reads the manifest. p.mu is held.
func (p *Plugin) start(ctx context.Context) error {
	began := time.Now()
	if serve := p.inProcessServer(); serve != nil {
		return p.startInProcess(ctx, serve, began)
	}
	cmd := exec.Command(p.cand.Command[0], p.cand.Command[1:]...)
	cmd.Dir = p.cand.WorkDir
	cmd.Env = append(p.h.pluginEnviron(), p.h.opts.PluginEnv...)
	if p.cand.Dir.Source == discover.Builtin {
		cmd.Env = append(cmd.Env, p.h.opts.BuiltinEnv[p.Name()]...)
	}
	configureProcess(cmd)

	cfg := &plugin.ClientConfig{
		HandshakeConfig:  protocol.Handshake(),
		VersionedPlugins: protocol.HostPluginSet(p.h.services.forPlugin(p), p.h.services.memoryFor(p)),
		Cmd:              cmd,
		// cmd.Env is the whole environment (pluginEnviron): go-plugin would
		// otherwise append the host's own, the secrets' variables with it.
		SkipHostEnv:      true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           p.h.hclog.Named(p.cand.Name),
		Stderr:           p.stderr,
		StartTimeout:     p.h.opts.StartTimeout,
		Managed:          false,
		GRPCDialOptions:  protocol.DialOptions(),
	}
	if sum, ok := p.h.opts.Checksums[p.cand.Name]; ok {
		raw, err := hex.DecodeString(sum)
		if err != nil {
			return fmt.Errorf("the configured checksum of plugin %s is not hex sha256: %w", p.cand.Name, err)
		}
		cfg.SecureConfig = &plugin.SecureConfig{Checksum: raw, Hash: sha256.New()}
	}
	client := plugin.NewClient(cfg)
	rpcClient, err := client.Client()
	if err != nil {
		if died := exitBeforeHandshake(client, cmd, err); died != "" {
			client.Kill()
			return &StartError{Plugin: p.cand.Name, Path: p.cand.Path, Stderr: p.stderr.String(), err: err,
				Reason: died + " before its handshake (see its last stderr lines; run it by hand to see the whole output)"}
		}
		client.Kill()
		return p.startError(err)
	}
	pc, m, err := p.handshake(ctx, rpcClient)
	if err != nil {
		client.Kill()
		return p.startError(err)
	}
	p.client, p.rpc, p.manifest = client, pc, m
	p.started(began)
	return nil
}

// handshake dispenses the plugin's client over a connected rpcClient and asks
// its manifest, within the start timeout: the same for a process and for a
// server in the host's process.
func (p *Plugin) handshake(ctx context.Context, rpcClient plugin.ClientProtocol) (exocortexv1.PluginClient, *exocortexv1.ManifestResponse, error) {
	raw, err := rpcClient.Dispense(protocol.PluginName)
	if err != nil {
		return nil, nil, err
	}
	pc := raw.(exocortexv1.PluginClient)
	mctx, cancel := context.WithTimeout(ctx, p.h.opts.StartTimeout)
	defer cancel()
	m, err := pc.Manifest(mctx, &exocortexv1.ManifestRequest{ProtocolVersion: protocol.Version})
	if err != nil {
		return nil, nil, fmt.Errorf("answering its manifest: %w", err)
	}
	return pc, m, nil
}

// started records a start that answered its manifest. p.mu is held.
func (p *Plugin) started(began time.Time) {
	p.stamp = stampOf(p.cand.Path)
	p.starts++
	p.startTook = time.Since(began)
	if p.h.loaded.Load() && p.h.slow(p.startTook) {
		// A restart, a new version or a plugin added while running; the
		// plugins started by Load are told there, with a notice.
		p.h.emit(p.slowEvent(p.startTook))
	}
}

// exitBeforeHandshake tells a process that ended before its handshake from one
// that printed something else on stdout: go-plugin reports both as an
// unrecognized message when stdout closed without a line. It returns how the
// process ended ("it exited with status 2", "it was killed by signal: killed"),
// or "" when it did not end.
func exitBeforeHandshake(client *plugin.Client, cmd *exec.Cmd, err error) string {
	msg := err.Error()
	noLine := strings.Contains(msg, "Failed to read any lines from plugin's stdout") ||
		strings.Contains(msg, "plugin exited before we could connect")
	if !noLine {
		return ""
	}
	// go-plugin marks the client exited after the process was reaped; its lock
	// orders cmd.ProcessState's write before our read.
	deadline := time.Now().Add(2 * time.Second)
	for !client.Exited() {
		if time.Now().After(deadline) {
			return "it closed its stdout without a handshake line"
		}
		time.Sleep(5 * time.Millisecond)
	}
	st := cmd.ProcessState
	if st == nil {
		return "it ended"
	}
	if code := st.ExitCode(); code >= 0 {
		return fmt.Sprintf("it exited with status %d", code)
	}
	return "it was killed (" + st.String() + ")"
}

// startError explains a failed start in the operator's terms, with the plugin's
// last stderr lines.
func (p *Plugin) startError(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Unrecognized remote plugin message"):
		msg = "it printed to stdout before its handshake (" + msg + "); a plugin must log to stderr, never stdout"
	case strings.Contains(msg, "Incompatible API version") || strings.Contains(msg, "Incompatible core API version"):
		msg = "its protocol version is not one this host speaks (" + msg + "); rebuild it against this SDK"
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		msg = "it did not hand shake within " + p.h.opts.StartTimeout.String() + " (" + msg + ")"
	case strings.Contains(msg, "checksums did not match"):
		msg = "its checksum does not match the one pinned in the configuration (" + msg + "); rebuild or update the pin"
	}
	return &StartError{Plugin: p.cand.Name, Path: p.cand.Path, Reason: msg, Stderr: p.stderr.String(), err: err}
}

// StartError reports a plugin that could not be started, hand-shaken or asked for
// its manifest.
type StartError struct {
	Plugin, Path, Reason, Stderr string
	err                          error
}

func (e *StartError) Error() string {
	s := fmt.Sprintf("plugin %s (%s) failed to start: %s", e.Plugin, e.Path, e.Reason)
	if e.Stderr != "" {
		s += "\n  last stderr lines:\n    " + strings.ReplaceAll(strings.TrimRight(e.Stderr, "\n"), "\n", "\n    ")
	}
	return s
}

func (e *StartError) Unwrap() error { return e.err }

// ErrQuarantined is returned for calls to a quarantined plugin.
var errQuarantined = errors.New("quarantined after repeated crashes; it is retried when its file changes on disk")

// live returns a live client, starting the plugin when it is not running. The
// caller must release() a client it got.
func (p *Plugin) live(ctx context.Context) (exocortexv1.PluginClient, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.retired {
		return nil, errRetired
	}
	if p.client != nil && !p.client.Exited() {
		p.inflight++
		return p.rpc, nil
	}
	if p.client != nil {
		// The process is gone without our call noticing (killed between calls).
		p.recordCrashLocked(fmt.Errorf("the process exited"))
	}
	if p.quarantined {
		if st := stampOf(p.cand.Path); st == p.stamp {
			return nil, errQuarantined
		}
		p.quarantined = false
		p.crashes = nil
		p.h.emit(Event{Kind: "unquarantine", Plugin: p.cand.Name, Detail: "its file changed on disk"})
	}
	if wait := time.Until(p.nextStart); wait > 0 {
		return nil, fmt.Errorf("restarting after a crash in %s", wait.Round(time.Millisecond))
	}
	old := p.manifest
	if err := p.start(ctx); err != nil {
		p.lastErr = err
		p.recordCrashLocked(err)
		return nil, err
	}
	p.restarts++
	p.h.emit(Event{Kind: "restart", Plugin: p.cand.Name, Detail: fmt.Sprintf("restart %d", p.restarts)})
	if old != nil && !sameExtensions(old, p.manifest) {
		p.h.logger.Warn("plugin answered a different manifest after restart; reload it to apply the change", "plugin", p.cand.Name)
		p.manifest = old
	}
	p.inflight++
	return p.rpc, nil
}

// recordCrashLocked counts a crash and decides backoff or quarantine. p.mu is held.
func (p *Plugin) recordCrashLocked(err error) {
	now := time.Now()
	p.lastErr = err
	p.totalCrash++
	recent := p.crashes[:0]
	for _, t := range p.crashes {
		if now.Sub(t) < crashWindow {
			recent = append(recent, t)
		}
	}
	p.crashes = append(recent, now)
	if p.client != nil {
		p.disp.drop()
		p.killLocked(true)
		p.client, p.rpc = nil, nil
	}
	if len(p.crashes) >= crashQuarantine {
		p.quarantined = true
		p.stamp = stampOf(p.cand.Path)
		p.h.emit(Event{Kind: "quarantine", Plugin: p.cand.Name, Detail: fmt.Sprintf("%d crashes in %s: %v", len(p.crashes), crashWindow, err)})
		return
	}
	// The first crash in the window restarts at once, so one bad call does not
	// cost the plugin's other extensions their turn; repeats back off.
	var backoff time.Duration
	if n := len(p.crashes); n > 1 {
		backoff = min(backoffBase<<(n-2), backoffMax)
	}
	p.nextStart = now.Add(backoff)
	p.h.emit(Event{Kind: "crash", Plugin: p.cand.Name, Detail: err.Error()})
}

// fail handles a failed call: a dead process or a missed deadline counts as a
// crash (the process is killed so a hung plugin cannot hold the turn again).
func (p *Plugin) fail(err error, kill bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if kill || (p.client != nil && p.client.Exited()) {
		p.recordCrashLocked(err)
		return
	}
	p.lastErr = err
}

func (p *Plugin) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client != nil {
		p.disp.drop() // an open stream would hold up the plugin's graceful stop
		p.killLocked(false)
		p.client, p.rpc = nil, nil
	}
}

// killClient stops the process and, through its process group, anything it
// started. A crashed or hung plugin is killed at once; a healthy one is first asked
// to shut down (go-plugin gives it two seconds).
func killClient(c *plugin.Client, now bool) {
	pid := 0
	if rc := c.ReattachConfig(); rc != nil {
		pid = rc.Pid
	}
	if now && pid > 0 {
		killGroup(pid)
	}
	c.Kill()
	if pid > 0 {
		killGroup(pid)
	}
}

func sameExtensions(a, b *exocortexv1.ManifestResponse) bool {
	if len(a.GetExtensions()) != len(b.GetExtensions()) {
		return false
	}
	for i, e := range a.GetExtensions() {
		f := b.GetExtensions()[i]
		if e.GetName() != f.GetName() || e.GetHook() != f.GetHook() || e.GetOrder() != f.GetOrder() {
			return false
		}
	}
	return true
}

// tail keeps the last lines written to it (a plugin's stderr), and shows
// each to watch when set (latewrite.go).
type tail struct {
	mu    sync.Mutex
	lines []string
	max   int
	w     io.Writer
	watch func(line string)
}

func newTail(max int, also io.Writer) *tail { return &tail{max: max, w: also} }

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		if t.watch != nil && sc.Text() != "" {
			t.watch(sc.Text())
		}
		t.lines = append(t.lines, sc.Text())
		if len(t.lines) > t.max {
			t.lines = t.lines[len(t.lines)-t.max:]
		}
	}
	if t.w != nil {
		_, _ = t.w.Write(b)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return ""
	}
	return strings.Join(t.lines, "\n") + "\n"
}

// newHCLog adapts the host's log destination for go-plugin: Info level, never the
// Trace noise go-plugin's default logger prints on the operator's terminal.
func newHCLog(w io.Writer, level hclog.Level) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "plugin", Output: w, Level: level})
}

// Ping checks that the plugin process answers go-plugin's health service, starting
// it if it is not running. It is the cheapest round trip to the process, the floor
// under every hook call's latency.
func (p *Plugin) Ping(ctx context.Context) error {
	if _, err := p.live(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	c := p.client
	p.mu.Unlock()
	if c == nil {
		return fmt.Errorf("plugin %s is not running", p.Name())
	}
	rpc, err := c.Client()
	if err != nil {
		return fmt.Errorf("plugin %s: %w", p.Name(), err)
	}
	if err := rpc.Ping(); err != nil {
		return fmt.Errorf("plugin %s does not answer its health check: %w", p.Name(), err)
	}
	return nil
}
