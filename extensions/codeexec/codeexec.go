// Package codeexec provides code_execution: shell, Python and Node.js code run in
// persistent per-agent sessions, with a time limit that really stops the work.
//
// # Sessions
//
// A session is one shell process (bash by default) kept alive between calls, so
// its working directory, variables and functions carry over: `cd src` in one call
// and `pwd` in the next prints .../src. Sessions are numbered per agent (the
// `session` argument, default 0) and keyed by the call's session id and agent
// profile, so a subordinate agent with its own profile has its own shells.
//
// Every call's code is written to a file in the session's scratch directory and
// run by a line sent to the shell's standard input:
//
//   - terminal: `. FILE < /dev/null`, sourced by the shell itself, so `cd` and
//     `export` persist, and a syntax error is reported without killing the shell;
//   - python and nodejs: `python3 FILE < /dev/null` or `node FILE < /dev/null`,
//     started by the shell in its working directory with its environment.
//
// The line ends by printing a marker with a random token, the exit status and the
// working directory; everything the shell wrote (standard output and error, in one
// pipe) before the marker is the call's output. The code's standard input is
// /dev/null, so it can never read the lines meant for the shell.
//
// # Time limits that interrupt (Agent Zero issue #1011)
//
// The shell is started in a session of its own (setsid), and everything it starts
// belongs to that session unless it leaves it on purpose. When the time limit
// (tools.code_execution.timeout, shortened to fit the host's deadline for the
// call) passes, or the call is cancelled, every process of the session except the
// shell is killed with SIGKILL, repeatedly for a short grace period, so a command
// list or a loop that starts new processes is stopped too. If the shell then
// prints its marker, it is kept with its state. If it does not (a loop in the
// shell itself, a redirected standard output), the shell's whole process group
// is killed and the next call starts a new shell in the last known working
// directory. Either way the result says what ran, which processes were killed, and
// what became of the session. A shell that exits (`exit`, `set -e`) is replaced
// on the next call the same way.
//
// If the plugin process dies (the host kills it at its own deadline, or it
// crashes), the kernel kills the shell (Pdeathsig), and a small watcher process
// per session, in a session of its own and waiting for end of file on a pipe
// only the plugin holds, kills what the shell left running in the background.
//
// Killing by session needs /proc (Linux). Elsewhere the shell and its process
// group are killed at the time limit, and there is no watcher.
//
// # Output
//
// While a command runs, its output is reported to the host in pieces as it
// comes (at most one report every 200 ms, each with everything since the last),
// so the extensions at tool_output_update see it and the operator watches it;
// the last piece is reported before the result is returned.
//
// The model sees at most tools.code_execution.output_limit bytes: the last ones,
// where errors usually are, after a note such as "[output truncated: 48,213 bytes,
// showing the last 10,000]". A non-zero exit status is reported at the end of the
// output and as the tool's error.
//
// runtime "reset" kills a session's shell and everything it started; the next
// call starts a fresh shell in the configured working directory.
package codeexec

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/exocortex/exocortex/extensions/internal/toolargs"
	"github.com/exocortex/exocortex/extensions/internal/toolstream"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sandbox"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/toolsettings"
)

// ToolName is the tool's name.
const ToolName = "code_execution"

// Runtimes.
const (
	RuntimeTerminal = "terminal"
	RuntimePython   = "python"
	RuntimeNode     = "nodejs"
	RuntimeReset    = "reset"
)

// aliases maps the names models use to the runtimes.
var aliases = map[string]string{
	"terminal": RuntimeTerminal, "bash": RuntimeTerminal, "shell": RuntimeTerminal, "sh": RuntimeTerminal,
	"python": RuntimePython, "python3": RuntimePython, "py": RuntimePython,
	"nodejs": RuntimeNode, "node": RuntimeNode, "javascript": RuntimeNode, "js": RuntimeNode,
	"reset": RuntimeReset,
}

// Default grace period after the time limit: how long the session's processes are
// swept and the shell is given to print its marker before it is killed too.
const defaultGrace = time.Second

