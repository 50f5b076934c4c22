package tui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/prompts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sandbox"
	"github.com/exocortex/exocortex/tui/shell"
	"github.com/exocortex/exocortex/tui/transcript"
)

// CohesionPrompt is the prompt file whose text asks the agent for a
// reflection when the operator sends an empty prompt.
const CohesionPrompt = "fw.cohesion"

// Config is what a terminal session needs from the command line. The slow
// parts (plugins) are functions, run after the first paint.
type Config struct {
	// Model is the chat model's name; Address is the server it is asked at,
	// speaking Provider's protocol (llm.ProviderOllama when ""); Scripted,
	// when set, names the script replayed instead ("script:FILE").
	Model    string
	Address  string
	Provider string
	Scripted string
	LLM      llm.Provider
	// NumCtx is the context window sent with every request (for the status line).
	NumCtx int
	// JobLoopEvery is the job loop's period (loop.JobLoopEvery when 0).
	JobLoopEvery time.Duration

	// StartHost starts the plugins and watches their directories (hot
	// reload, hotreload.go); onEvent is told of every host event, on the
	// host's goroutines.
	StartHost func(ctx context.Context, onEvent func(host.Event)) (*host.Host, error)
	// NewAgent builds the agent of a session; the spec's fields are all set.
	NewAgent func(AgentSpec) (*loop.Agent, error)
	Prompts  *prompts.Loader

	// SessionsDir holds the sessions; Session names the one to open (created
	// when missing). Resumed says it was asked for by -c or --resume.
	SessionsDir string
	// Sessions keeps the sessions' records (session.NewDirStore(SessionsDir)
	// when nil; the shared bucket when the memory journal is on NATS, so
	// the list shows sessions begun through other hosts' serve).
	Sessions session.Store
	Session  string
	Resumed  bool

	// Mask, when set, replaces the operator's secrets in what they type by
	// their placeholders (package secrets) before the input history, the
	// transcript or the agent see it.
	Mask func(string) string
	// HistoryFile keeps the input history ("" keeps it in memory).
	HistoryFile string
	// MemoryDir is the memory store's directory.
	MemoryDir string
	// Embedder is the configured tools.memory.embedder ("" when unset), from
	// the configuration the command read once.
	Embedder string
	// RecallThreshold is tools.memory.recall.threshold: the least match score
	// of a hit the agent's recall keeps; /memory search marks the hits below
	// it, as recall drops them (0: none).
	RecallThreshold float64
	// WorkDir resolves @path, /export and /import paths and runs !commands.
	WorkDir      string
	ApprovalMode loop.ApprovalMode
	// Confine is the sandbox !commands run in under the local shell (nil:
	// unconfined); through the agent's shell tool they are in its sandbox.
	Confine *config.Confinement
	// SandboxProbe finds whether the sandbox works on this machine
	// (sandbox.Probe); nil shows nothing. The welcome card warns when it does
	// not, or when Confine is turned off (tools.sandbox.UNSAFE_disable_sandbox).
	SandboxProbe func() sandbox.Status
	// Fullscreen draws on the alternate screen instead of inline.
	Fullscreen bool
	// Problems, when set, are the start-up and health problems the plugins
	// report outside the host, one line each: the MCP servers that failed to
	// start, crashed or hang, with their stderr and what to check (the
	// command reads $EXOCORTEX_HOME/run/mcp-servers.json). The welcome card
	// shows those found once the plugins are up; each new one after is a
	// transcript line (read at every status tick). Called off the UI
	// goroutine.
	Problems func() []string
}

// provider is the model server's protocol, Ollama unless said otherwise.
func (c Config) provider() string {
	if c.Provider == "" {
		return llm.ProviderOllama
	}
	return c.Provider
}

// AgentSpec is what Config.NewAgent is given.
type AgentSpec struct {
	Host     *host.Host
	Session  *session.Session
	Model    string
	Mode     loop.ApprovalMode
	Observer func(loop.Event)
	Approver loop.Approver
}

// ErrBusy is returned for work that cannot start while a turn runs.
var ErrBusy = errors.New("a turn is running: wait for it to finish, or press ctrl+c to stop it")

// ErrNotReady is returned for a prompt before the agent is built.
var ErrNotReady = errors.New("the agent is not ready yet (plugins are still starting)")

