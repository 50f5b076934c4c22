package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/core/session"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// DefaultLifetime is how long a session stays open while idle (Agent Zero's
// lifetime_hours default, 24).
const DefaultLifetime = 24 * time.Hour

// Errors of the manager, for the surfaces to answer with.
var (
	// ErrNotFound: no session of that name, open or on disk.
	ErrNotFound = errors.New("no such session")
	// ErrProfile: the session already runs another agent profile.
	ErrProfile = errors.New("the session runs another agent profile")
	// ErrClosed: the manager is closing.
	ErrClosed = errors.New("the server is shutting down")
	// ErrBadName: the name cannot name a session.
	ErrBadName = errors.New("not a session name")
)

// AgentSpec is what a session's agent is built from.
type AgentSpec struct {
	Session  *session.Session
	Approver loop.Approver
	Observer func(loop.Event)
	// Profile is the agent profile asked for ("" for the default).
	Profile string
}

// NewAgent builds a session's agent (cmd/exocortex builds it as `run` does).
type NewAgent func(ctx context.Context, spec AgentSpec) (*loop.Agent, error)

// Options configure a Manager.
type Options struct {
	// Dir is the sessions directory ($EXOCORTEX_HOME/sessions): the
	// sessions' files (attachments) and, without a Store, their records.
	Dir string
	// Store keeps the sessions' records (session.NewDirStore(Dir) when nil);
	// a shared store (natssession) lets several replicas serve one session.
	Store    session.Store
	NewAgent NewAgent
	// Approvals receives the held tool calls (NewApprovals(0) when nil).
	Approvals *Approvals
	Logger    *slog.Logger
	// JobLoopEvery is the sessions' job loop period (loop.JobLoopEvery when 0).
	JobLoopEvery time.Duration
	// Frontend is what the sessions' banners are asked for (client "serve").
	Frontend *exocortexv1.FrontendContext
}

// Manager keeps the open sessions. It is safe for concurrent use.
type Manager struct {
	opts Options
	log  *slog.Logger

	mu     sync.Mutex
	live   map[string]*Live
	closed bool
}

