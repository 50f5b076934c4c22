// Package mcpclient gives the agent the tools of the MCP servers the operator
// configures (config.yaml's mcp_servers and mcp_servers_file, sent to the
// plugin in its settings as toolsettings.MCPServer entries): local servers
// started on stdio and remote ones over streamable HTTP or SSE, with headers.
//
// Each server's tools are plugin tools named SERVER.TOOL, so every call goes
// through the host like any plugin tool: tool_execute_before and
// tool_execute_after, approvals, timeouts, secrets masking and the sandbox
// rules. The servers are started in parallel when the plugin starts, each
// bounded by its init_timeout (the plugin declares its tools then, within the
// host's start-up time); one that fails to start, does not answer initialize,
// or crashes later is reported by name with its stderr and what to check
// (Status, the status file, the system prompt's MCP SERVERS block, the error
// of a call), its tools answer that it is unavailable, and it is started
// again with back-off on a later call.
package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/renameio/v2"

	"github.com/exocortex/exocortex/toolsettings"
)

// State of a server.
const (
	StateReady       = "ready"
	StateFailed      = "failed"
	StateUnavailable = "unavailable" // crashed after start; restarted on a later call
	StateStarting    = "starting"    // declared from the tool cache, starting in the background
)

// Status is one server as Status reports it.
type Status struct {
	Name      string   `json:"name"`
	Transport string   `json:"transport"`
	Target    string   `json:"target"` // the command line or the URL
	State     string   `json:"state"`
	Tools     []string `json:"tools"`
	Error     string   `json:"error,omitempty"`
	Stderr    string   `json:"stderr,omitempty"`
	Check     string   `json:"check,omitempty"`
	Restarts  int      `json:"restarts,omitempty"`
	Took      string   `json:"took,omitempty"`
}

// Report is the status file's content.
type Report struct {
	Updated  time.Time `json:"updated"`
	Servers  []Status  `json:"servers"`
	Problems []string  `json:"problems,omitempty"`
}

// Set is the configured servers and their tools.
type Set struct {
	servers  []*server
	problems []string
	status   string // the status file ("" : none)
	cache    string // the tool cache ("" : none)
	log      *slog.Logger
	mu       sync.Mutex // the status file and the cache
	// bg are the background starts of servers known from the cache; Close
	// cancels them (stop) and waits, so no file is written after it returns.
	bg   sync.WaitGroup
	stop context.CancelFunc
	// secrets resolves placeholders (Options.Secrets); resolved maps each
	// value it gave to the text it came from, for mask (under resolvedMu).
	secrets    func(string) (string, error)
	resolvedMu sync.Mutex
	resolved   map[string]string
	// env and dir are where a stdio server starts (Options.Env, Options.Dir).
	env []string
	dir string
}

// Options configure Connect.
type Options struct {
	// StatusFile, when set, is rewritten with the Report whenever a server's
	// state changes ($EXOCORTEX_HOME/run/mcp-servers.json), for `exocortex
	// mcp list`, run's stderr and the session.
	StatusFile string
	Logger     *slog.Logger
	// Problems are configuration problems found before (left-out entries).
	Problems []string
	// ToolCache, when set, keeps the tools each server listed
	// ($EXOCORTEX_HOME/run/mcp-tools.json): a server whose configuration is
	// unchanged since declares them at once and starts in the background.
	ToolCache string
	// Secrets, when set, resolves the §§secret(NAME) placeholders of a
	// value of env or headers (the host's secrets store, secrets.Store's
	// Substitute); a placeholder without it fails the server's start.
	Secrets func(text string) (string, error)
	// Env is the environment a stdio server starts from (KEY=VALUE lines,
	// its configured env added; nil: this process's environment), and Dir
	// its working directory ("": this process's). A plugin served inside the
	// host gives the environment and directory its process would have had.
	Env []string
	Dir string
}

// Connect starts every server in parallel, each within its init timeout,
// and lists their tools; it returns when all have answered or timed out.
func Connect(ctx context.Context, servers map[string]toolsettings.MCPServer, opts Options) *Set {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Set{problems: opts.Problems, status: opts.StatusFile, cache: opts.ToolCache, log: opts.Logger,
		secrets: opts.Secrets, resolved: map[string]string{}, env: slices.Clip(opts.Env), dir: opts.Dir}
	cache := readCache(opts.ToolCache)
	for _, name := range toolsettings.MCPNames(servers) {
		s.servers = append(s.servers, &server{name: name, conf: servers[name], set: s})
	}
	var wg sync.WaitGroup
	bgCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = stop
	for _, sv := range s.servers {
		if tools, ok := cache.cached(sv); ok {
			sv.tools, sv.state, sv.starting = tools, StateStarting, make(chan struct{})
			s.bg.Go(func() {
				sv.start(bgCtx)
				close(sv.starting)
				s.write()
				s.writeCache()
			})
			continue
		}
		wg.Go(func() { sv.start(ctx) })
	}
	wg.Wait()
	s.writeCache()
	for _, sv := range s.servers {
		if st := sv.snapshot(); st.State != StateReady && st.State != StateStarting {
			s.log.Warn("MCP server unavailable", "server", st.Name, "err", st.Error, "check", st.Check, "stderr", st.Stderr)
		}
	}
	s.write()
	return s
}

// Statuses reports every server, by name.
func (s *Set) Statuses() []Status {
	out := make([]Status, 0, len(s.servers))
	for _, sv := range s.servers {
		out = append(out, sv.snapshot())
	}
	return out
}

// Problems are the configuration problems Connect was given.
func (s *Set) Problems() []string { return s.problems }

// Close ends every server's session (and a stdio server's process).
func (s *Set) Close() error {
	if s.stop != nil {
		s.stop()
	}
	s.bg.Wait()
	var errs []error
	for _, sv := range s.servers {
		errs = append(errs, sv.close())
	}
	return errors.Join(errs...)
}

// write rewrites the status file.
func (s *Set) write() {
	if s.status == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := json.MarshalIndent(Report{Updated: time.Now().UTC(), Servers: s.Statuses(), Problems: s.problems}, "", "  ")
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(s.status), 0o700); err == nil {
			err = renameio.WriteFile(s.status, append(b, '\n'), 0o600)
		}
	}
	if err != nil {
		s.log.Warn("writing the MCP servers' status", "file", s.status, "err", err)
	}
}

// ReadReport reads a status file.
func ReadReport(path string) (Report, error) {
	var r Report
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Problems are the problem lines (Report.Lines) of the status file at path
// when it was written at or after since (a run's or a session's start): nil
// when there is none, it is older, or it cannot be read.
func Problems(path string, since time.Time) []string {
	rep, err := ReadReport(path)
	if err != nil || rep.Updated.Before(since) {
		return nil
	}
	return rep.Lines()
}

// Lines are a report's problems as one line each, for a terminal: every
// server not ready, with what to check, and every configuration problem.
func (r Report) Lines() []string {
	var out []string
	for _, p := range r.Problems {
		out = append(out, "MCP: "+p)
	}
	for _, st := range r.Servers {
		if st.State == StateReady || st.State == StateStarting {
			continue
		}
		line := fmt.Sprintf("MCP server %s (%s) is %s: %s", st.Name, st.Target, st.State, st.Error)
		if st.Check != "" {
			line += "; check: " + st.Check
		}
		if st.Stderr != "" {
			line += "; its stderr ends: " + lastLines(st.Stderr, 3)
		}
		out = append(out, line)
	}
	return out
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// names are sorted tool names of a server, for Status.
func names(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