// Engine is the session's runtime: the plugins, the open session, its agent,
// and what was recorded of the turns. The Bubble Tea model and the line mode
// both drive it. Its methods are safe for concurrent use; one turn runs at a
// time.
type Engine struct {
	// sandboxWarn is the welcome card's sandbox warning, found once.
	sandboxWarn func() string
	cfg         Config
	shell       *shell.Runner
	rec         *recorder

	mu      sync.Mutex
	host    *host.Host
	hostErr error
	// windowWarning: the model's window cannot hold the fixed prompt.
	windowWarning string
	// fe is the banners and job loop of the agent (frontend.go).
	fe    frontendState
	sess  *session.Session
	agent *loop.Agent
	model string
	mode  loop.ApprovalMode
	busy  bool
	// pendingNotice is what begin found another host wrote to the session
	// (fresh.go), said at the turn's start.
	pendingNotice string
	observer      func(loop.Event)
	approver      loop.Approver
	retried       func(llm.Retry)
	// hostEvents is where host events go (hotreload.go); not under mu, since
	// the host emits while the engine holds it (ApplyPending).
	hostEvents atomic.Pointer[func(host.Event)]
	// allowed remembers "allow for this session" answers, so that an agent
	// rebuilt for the same session (/rename, /model) keeps them.
	allowed map[string]bool
}

// NewEngine returns an engine for cfg; nothing is started yet.
func NewEngine(cfg Config) *Engine {
	if cfg.ApprovalMode == "" {
		cfg.ApprovalMode = loop.ApprovalDefault
	}
	e := &Engine{cfg: cfg, model: cfg.Model, mode: cfg.ApprovalMode, rec: newRecorder(), allowed: map[string]bool{}}
	e.shell = &shell.Runner{Approver: loop.ApproverFunc(e.approve), Mode: e.Mode, Dir: cfg.WorkDir, Confine: cfg.Confine}
	e.sandboxWarn = sync.OnceValue(func() string { return sandboxWarning(cfg) })
	if cfg.SandboxProbe != nil {
		go e.sandboxWarn() // the probe starts a process: not while drawing
	}
	return e
}

// SandboxWarning is the welcome card's warning about the sandbox ("" when it
// is on, or when nothing probes it).
func (e *Engine) SandboxWarning() string { return e.sandboxWarn() }

// sandboxWarning says when the agent's commands and the operator's !commands
// will not run in the sandbox, and what happens instead (docs/sandbox.md).
func sandboxWarning(cfg Config) string {
	if cfg.SandboxProbe == nil {
		return ""
	}
	if cfg.Confine != nil && cfg.Confine.Off {
		return "sandbox off (tools.sandbox.UNSAFE_disable_sandbox): the agent's commands and !commands run with all your rights"
	}
	if st := cfg.SandboxProbe(); !st.Available {
		return st.String() + "; every command the agent runs, and every !command, is asked for, even in yolo mode"
	}
	return ""
}

// Config returns the configuration the engine was made with.
func (e *Engine) Config() Config { return e.cfg }

// SetFrontend connects the engine to what shows events and asks the operator.
// Call it before StartHost and OpenSession.
func (e *Engine) SetFrontend(observer func(loop.Event), approver loop.Approver) {
	e.mu.Lock()
	e.observer, e.approver = observer, approver
	e.mu.Unlock()
}

// Retried shows a retried model request (HTTP 429 or 5xx, or no answer) to
// the frontend; the provider calls it while it waits to try again.
func (e *Engine) Retried(r llm.Retry) {
	e.mu.Lock()
	fn := e.retried
	e.mu.Unlock()
	if fn != nil {
		fn(r)
	}
}

// setRetried sets where Retried goes.
func (e *Engine) setRetried(fn func(llm.Retry)) {
	e.mu.Lock()
	e.retried = fn
	e.mu.Unlock()
}

// observe records an event and passes it on. The loop calls it from the
// goroutine running the monologue.
func (e *Engine) observe(ev loop.Event) {
	e.rec.record(ev)
	e.mu.Lock()
	obs := e.observer
	e.mu.Unlock()
	if obs != nil {
		obs(ev)
	}
}

