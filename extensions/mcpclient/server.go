package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exocortex/exocortex/toolsettings"
)

// stderrKeep is how much of a stdio server's stderr is kept for reports.
const stderrKeep = 4 << 10

// tailBuffer keeps the last stderrKeep bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > stderrKeep {
		t.buf = t.buf[len(t.buf)-stderrKeep:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// server is one configured MCP server and its session.
type server struct {
	name string
	conf toolsettings.MCPServer
	set  *Set

	mu       sync.Mutex
	cs       *mcp.ClientSession
	cmd      *exec.Cmd
	kill     context.CancelFunc // ends cmd
	stderr   *tailBuffer
	tools    map[string]*mcp.Tool
	state    string
	err      string
	check    string
	took     time.Duration
	restarts int
	retryAt  time.Time
	backoff  time.Duration
	// refused is the last HTTP status >= 400 a remote server answered.
	refused atomic.Int32
	// listed are the tools the server listed at its last start (the cache's).
	listed map[string]*mcp.Tool
	// starting, when not nil, is closed once a background start is done.
	starting chan struct{}
}

// target is the command line or the URL.
func (sv *server) target() string {
	if sv.conf.Transport() == "stdio" {
		return strings.TrimSpace(sv.conf.Command + " " + strings.Join(sv.conf.Args, " "))
	}
	return sv.conf.Endpoint()
}

func (sv *server) snapshot() Status {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	st := Status{Name: sv.name, Transport: sv.conf.Transport(), Target: sv.target(), State: sv.state, Error: sv.err, Check: sv.check,
		Restarts: sv.restarts, Tools: []string{}}
	if sv.took > 0 {
		st.Took = sv.took.Round(time.Millisecond).String()
	}
	for n := range sv.tools {
		st.Tools = append(st.Tools, sv.name+"."+n)
	}
	st.Tools = names(toSet(st.Tools))
	if sv.stderr != nil {
		st.Stderr = sv.stderr.String()
	}
	st.Error, st.Stderr = sv.set.mask(st.Error), sv.set.mask(st.Stderr)
	return st
}

func toSet(l []string) map[string]bool {
	m := make(map[string]bool, len(l))
	for _, s := range l {
		m[s] = true
	}
	return m
}

// headerTransport adds the configured headers to every request and keeps
// the last refusal's status (401, 403, ...) for the report.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
	refused *atomic.Int32
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	resp, err := h.base.RoundTrip(r)
	if err == nil && resp.StatusCode >= 400 {
		h.refused.Store(int32(resp.StatusCode))
	}
	return resp, err
}

// transport builds the connection to the server (a new process for stdio).
// proc ends the process of a stdio server (it is killed when proc is
// cancelled).
func (sv *server) transport(proc context.Context) (mcp.Transport, *exec.Cmd, *tailBuffer, error) {
	switch sv.conf.Transport() {
	case "stdio":
		env, err := sv.set.resolve(sv.name, "env", sv.conf.Env)
		if err != nil {
			return nil, nil, nil, err
		}
		cmd := exec.CommandContext(proc, sv.conf.Command, sv.conf.Args...)
		cmd.Env = sv.set.env
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Dir = sv.set.dir
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		tail := &tailBuffer{}
		cmd.Stderr = tail
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, cmd, tail, nil
	}
	headers, err := sv.set.resolve(sv.name, "headers", sv.conf.Headers)
	if err != nil {
		return nil, nil, nil, err
	}
	hc := &http.Client{Transport: headerTransport{headers: headers, base: http.DefaultTransport, refused: &sv.refused}}
	if sv.conf.Transport() == "sse" {
		return &mcp.SSEClientTransport{Endpoint: sv.conf.Endpoint(), HTTPClient: hc}, nil, nil, nil
	}
	return &mcp.StreamableClientTransport{Endpoint: sv.conf.Endpoint(), HTTPClient: hc, MaxRetries: 1}, nil, nil, nil
}