// NewManager returns a manager of the sessions under opts.Dir.
func NewManager(opts Options) *Manager {
	if opts.Approvals == nil {
		opts.Approvals = NewApprovals(0)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Store == nil {
		opts.Store = session.NewDirStore(opts.Dir)
	}
	return &Manager{opts: opts, log: opts.Logger, live: map[string]*Live{}}
}

// Store is where the sessions' records are kept.
func (m *Manager) Store() session.Store { return m.opts.Store }

// Approvals is the registry of the sessions' held tool calls.
func (m *Manager) Approvals() *Approvals { return m.opts.Approvals }

// Live is an open session: its agent, log and files.
type Live struct {
	name string
	m    *Manager
	sess *session.Session
	// agent is replaced when another replica moved the session on (fresh).
	agent    atomic.Pointer[loop.Agent]
	approver loop.Approver
	log      *Log
	profile  string
	// turn holds one token: a monologue takes it, so they run one at a time.
	turn chan struct{}

	mu        sync.Mutex
	listeners map[int]func(loop.Event)
	nextL     int
	cancel    context.CancelFunc // the running turn's
	stopped   bool               // Stop cancelled the running turn
	stopJobs  context.CancelFunc // ends the session's job loop (frontend.go)
	expires   time.Time
	// ephemeral sessions end (to .trash) when their lifetime passes, as
	// Agent Zero's chats do; the others are only closed, and stay listed.
	ephemeral bool
}

// Name is the session's name (Agent Zero's context_id).
func (l *Live) Name() string { return l.name }

// Log is the session's log.
func (l *Live) Log() *Log { return l.log }

// Agent is the session's agent (for the host's services; never run it
// outside Run).
func (l *Live) Agent() *loop.Agent { return l.agent.Load() }

// FilesDir is the session's own directory of files: the attachments of its
// messages. It may not exist yet.
func (l *Live) FilesDir() string { return FilesDir(l.m.opts.Dir, l.name) }

// FilesDir is the files directory of session name under dir.
func FilesDir(dir, name string) string { return filepath.Join(dir, name+".files") }

func (m *Manager) exists(ctx context.Context, name string) bool {
	ok, err := m.opts.Store.Exists(ctx, name)
	if err != nil {
		m.log.Warn("serve: looking for a session", "session", name, "store", m.opts.Store.Location(), "err", err)
	}
	return ok
}

// Open returns the open session name, opening it (from disk, or new when
// create is set) when it is not. profile, when set, must be the session's.
func (m *Manager) Open(ctx context.Context, name string, create bool, profile string) (*Live, error) {
	if err := session.ValidateName(name); err != nil {
		if !create {
			return nil, fmt.Errorf("session %q: %w", name, ErrNotFound)
		}
		return nil, fmt.Errorf("%w: %w", ErrBadName, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	if l := m.live[name]; l != nil && l.expired(time.Now()) && !l.Busy() {
		// Idle past its lifetime: it ends now rather than at the next sweep.
		m.mu.Unlock()
		ended, err := m.expire(ctx, l)
		m.mu.Lock()
		if err != nil {
			return nil, err
		}
		if ended && !create {
			return nil, fmt.Errorf("session %q ended after its lifetime: %w", name, ErrNotFound)
		}
	}
	if l := m.live[name]; l != nil {
		if profile != "" && l.profile != "" && profile != l.profile {
			return nil, fmt.Errorf("session %s runs profile %q, not %q: %w", name, l.profile, profile, ErrProfile)
		}
		return l, nil
	}
	if !create && !m.exists(ctx, name) {
		return nil, fmt.Errorf("session %q: %w", name, ErrNotFound)
	}
	s, err := m.opts.Store.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	l := &Live{name: name, m: m, sess: s, log: newLog(), profile: profile, turn: make(chan struct{}, 1),
		listeners: map[int]func(loop.Event){}, expires: time.Now().Add(DefaultLifetime)}
	l.log.fromHistory(s.History())
	approver := m.opts.Approvals.approver(name, func(p Pending) {
		l.log.add("info", "Approval needed for "+p.Tool, p.Action, map[string]any{"approval_id": p.ID, "reason": p.Reason, "deadline": p.Deadline}, 0)
		held, _ := json.Marshal(p)
		l.emit(loop.Event{Type: loop.EventNotice, Code: NoticeApprovalWaiting, Time: time.Now(), Tool: p.Tool, Args: held,
			Text: "waiting for approval " + p.ID + " of " + p.Tool})
	})
	l.approver = approver
	agent, err := m.opts.NewAgent(ctx, AgentSpec{Session: s, Approver: approver, Observer: l.observe, Profile: profile})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("starting the agent of session %q: %w", name, err)
	}
	l.agent.Store(agent)
	l.openFrontend()
	m.live[name] = l
	m.log.Info("serve: session opened", "session", name)
	return l, nil
}

// BySessionID finds the open session whose agent has the ACP session id
// (the host's services route a plugin's call to its agent with it).
func (m *Manager) BySessionID(id string) *Live {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range m.live {
		if l.Agent().SessionID() == id {
			return l
		}
	}
	return nil
}

// ByContext returns the open session a host service call's context comes
// from: the session whose agent has its session id, or whose agent or
// subordinates (which have session ids of their own) run its request.
func (m *Manager) ByContext(c *exocortexv1.Context) *Live {
	if l := m.BySessionID(c.GetSessionId()); l != nil {
		return l
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range m.live {
		if l.Agent().Runs(c.GetRequestId()) {
			return l
		}
	}
	return nil
}

// Get returns the open session name, or opens it from disk; ErrNotFound when
// there is none.
func (m *Manager) Get(ctx context.Context, name string) (*Live, error) {
	return m.Open(ctx, name, false, "")
}

func (l *Live) observe(e loop.Event) {
	l.log.observe(e)
	l.emit(e)
}

func (l *Live) emit(e loop.Event) {
	l.mu.Lock()
	fns := make([]func(loop.Event), 0, len(l.listeners))
	for _, fn := range l.listeners {
		fns = append(fns, fn)
	}
	l.mu.Unlock()
	for _, fn := range fns {
		fn(e)
	}
}

// listen adds fn to the session's listeners until the returned func is called.
func (l *Live) listen(fn func(loop.Event)) func() {
	if fn == nil {
		return func() {}
	}
	l.mu.Lock()
	id := l.nextL
	l.nextL++
	l.listeners[id] = fn
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.listeners, id)
		l.mu.Unlock()
	}
}

// Touch keeps the session open for lifetime from now; a session given a
// lifetime ends when it passes idle (Agent Zero's lifetime_hours), while one
// given 0 is only closed after DefaultLifetime idle.
func (l *Live) Touch(lifetime time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if lifetime > 0 {
		l.ephemeral = true
	} else {
		lifetime = DefaultLifetime
	}
	l.expires = time.Now().Add(lifetime)
}

func (l *Live) expired(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return now.After(l.expires)
}

// Busy reports whether a monologue runs.
func (l *Live) Busy() bool { return len(l.turn) == 1 }

// Each calls fn with every open session.
func (m *Manager) Each(fn func(*Live)) {
	m.mu.Lock()
	live := make([]*Live, 0, len(m.live))
	for _, l := range m.live {
		live = append(live, l)
	}
	m.mu.Unlock()
	for _, l := range live {
		fn(l)
	}
}