// approve asks the frontend, remembering "allow for this session" answers.
func (e *Engine) approve(ctx context.Context, req loop.Approval) (loop.Decision, error) {
	key := req.Tool + "\x00" + req.Action
	e.mu.Lock()
	ap, memo := e.approver, e.allowed[key]
	e.mu.Unlock()
	if memo {
		return loop.AllowSession, nil
	}
	if ap == nil {
		return loop.Deny, errors.New("nobody can be asked here (no terminal); --approval yolo lets held calls run")
	}
	d, err := ap.Approve(ctx, req)
	if err == nil && d == loop.AllowSession {
		e.mu.Lock()
		e.allowed[key] = true
		e.mu.Unlock()
	}
	return d, err
}

// StartHost starts the plugins and, when a session is open, builds its agent.
func (e *Engine) StartHost(ctx context.Context) (*host.Host, error) {
	if e.cfg.StartHost == nil {
		return nil, errors.New("no plugin host configured")
	}
	h, err := e.cfg.StartHost(ctx, e.hostEvent)
	defer e.Banners(ctx) // the welcome card shows them (frontend.go)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.host, e.hostErr = h, err
	if err != nil {
		return nil, err
	}
	if e.sess != nil && e.agent == nil {
		if err := e.buildAgentLocked(); err != nil {
			return h, err
		}
		// The welcome card warns when the window cannot hold the fixed prompt.
		fctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		if fit, err := e.agent.FitWindow(fctx); err == nil {
			e.windowWarning = fit.Warning()
		}
		cancel()
	}
	return h, nil
}

// WindowWarning is the welcome card's warning about the context window ("").
func (e *Engine) WindowWarning() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.windowWarning
}

// Problems are the plugins' problems reported outside the host (Config.Problems).
func (e *Engine) Problems() []string {
	if e.cfg.Problems == nil {
		return nil
	}
	return e.cfg.Problems()
}

// Host returns the plugin host (nil until started).
func (e *Engine) Host() *host.Host {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.host
}

// Ready reports whether a prompt can run.
func (e *Engine) Ready() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.agent != nil
}

// Probe asks the model server whether it answers and has the model.
func (e *Engine) Probe(ctx context.Context) (llm.ServerInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return e.cfg.LLM.Probe(ctx, e.Model())
}

// Model is the chat model in use.
func (e *Engine) Model() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.model
}

// Mode is the approval mode in force.
func (e *Engine) Mode() loop.ApprovalMode {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.mode
}

// SetMode changes the approval mode for the agent and for !commands.
func (e *Engine) SetMode(m loop.ApprovalMode) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.mode = m
	if e.agent != nil {
		e.agent.SetApprovalMode(m)
	}
}

// Session returns the open session (nil before OpenSession).
func (e *Engine) Session() *session.Session {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sess
}

// Agent returns the agent (nil until the plugins and the session are ready).
func (e *Engine) Agent() *loop.Agent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.agent
}

// Stats returns what was recorded of the turns so far.
func (e *Engine) Stats() Stats { return e.rec.stats() }

// LastWiring returns the hook calls of the last turn, in order.
func (e *Engine) LastWiring() []loop.Event { return e.rec.wiring() }

// buildAgentLocked makes the agent for the open session. e.mu is held.
func (e *Engine) buildAgentLocked() error {
	a, err := e.cfg.NewAgent(AgentSpec{
		Host: e.host, Session: e.sess, Model: e.model, Mode: e.mode,
		Observer: e.observe, Approver: loop.ApproverFunc(e.approve),
	})
	if err != nil {
		return fmt.Errorf("building the agent for session %s: %w", e.sess.Name(), err)
	}
	e.agent = a
	e.startJobLoopLocked(a)
	return nil
}

// OpenSession makes name the open session (creating it when it does not
// exist), closing the one before. The "allow for this session" answers are
// forgotten unless keepApprovals is set (the same session under a new name).
func (e *Engine) OpenSession(ctx context.Context, name string) (*session.Session, error) {
	return e.openSession(ctx, name, false, nil)
}