// start connects and lists the tools, within the init timeout.
func (sv *server) start(ctx context.Context) {
	t0 := time.Now()
	ictx, cancel := context.WithTimeout(ctx, sv.conf.Init())
	defer cancel()
	// A process that has not answered by the deadline is killed then (and a
	// remote connection dropped), so start-up never waits on it beyond its
	// init timeout.
	proc, kill := context.WithCancel(context.WithoutCancel(ctx))
	tr, cmd, tail, err := sv.transport(proc)
	if err != nil {
		kill()
		sv.mu.Lock()
		sv.took, sv.state, sv.err = time.Since(t0), StateFailed, err.Error()
		sv.check = "secrets: in config.yaml (each §§secret(NAME) of env and headers names a secret there; exocortex secrets list shows them)"
		sv.scheduleRetry()
		sv.mu.Unlock()
		return
	}
	var up atomic.Bool
	stop := context.AfterFunc(ictx, func() {
		if !up.Load() {
			kill()
		}
	})
	defer stop()
	client := mcp.NewClient(&mcp.Implementation{Name: "exocortex", Version: "1"}, nil)
	// The session lives on proc (an SSE stream is bound to the context it
	// is opened with); the init deadline cancels proc unless it is up.
	cs, err := client.Connect(proc, tr, nil)
	var tools map[string]*mcp.Tool
	if err == nil {
		tools, err = listTools(proc, cs)
		if err != nil {
			_ = cs.Close()
		}
	}
	up.Store(err == nil)
	if err != nil {
		kill()
	}
	sv.mu.Lock()
	sv.took, sv.stderr = time.Since(t0), tail
	if err != nil {
		sv.state, sv.err, sv.check = StateFailed, sv.describe(ictx, err), sv.hint(ictx, err, tail)
		sv.scheduleRetry()
		sv.mu.Unlock()
		return
	}
	if sv.kill != nil {
		sv.kill() // the process before a restart, gone already
	}
	sv.cs, sv.cmd, sv.kill, sv.state, sv.err, sv.check, sv.backoff = cs, cmd, kill, StateReady, "", "", 0
	sv.listed = tools
	if sv.tools == nil {
		sv.tools = tools
	} else {
		// A restart keeps the tools declared at start-up; new ones wait for
		// the next session, gone ones answer so.
		for n, t := range tools {
			if _, ok := sv.tools[n]; ok {
				sv.tools[n] = t
			}
		}
	}
	sv.mu.Unlock()
	go sv.watch(cs)
}

// watch marks the server unavailable when its session ends under it.
func (sv *server) watch(cs *mcp.ClientSession) {
	err := cs.Wait()
	sv.mu.Lock()
	if sv.cs != cs {
		sv.mu.Unlock()
		return
	}
	sv.cs, sv.state = nil, StateUnavailable
	sv.err = "its session ended"
	if err != nil {
		sv.err += ": " + err.Error()
	}
	if sv.conf.Transport() == "stdio" {
		sv.err = "the process exited or closed its output"
		if sv.cmd != nil && sv.cmd.ProcessState != nil {
			sv.err += " (" + sv.cmd.ProcessState.String() + ")"
		}
	}
	sv.check = "its stderr (why it ended); it is started again, with back-off, on a later call of one of its tools"
	sv.scheduleRetry()
	sv.mu.Unlock()
	sv.set.write()
}

// scheduleRetry sets the earliest restart, doubling the wait (1s to 1m).
// Called with mu held.
func (sv *server) scheduleRetry() {
	sv.backoff = min(max(2*sv.backoff, time.Second), time.Minute)
	sv.retryAt = time.Now().Add(sv.backoff)
}

func listTools(ctx context.Context, cs *mcp.ClientSession) (map[string]*mcp.Tool, error) {
	out := map[string]*mcp.Tool{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing its tools: %w", err)
		}
		out[t.Name] = t
	}
	return out, nil
}

