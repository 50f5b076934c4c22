package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/core/state"
	"github.com/exocortex/exocortex/prompts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/secrets"
)

// Options configure an Agent.
type Options struct {
	Host *host.Host
	// LLM is the model server (Ollama or OpenAI-compatible).
	LLM     llm.Provider
	Prompts *prompts.Loader
	Model   string
	// NumCtx is the context window sent with every model call; when 0, the
	// model's own context length (Window, /api/show), capped by MaxNumCtx.
	NumCtx int
	// MaxNumCtx caps the window found from the model (llm.DefaultNumCtx when 0).
	MaxNumCtx int
	// UtilityModel writes the summaries of history compression ("": the
	// extractive summary); CompressTimeout bounds it (DefaultCompressTimeout
	// when 0), after which the extractive summary is used.
	UtilityModel    string
	CompressTimeout time.Duration
	// UtilityLLM serves the utility model when it is not LLM's server (nil: LLM).
	UtilityLLM llm.Provider
	// FullToolDocs puts every tool's full documentation in the system prompt
	// instead of one line per tool until the tool is used or asked for.
	FullToolDocs bool
	// MaxIterations bounds one monologue (25 when 0).
	MaxIterations int
	// MaxResumes bounds how many times message_loop_end's resume may keep one
	// monologue going after its final response (3 when 0; -1: never).
	MaxResumes int
	// UnusableLimit stops a monologue after this many unusable replies in a row
	// (misformatted, repeated, empty); 5 when 0, which leaves the supervisor room
	// for its three tiers of intervention first.
	UnusableLimit int
	// RecentMessages is how many messages the ACP context carries (10 when 0).
	RecentMessages int
	// ToolTimeout bounds a tool call (2 minutes when 0); ToolTimeouts overrides
	// it per tool name.
	ToolTimeout  time.Duration
	ToolTimeouts map[string]time.Duration
	// NativeTools offers the plugins' tools to the model as native tools as well
	// as in the system prompt.
	NativeTools bool
	// Session keeps the history and session state on disk; nil keeps them in
	// memory only.
	Session *session.Session
	// PersistentState is where persistent-scope keys are saved ("" for nowhere).
	PersistentState string
	// AgentProfile names the agent in the ACP context ("agent0" when "").
	AgentProfile string
	// Approver decides tool calls an extension holds for the operator; nil denies
	// them (there is no operator to ask).
	Approver Approver
	// ApprovalMode is "default" (ask), "auto_edit" (file edits pass) or "yolo".
	ApprovalMode ApprovalMode
	// Observer receives every event; it must not block for long.
	Observer func(Event)
	// NoBatching gives every extension its own call of the hook's RPC, one after
	// another: no batches, no Dispatch stream, no calls at once (for comparison;
	// those keep the same semantics).
	NoBatching bool
	// EmitContext adds the ACP context object to hook events.
	EmitContext bool
	// RecordRequests adds what a replay needs to the events: each request
	// (EventRequest) and each tool's own result (EventToolExecuted).
	RecordRequests bool
	// ToolExecutor, when set, is asked for a tool's result before the tool
	// runs (a replay serves the recorded one); nil from it runs the tool.
	ToolExecutor ToolExecutor
	// TimeBudgets are the hooks' time budgets (timebudget.go).
	TimeBudgets TimeBudgets
	Logger      *slog.Logger
}