func (e *Engine) openSession(ctx context.Context, name string, keepApprovals bool, between func() error) (*session.Session, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.busy {
		return nil, ErrBusy
	}
	if err := session.ValidateName(name); err != nil {
		return nil, err
	}
	if e.sess != nil && e.sess.Name() == name && between == nil {
		return e.sess, nil
	}
	old := e.sess
	if old != nil {
		if err := old.Close(); err != nil {
			return nil, fmt.Errorf("closing session %s: %w", old.Name(), err)
		}
		e.sess, e.agent = nil, nil
	}
	if between != nil {
		if err := between(); err != nil {
			// Put the old session back: the operator keeps working in it.
			if old != nil {
				if s, rerr := e.store().Open(ctx, old.Name()); rerr == nil {
					e.sess = s
					if e.host != nil {
						_ = e.buildAgentLocked()
					}
				}
			}
			return nil, err
		}
	}
	s, err := e.store().Open(ctx, name)
	if err != nil {
		return nil, err
	}
	e.sess = s
	if !keepApprovals {
		e.allowed = map[string]bool{}
	}
	if e.host != nil {
		if err := e.buildAgentLocked(); err != nil {
			return s, err
		}
	}
	return s, nil
}

// SessionExists reports whether a session file called name exists.
func (e *Engine) SessionExists(name string) bool {
	ok, _ := e.store().Exists(context.Background(), name)
	return ok
}

// store is where the sessions are kept.
func (e *Engine) store() session.Store {
	if e.cfg.Sessions != nil {
		return e.cfg.Sessions
	}
	return session.NewDirStore(e.cfg.SessionsDir)
}

// Sessions lists the saved sessions, newest first.
func (e *Engine) Sessions() ([]session.Info, error) { return e.store().List(context.Background()) }

// NewSession opens a fresh session, named from the time when name is "".
func (e *Engine) NewSession(ctx context.Context, name string) (*session.Session, error) {
	if name == "" {
		name = session.NewName(time.Now())
	} else if e.SessionExists(name) {
		return nil, fmt.Errorf("a session called %s exists already: /resume %s opens it", name, name)
	}
	return e.OpenSession(ctx, name)
}

// Rename gives the open session a new name: the file is renamed and the
// session reopened under it (its agent is rebuilt; the history and state are
// those on disk, so nothing is lost).
func (e *Engine) Rename(ctx context.Context, name string) (*session.Session, error) {
	if err := session.ValidateName(name); err != nil {
		return nil, err
	}
	cur := e.Session()
	if cur == nil {
		return nil, errors.New("no session is open")
	}
	if cur.Name() == name {
		return cur, nil
	}
	if e.SessionExists(name) {
		return nil, fmt.Errorf("a session called %s exists already; choose another name", name)
	}
	oldPath := cur.Path()
	newPath := filepath.Join(e.cfg.SessionsDir, name+".jsonl")
	return e.openSession(ctx, name, true, func() error {
		if err := e.store().Rename(ctx, cur.Name(), name); err != nil {
			return fmt.Errorf("renaming %s: %w", oldPath, err)
		}
		// What the terminal showed goes with it (there may be none).
		_ = os.Rename(shownPath(oldPath), shownPath(newPath))
		return nil
	})
}

// SetModel switches the chat model after checking the server has it; the
// agent is rebuilt on the same session.
func (e *Engine) SetModel(ctx context.Context, model string) (llm.ServerInfo, error) {
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	info, err := e.cfg.LLM.Probe(pctx, model)
	cancel()
	if err != nil {
		return info, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.busy {
		return info, ErrBusy
	}
	prev := e.model
	e.model = model
	if e.sess != nil && e.host != nil {
		if err := e.buildAgentLocked(); err != nil {
			e.model = prev
			_ = e.buildAgentLocked()
			return info, err
		}
	}
	return info, nil
}

// begin marks a turn as running, brings the open session up to its store
// (fresh) and returns the agent.
func (e *Engine) begin(ctx context.Context) (*loop.Agent, *session.Session, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.busy {
		return nil, nil, ErrBusy
	}
	if e.agent == nil {
		if e.hostErr != nil {
			return nil, nil, fmt.Errorf("the plugins did not start, so no agent can run: %w", e.hostErr)
		}
		return nil, nil, ErrNotReady
	}
	n, err := e.freshLocked(ctx)
	if err != nil {
		return nil, nil, err
	}
	e.busy = true
	if n > 0 {
		e.pendingNotice = freshNotice(n, e.sess.Name(), e.store().Location())
	}
	return e.agent, e.sess, nil
}

// end marks the turn over and swaps in what was staged during its last
// iteration, so the screen and /plugins do not wait for the next message.
func (e *Engine) end() {
	e.mu.Lock()
	e.busy = false
	e.applyIdleLocked()
	e.mu.Unlock()
}

// Busy reports whether a turn runs.
func (e *Engine) Busy() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.busy
}