// Runner owns the sessions of one plugin process. Its methods are safe for
// concurrent use; calls to one session run one at a time.
type Runner struct {
	load  func() (toolsettings.CodeExecution, error)
	grace time.Duration
	// reportEvery is the least time between two reports of partial output.
	reportEvery time.Duration
	// probe says, once per process, whether the sandbox works here.
	probe func() sandbox.Status
	// warned is set once the model was told the sandbox is off or missing.
	warned atomic.Bool
	// env is the environment the shells start from (nil: this process's).
	env []string

	mu       sync.Mutex
	sessions map[string]*session
	// lastDir remembers where a session's shell was when it was replaced, so its
	// successor starts there.
	lastDir map[string]string
	closed  bool
}

// New returns a Runner whose configuration comes from load, called on every tool
// call (it should cache: the built-in plugins pass a once-loaded config). Zero
// fields take their defaults.
func New(load func() (toolsettings.CodeExecution, error)) *Runner {
	return &Runner{load: load, grace: defaultGrace, reportEvery: toolstream.Every, sessions: map[string]*session{}, lastDir: map[string]string{},
		probe: sync.OnceValue(func() sandbox.Status { return sandbox.Probe("") })}
}

// WithEnv makes the shells start from env (KEY=VALUE lines) instead of this
// process's environment: a plugin served inside the host passes the
// environment its process would have had (the host's less the secrets'
// variables), so no shell sees what the host keeps from its plugins. The
// sandbox's probe is given env too. It returns r.
func (r *Runner) WithEnv(env []string) *Runner {
	r.env = slices.Clip(env)
	r.probe = sync.OnceValue(func() sandbox.Status { return sandbox.ProbeEnv("", env) })
	return r
}

// Fixed is a load function returning cfg, for tests and embedders.
func Fixed(cfg toolsettings.CodeExecution) func() (toolsettings.CodeExecution, error) {
	return func() (toolsettings.CodeExecution, error) { return cfg, nil }
}

// Close kills every session's processes and removes their scratch files. The
// Runner refuses calls afterwards.
func (r *Runner) Close() error {
	r.mu.Lock()
	r.closed = true
	all := make([]*session, 0, len(r.sessions))
	for _, s := range r.sessions {
		all = append(all, s)
	}
	r.sessions = map[string]*session{}
	r.mu.Unlock()
	for _, s := range all {
		s.kill()
	}
	return nil
}

// Tool is the code_execution tool.
func (r *Runner) Tool() sdk.Tool {
	return sdk.Tool{
		Name: ToolName,
		Description: "Run shell commands, Python or Node.js code in a persistent session (working directory and " +
			"variables carry over between calls); runtime reset restarts a session.",
		Parameters: `{"type":"object","properties":{` +
			`"runtime":{"type":"string","enum":["terminal","python","nodejs","reset"],"description":"terminal runs shell commands in the session's shell; python and nodejs run the code as a script in the session's working directory; reset kills the session's shell and everything it started."},` +
			`"code":{"type":"string","description":"The commands or the script. Not needed for reset."},` +
			`"session":{"type":"integer","minimum":0,"description":"Session number (default 0). Use another number to keep a long-running job apart."}},` +
			`"required":["runtime"]}`,
		PromptFile: "agent.system.tool.code_execution.md",
		// The shell and the scripts may use any secret the operator set: the
		// host puts the values in the code it sends, and masks the output.
		UsesSecrets: []string{"*"},
		Run:         r.run,
	}
}

type args struct {
	Runtime toolargs.Text `json:"runtime"`
	Code    toolargs.Text `json:"code"`
	Session toolargs.Int  `json:"session"`
}