// Agent runs monologues for one session. Methods must not be called concurrently,
// except Approve-related ones from the approver.
type Agent struct {
	opts  Options
	store *state.Store
	log   *slog.Logger

	history []*exocortexv1.Message
	once    map[string]bool
	// repeated holds the extensions already reported for repeating a prompt
	// block within one request (repeats.go), by plugin and extension.
	repeated map[string]bool

	sessionID string
	// depth is 0 for the operator's agent, 1 for its subordinates, and so on.
	depth    int
	fam      *family
	children map[string]*Agent

	// custom is the custom_data hook contexts share (dispatch.go).
	custom atomic.Pointer[customEntry]

	mu          sync.Mutex
	sessionAllo map[string]bool
	lastContext *exocortexv1.Context
	inited      bool
	// embedChanges are reports of an embedding model change waiting for
	// embedding_model_changed (toolhooks.go).
	embedChanges []*host.EmbeddingChange

	// The prompt budget (budget.go, compress.go, tokens.go).
	window       int
	tokens       *tokenCounter
	expanded     map[string]bool
	toolLines    toolLines
	blockLimit   map[string]int
	verbatimFrom int
	// summaries are the parts of the summary of the compressed turns, oldest
	// first, each one message of the prompt (compress.go).
	summaries       []string
	compressions    int
	lastCompression *Compression
	lastBudget      *Budget
	pending         []*exocortexv1.Message
	archived        map[string]bool
	warnedArchive   bool
	// inserts are the message_loop_prompts_after messages as sent, kept at
	// their place in the history (pinned.go).
	inserts []*pinned
}

// New returns an agent. It restores the session's history and state when the
// options carry a session.
func New(opts Options) (*Agent, error) {
	if opts.Host == nil || opts.LLM == nil || opts.Prompts == nil {
		return nil, errors.New("loop: Host, LLM and Prompts are required")
	}
	if opts.Model == "" {
		return nil, errors.New("loop: no model configured (set model in config.yaml, EXOCORTEX_MODEL, or --model)")
	}
	for name, d := range opts.TimeBudgets.Hooks {
		if _, ok := hooks.Lookup(name); !ok {
			return nil, fmt.Errorf("loop: time_budgets.hooks names %q, which is not a hook (write a hook name, e.g. response_stream_chunk)", name)
		}
		if d < 0 {
			return nil, fmt.Errorf("loop: time_budgets.hooks.%s is negative (%s)", name, d)
		}
	}
	if opts.MaxIterations == 0 {
		opts.MaxIterations = 25
	}
	if opts.MaxResumes == 0 {
		opts.MaxResumes = 3
	}
	if opts.UnusableLimit == 0 {
		opts.UnusableLimit = 5
	}
	if opts.RecentMessages == 0 {
		opts.RecentMessages = 10
	}
	if opts.ToolTimeout == 0 {
		opts.ToolTimeout = 2 * time.Minute
	}
	if opts.AgentProfile == "" {
		opts.AgentProfile = "agent0"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	// Every model request leaves masked, whoever built it (secrets.go).
	opts.LLM = secrets.MaskProvider(opts.LLM, opts.Host.Secrets().Masker())
	opts.UtilityLLM = secrets.MaskProvider(opts.UtilityLLM, opts.Host.Secrets().Masker())
	a := &Agent{
		opts:        opts,
		store:       state.NewStore(opts.Host.Registry()),
		log:         opts.Logger,
		once:        map[string]bool{},
		sessionAllo: map[string]bool{},
		fam:         &family{byRequest: map[string]*Agent{}},
		children:    map[string]*Agent{},
		tokens:      newTokenCounter(),
		expanded:    map[string]bool{},
		blockLimit:  map[string]int{},
		archived:    map[string]bool{},
	}
	if opts.PersistentState != "" {
		skipped, err := a.store.Load(opts.PersistentState)
		if err != nil {
			return nil, err
		}
		for _, s := range skipped {
			a.log.Warn("persistent state value skipped", "key", s)
		}
	}
	a.sessionID = uuid.NewString()
	if s := opts.Session; s != nil {
		a.sessionID = s.ID()
		a.history = s.History()
		if snap := s.State(); len(snap) > 0 {
			if err := a.restoreSessionState(snap); err != nil {
				return nil, fmt.Errorf("restoring the state of session %q: %w", s.Name(), err)
			}
		}
		if cs := s.Context(); len(cs) > 0 {
			// The history is whole without it: the session goes on, and the
			// next request compresses again if the history is over its share.
			if err := a.restoreContext(cs); err != nil {
				a.log.Warn("the context state of the session is not used; its history will be compressed again", "session", s.Name(), "file", s.Path(), "err", err)
				a.summaries, a.verbatimFrom, a.compressions, a.lastCompression, a.pending, a.inserts = nil, 0, 0, nil, nil, nil
			}
		}
	}
	return a, nil
}

// State returns the shared-state store (for status views and tests).
func (a *Agent) State() *state.Store { return a.store }

// History returns a copy of the conversation so far.
func (a *Agent) History() []*exocortexv1.Message {
	return append([]*exocortexv1.Message(nil), a.history...)
}

// LastContext returns the ACP context object the last hook call received.
func (a *Agent) LastContext() *exocortexv1.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lastContext
}