// Run runs one monologue on the operator's text. Events reach the frontend
// as they happen; cancel ctx to stop it.
func (e *Engine) Run(ctx context.Context, text string) (*loop.Result, error) {
	a, _, err := e.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer e.end()
	e.rec.startTurn()
	e.noticeFresh()
	// The operator typed it here: user_message_ui may rewrite it first.
	text, err = a.UserMessageUI(ctx, text)
	if err != nil {
		return nil, err
	}
	res, err := a.Monologue(ctx, text)
	return res, e.conflictError(err)
}

// Reflect runs the cohesion loop: a monologue on the reflection instruction
// (prompts/fw.cohesion.md), whose answer is saved in the session as a thought
// (see package transcript) and returned. The exchange stays in the agent's
// context; the transcript hides it.
func (e *Engine) Reflect(ctx context.Context) (string, error) {
	p, err := e.cfg.Prompts.Load(CohesionPrompt)
	if err != nil {
		return "", err
	}
	instruction, err := p.Render(nil)
	if err != nil {
		return "", err
	}
	a, s, err := e.begin(ctx)
	if err != nil {
		return "", err
	}
	defer e.end()
	e.rec.startTurn()
	e.noticeFresh()
	before := len(a.History())
	res, err := a.Monologue(ctx, strings.TrimSpace(instruction))
	err = e.conflictError(err)
	hist := a.History()
	if len(hist) <= before || s == nil {
		return "", err
	}
	thought := ""
	if res != nil {
		thought = res.Response
	}
	if err != nil {
		thought = "(the reflection was interrupted: " + err.Error() + ")"
	}
	// The thought is saved even when ctx was canceled: it marks the exchange
	// as a reflection so the transcript keeps hiding it.
	m := transcript.NewThought(hist[before].GetId(), thought, time.Now())
	if aerr := s.Append(context.WithoutCancel(ctx), m); aerr != nil && err == nil {
		err = aerr
	}
	return thought, err
}

// RunShell runs a !command under the approval rules (see package shell):
// through the agent's shell tool when a plugin provides it, else under the
// local shell.
func (e *Engine) RunShell(ctx context.Context, command string) (shell.Result, error) {
	e.mu.Lock()
	if e.busy {
		e.mu.Unlock()
		return shell.Result{}, ErrBusy
	}
	e.busy = true
	e.mu.Unlock()
	defer e.end()
	review, err := e.reviewShell(ctx, command)
	if err != nil {
		return shell.Result{Command: command}, err
	}
	var res shell.Result
	if e.hasTool(ShellTool) {
		res, err = e.shell.RunWith(ctx, review.command, e.shellThroughTool)
	} else {
		res, err = e.shell.Run(ctx, review.command)
	}
	if err == nil {
		res, err = review.after(ctx, res)
	}
	return res, err
}

// History returns the open session's messages as saved: the agent's
// history and the thoughts kept beside it.
func (e *Engine) History() []*exocortexv1.Message {
	e.mu.Lock()
	s := e.sess
	e.mu.Unlock()
	if s == nil {
		return nil
	}
	return s.History()
}

// Close closes the session and stops the plugins.
func (e *Engine) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sess != nil {
		e.sess.Close()
		e.sess = nil
	}
	if e.fe.stopJobs != nil {
		e.fe.stopJobs()
		e.fe.stopJobs = nil
	}
	if e.host != nil {
		e.host.Close()
		e.host = nil
	}
	e.agent = nil
}

// resolve makes a path from a command relative to the working directory and
// expands a leading ~.
func (e *Engine) resolve(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	if filepath.IsAbs(p) || e.cfg.WorkDir == "" {
		return p
	}
	return filepath.Join(e.cfg.WorkDir, p)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