func (r *Runner) run(ctx context.Context, c *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
	var a args
	if err := toolargs.Decode(ToolName, raw, &a); err != nil {
		return nil, err
	}
	cfg, err := r.load()
	if err != nil {
		return nil, fmt.Errorf("%s: loading the configuration: %w", ToolName, err)
	}
	cfg = cfg.WithDefaults(cfg.WorkDir)
	name := strings.ToLower(strings.TrimSpace(string(a.Runtime)))
	if name == "" {
		name = RuntimeTerminal
	}
	runtime, ok := aliases[name]
	if !ok {
		return nil, fmt.Errorf(`%s: unknown runtime %q: use "terminal", "python", "nodejs" or "reset"`, ToolName, name)
	}
	if a.Session.V < 0 {
		return nil, fmt.Errorf("%s: session %d: use a number from 0 up", ToolName, a.Session.V)
	}
	key := sessionKey(c.Context(), a.Session.V)
	if runtime == RuntimeReset {
		return &exocortexv1.ToolResult{Content: r.reset(key, a.Session.V, cfg)}, nil
	}
	code := string(a.Code)
	if strings.TrimSpace(code) == "" {
		return nil, fmt.Errorf(`%s: "code" is empty: give the commands or the script to run`, ToolName)
	}
	program := ""
	switch runtime {
	case RuntimePython:
		program = cfg.Python
	case RuntimeNode:
		program = cfg.Node
	}
	if program != "" {
		if _, err := exec.LookPath(program); err != nil {
			return nil, fmt.Errorf("%s: runtime %s needs %s, which is not installed or not on PATH: install it (e.g. `apt-get install %s`) or set tools.code_execution.%s in config.yaml",
				ToolName, runtime, program, installName(runtime), map[string]string{RuntimePython: "python", RuntimeNode: "node"}[runtime])
		}
	}
	s, note, err := r.session(key, a.Session.V, cfg)
	if err != nil {
		return nil, err
	}
	// The deadline is taken after the shell started: starting a sandboxed one
	// takes some of it.
	limit := time.Duration(cfg.Timeout)
	if dl, ok := ctx.Deadline(); ok {
		// Finish inside the host's deadline, which would kill the whole plugin.
		left := time.Until(dl)
		margin := min(left/10, 2*time.Second) + r.grace
		limit = min(limit, left-margin)
		if limit <= 0 {
			return nil, fmt.Errorf("%s: the call's deadline leaves no time to run the code", ToolName)
		}
	}
	// The output goes to the host as it comes (package toolstream); every piece is
	// reported before the result is returned.
	st := toolstream.New(ctx, r.reportEvery, func(ctx context.Context, delta string) error {
		_, err := c.ReportOutput(ctx, delta)
		return err
	})
	res := s.exec(ctx, runtime, program, code, limit, r.grace, func(p []byte) { _, _ = st.Write(p) })
	if res.dead {
		r.retire(key, s, res.cwd)
	}
	st.Close()
	return res.toolResult(note, cfg.OutputLimit, a.Session.V)
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}

func installName(runtime string) string {
	if runtime == RuntimeNode {
		return "nodejs"
	}
	return "python3"
}

// sessionKey identifies an agent's session: the operator session, the agent
// profile (a subordinate has its own), and the number the model chose.
func sessionKey(ctx *exocortexv1.Context, n int) string {
	return fmt.Sprintf("%s\x00%s\x00%d", ctx.GetSessionId(), ctx.GetAgentProfile(), n)
}

// session returns the live session for key, starting one (in the last known
// directory of a replaced one) when needed. note says why a new shell was started
// where the model might have expected the old one.
func (r *Runner) session(key string, n int, cfg toolsettings.CodeExecution) (*session, string, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, "", fmt.Errorf("%s: the plugin is shutting down", ToolName)
	}
	note := ""
	if s := r.sessions[key]; s != nil {
		if !s.exitedNow() {
			s.touch()
			r.mu.Unlock()
			return s, "", nil
		}
		delete(r.sessions, key)
		r.lastDir[key] = s.lastCwd()
		note = fmt.Sprintf("[session %d: the previous shell had exited (%s); started a new one]", n, s.exitStatus())
		go s.kill()
	}
	dir := cfg.WorkDir
	if d := r.lastDir[key]; d != "" {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			dir = d
		}
	}
	evict := r.evictLocked(cfg.MaxSessions - 1)
	r.mu.Unlock()
	for _, s := range evict {
		s.kill()
	}
	var confine *sandbox.Policy
	// The model is told once per plugin process when its shells are not
	// confined.
	switch st := r.probe(); {
	case cfg.Confine.Off:
		if r.warned.CompareAndSwap(false, true) {
			note = joinNote(note, "[sandbox off (tools.sandbox.UNSAFE_disable_sandbox): this shell runs with all the operator's rights]")
		}
	case !st.Available:
		if r.warned.CompareAndSwap(false, true) {
			note = joinNote(note, "["+st.String()+"; this shell is not confined, which is why the operator is asked before every command]")
		}
	default:
		confine = &cfg.Confine.Policy
	}
	s, err := startSession(cfg.Shell, dir, cfg.Confine.ScratchDir, confine, r.env)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", ToolName, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		go s.kill()
		return nil, "", fmt.Errorf("%s: the plugin is shutting down", ToolName)
	}
	if old := r.sessions[key]; old != nil {
		// Another call started one meanwhile: use it.
		go s.kill()
		old.touch()
		return old, note, nil
	}
	r.sessions[key] = s
	return s, note, nil
}