// SessionID is the ACP session_id.
func (a *Agent) SessionID() string { return a.sessionID }

// Runs reports whether the request requestID is a monologue of this agent or
// of one of its subordinates, at any depth, running now: a subordinate has a
// session id of its own, so a host service call it makes (a nested
// call_subordinate, a utility call) is matched to the agent whose session it
// runs in by the request id of its context.
func (a *Agent) Runs(requestID string) bool {
	return requestID != "" && a.fam.asking(requestID) != nil
}

// Init fires agent_init. Monologue calls it when it was not called.
func (a *Agent) Init(ctx context.Context) error {
	if a.inited {
		return nil
	}
	a.inited = true
	if err := a.checkSecrets(); err != nil {
		return err
	}
	if err := a.startupMigration(ctx); err != nil {
		return err
	}
	t := &turn{}
	fresh := len(a.history) == 0
	var opening []*exocortexv1.Message
	err := fire(ctx, a, t, exocortexv1.Hook_HOOK_AGENT_INIT,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.AgentInitRequest {
			return &exocortexv1.AgentInitRequest{Call: c}
		}, exocortexv1.PluginClient.AgentInit,
		func(ext *host.Extension, r *exocortexv1.AgentInitResponse) error {
			for _, m := range r.GetOpeningMessages() {
				if m.GetRole() != "assistant" && m.GetRole() != "user" {
					return fmt.Errorf("extension %s at agent_init: an opening message has role %q: give \"assistant\" or \"user\"", ext.Name(), m.GetRole())
				}
				sender := a.opts.AgentProfile
				if m.GetRole() == "user" {
					sender = ext.Name()
				}
				om := a.newMessage(m.GetRole(), sender, m.GetContent())
				if m.GetId() != "" {
					om.Id = m.GetId() // the id the extension gave its message (Agent Zero's msg.id)
				}
				opening = append(opening, om)
			}
			return nil
		})
	if err != nil || !fresh {
		return err
	}
	// The opening messages of a new session (Agent Zero's initial message).
	for _, m := range opening {
		if err := a.addMessage(ctx, t, m); err != nil {
			return err
		}
	}
	return nil
}

func (a *Agent) emit(e Event) {
	if a.opts.Observer == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	maskEvent(a.masker(), &e)
	// One event at a time per family: a plugin's utility-model call fires its
	// hooks on the host service's goroutine, maybe beside the agent's.
	a.fam.emitMu.Lock()
	defer a.fam.emitMu.Unlock()
	a.opts.Observer(e)
}

// saveState writes the session and persistent scopes.
func (a *Agent) saveState(ctx context.Context) {
	if a.opts.PersistentState != "" {
		if err := a.store.Save(a.opts.PersistentState, exocortexv1.Scope_SCOPE_PERSISTENT); err != nil {
			a.log.Warn("saving persistent state", "err", err)
		}
	}
	if s := a.opts.Session; s != nil {
		snap, err := a.sessionSnapshot()
		if err == nil {
			err = s.SaveState(ctx, snap)
		}
		if err != nil {
			a.emit(Event{Type: EventNotice, Error: err.Error(), Text: "the session state could not be saved"})
		}
		a.saveContext(ctx)
	}
}

func (a *Agent) sessionSnapshot() (json.RawMessage, error) {
	return a.store.Snapshot(exocortexv1.Scope_SCOPE_SESSION)
}

func (a *Agent) restoreSessionState(snap json.RawMessage) error {
	skipped, err := a.store.Restore(snap)
	for _, s := range skipped {
		a.log.Warn("session state value skipped", "key", s)
	}
	return err
}