// describe says what went wrong in words.
func (sv *server) describe(ctx context.Context, err error) string {
	var ee *exec.Error
	switch {
	case errors.As(err, &ee):
		return fmt.Sprintf("cannot start %q: %v", sv.conf.Command, ee.Err)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Sprintf("it did not answer initialize within %s", sv.conf.Init())
	}
	return err.Error()
}

// hint says what to check.
func (sv *server) hint(ctx context.Context, err error, tail *tailBuffer) string {
	var ee *exec.Error
	var ne net.Error
	var oe *net.OpError
	switch {
	case errors.As(err, &ee):
		return fmt.Sprintf("the command %q: is it spelt right and on the PATH of the process (or give its full path)? For an npm server: is Node.js installed (npx)?", sv.conf.Command)
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && sv.conf.Transport() == "stdio":
		return "that the command is an MCP server speaking stdio (only the protocol on stdout), that it does not wait for input first, and init_timeout (a server fetched by npx on first use may need longer; at most " + toolsettings.MaxMCPInitTimeout.String() + ")"
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "that the server at " + sv.conf.Endpoint() + " answers MCP, and init_timeout"
	case errors.As(err, &oe), errors.As(err, &ne):
		return "that a server runs at " + sv.conf.Endpoint() + " (the host, the port, a proxy), and the url's path (/mcp for streamable HTTP, /sse for SSE: set type)"
	case sv.conf.Transport() == "stdio" && tail != nil && tail.String() != "":
		return "its stderr: the process exited during start-up"
	case sv.conf.Transport() == "stdio":
		return "that the command starts an MCP server on stdio (it exited without a word on stderr)"
	case sv.refused.Load() == http.StatusUnauthorized || sv.refused.Load() == http.StatusForbidden:
		return fmt.Sprintf("the headers (Authorization): the server answered %d, refusing the credentials", sv.refused.Load())
	case sv.refused.Load() == http.StatusNotFound:
		return "the url's path: the server answered 404 (/mcp for streamable HTTP, /sse for SSE: set type)"
	}
	return "the server's own log, and type (sse or streamable-http) for a remote one"
}

// session returns the live session, restarting the server first when it is
// down and its back-off has passed.
func (sv *server) session(ctx context.Context) (*mcp.ClientSession, error) {
	if sv.starting != nil {
		select {
		case <-sv.starting:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	sv.mu.Lock()
	cs, state, retryAt := sv.cs, sv.state, sv.retryAt
	sv.mu.Unlock()
	if cs != nil {
		return cs, nil
	}
	if time.Now().Before(retryAt) {
		st := sv.snapshot()
		return nil, &UnavailableError{Status: st, RetryIn: time.Until(retryAt).Truncate(100*time.Millisecond) + 100*time.Millisecond}
	}
	if state != StateReady {
		sv.mu.Lock()
		sv.restarts++
		sv.mu.Unlock()
	}
	sv.start(ctx)
	sv.set.write()
	sv.mu.Lock()
	cs = sv.cs
	sv.mu.Unlock()
	if cs == nil {
		return nil, &UnavailableError{Status: sv.snapshot()}
	}
	return cs, nil
}

// UnavailableError is a call of a tool whose server is down.
type UnavailableError struct {
	Status  Status
	RetryIn time.Duration
}

func (e *UnavailableError) Error() string {
	s := fmt.Sprintf("MCP server %s (%s) is unavailable: %s", e.Status.Name, e.Status.Target, e.Status.Error)
	if e.Status.Check != "" {
		s += "; check " + e.Status.Check
	}
	if e.Status.Stderr != "" {
		s += "; its stderr ends: " + lastLines(e.Status.Stderr, 5)
	}
	if e.RetryIn > 0 {
		s += fmt.Sprintf("; it is started again in %s at the earliest", e.RetryIn)
	}
	return s
}

func (sv *server) close() error {
	sv.mu.Lock()
	cs, kill := sv.cs, sv.kill
	sv.cs = nil
	sv.mu.Unlock()
	var err error
	if cs != nil {
		err = cs.Close()
	}
	if kill != nil {
		kill()
	}
	return err
}