// evictLocked removes idle sessions, least recently used first, until at most
// keep remain, and returns them for killing. Busy sessions are never evicted.
func (r *Runner) evictLocked(keep int) []*session {
	if len(r.sessions) <= keep {
		return nil
	}
	type entry struct {
		key string
		s   *session
	}
	var idle []entry
	for k, s := range r.sessions {
		idle = append(idle, entry{k, s})
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i].s.lastUsed().Before(idle[j].s.lastUsed()) })
	var out []*session
	for _, e := range idle {
		if len(r.sessions) <= keep {
			break
		}
		if !e.s.mu.TryLock() {
			continue
		}
		e.s.mu.Unlock()
		delete(r.sessions, e.key)
		r.lastDir[e.key] = e.s.lastCwd()
		out = append(out, e.s)
	}
	return out
}

// retire drops a session whose shell was killed, remembering its directory.
func (r *Runner) retire(key string, s *session, cwd string) {
	r.mu.Lock()
	if r.sessions[key] == s {
		delete(r.sessions, key)
	}
	if cwd != "" {
		r.lastDir[key] = cwd
	}
	r.mu.Unlock()
	go s.kill()
}

// reset kills the session and forgets its directory.
func (r *Runner) reset(key string, n int, cfg toolsettings.CodeExecution) string {
	r.mu.Lock()
	s := r.sessions[key]
	delete(r.sessions, key)
	delete(r.lastDir, key)
	r.mu.Unlock()
	if s == nil {
		return fmt.Sprintf("Session %d had no running shell; the next call starts a fresh one in %s.", n, cfg.WorkDir)
	}
	killed := s.kill()
	msg := fmt.Sprintf("Session %d reset: its shell was stopped", n)
	if len(killed) > 0 {
		msg += " along with " + describe(killed)
	}
	return msg + fmt.Sprintf(". The next call starts a fresh shell in %s.", cfg.WorkDir)
}

// describe lists killed processes for the model, at most a handful.
func describe(ps []proc) string {
	const show = 6
	parts := make([]string, 0, min(len(ps), show))
	for i, p := range ps {
		if i == show {
			break
		}
		parts = append(parts, fmt.Sprintf("`%s` (pid %d)", p.cmd, p.pid))
	}
	s := strings.Join(parts, ", ")
	if len(ps) > show {
		s += fmt.Sprintf(" and %d more", len(ps)-show)
	}
	if len(ps) == 1 {
		return "1 process: " + s
	}
	return fmt.Sprintf("%d processes: %s", len(ps), s)
}

// firstLine is the code's first non-empty line, shortened, to say what ran.
func firstLine(code string) string {
	for _, l := range strings.Split(code, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			more := strings.Count(strings.TrimSpace(code), "\n") > 0
			if len(l) > 80 {
				l = l[:77] + "..."
				more = false
			}
			if more {
				l += " ..."
			}
			return l
		}
	}
	return ""
}

// scratchName is the file a cell's code is written to.
func scratchName(dir string, n int, runtime string) string {
	ext := map[string]string{RuntimeTerminal: ".sh", RuntimePython: ".py", RuntimeNode: ".js"}[runtime]
	return filepath.Join(dir, fmt.Sprintf("cell-%d%s", n, ext))
}
