package replay

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// Options configure a replay.
type Options struct {
	// Host runs today's plugins (a real host: the one the terminal opens).
	Host *host.Host
	// Agent is the loop's configuration (loop.Options as the terminal builds
	// it: prompts, limits, budgets). Run sets the model, the observer, the
	// tool executor and recording; a session is never used (nothing is saved).
	Agent loop.Options
	// Provider is the protocol the scripted model speaks ("ollama" when "").
	Provider string
	// RerunTools runs the tools again instead of serving the recorded results
	// (the caller sets the sandbox and approvals).
	RerunTools bool
	// Progress, when set, is told of each turn as it starts.
	Progress func(turn, turns int)
}

// ErrDiverged is what a replayed turn stops with at a divergence.
var ErrDiverged = errors.New("the replay took another path than the recording")

// Run replays rec through opts.Host's plugins and reports what differs.
func Run(ctx context.Context, rec *Recording, opts Options) (*Report, error) {
	script := rec.Script()
	if len(script.Replies) == 0 {
		script.Replies = []scripted.Reply{{Content: " "}} // nothing to serve; the server needs a valid script
	}
	srv, err := scripted.Start(opts.Provider, script)
	if err != nil {
		return nil, fmt.Errorf("replay: starting the scripted model: %w", err)
	}
	defer srv.Close()
	client, err := llm.Open(llm.Config{Provider: opts.Provider, BaseURL: srv.URL()})
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	e := &engine{rec: rec, srv: srv, opts: opts, index: replyIndex(rec)}
	ao := opts.Agent
	ao.Host, ao.LLM, ao.UtilityLLM, ao.Model = opts.Host, &guard{Provider: client, e: e}, noUtility{client}, srv.Model()
	ao.UtilityModel, ao.Session, ao.PersistentState = "", nil, ""
	ao.Observer, ao.RecordRequests, ao.ToolExecutor = e.observe, true, e.execute
	// Held calls get the recorded answers (approve.go), whatever the mode.
	ao.Approver, ao.ApprovalMode = e, loop.ApprovalDefault
	agent, err := loop.New(ao)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	opts.Host.Services().SetSubordinateRunner(agent.RunSubordinate)
	opts.Host.Services().SetEmbeddingSink(agent.ReportEmbeddingChange)
	opts.Host.Services().SetUtilityRunner(agent.CallUtility)

	rep := &Report{Source: rec.Source, Turns: len(rec.Turns), Differences: []IterationDiff{}, Divergences: []Divergence{}}
	start := time.Now()
	for i, t := range rec.Turns {
		if opts.Progress != nil {
			opts.Progress(i+1, len(rec.Turns))
		}
		got, div, err := e.turn(ctx, agent, t)
		if err != nil {
			return nil, err
		}
		rep.add(t, got, div)
	}
	rep.ReplayedUS = time.Since(start).Microseconds()
	return rep, nil
}

// engine is the state of one replay; observe and the guard run on the
// agent's goroutines.
type engine struct {
	rec   *Recording
	srv   scripted.Running
	opts  Options
	index map[[2]int]int

	mu     sync.Mutex
	cur    *Turn    // the recorded turn being replayed
	got    *builder // the replayed events of it
	div    *Divergence
	cancel context.CancelFunc
}

// replyIndex maps (turn, iteration) to the reply's place in the script.
func replyIndex(rec *Recording) map[[2]int]int {
	m := map[[2]int]int{}
	n := 0
	for _, t := range rec.Turns {
		for _, it := range t.Iterations {
			if it.Reply != nil {
				m[[2]int{t.N, it.N}] = n
				n++
			}
		}
	}
	return m
}

func (e *engine) turn(ctx context.Context, agent *loop.Agent, t *Turn) (*Turn, *Divergence, error) {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := &builder{rec: &Recording{}, contents: map[string]string{}}
	e.mu.Lock()
	e.cur, e.got, e.div, e.cancel = t, got, nil, cancel
	e.mu.Unlock()
	_, err := agent.Monologue(tctx, t.User)
	e.mu.Lock()
	div := e.div
	e.cur, e.got, e.cancel = nil, nil, nil
	e.mu.Unlock()
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	var stop *loop.StopError
	if err != nil && div == nil && !errors.As(err, &stop) {
		return nil, nil, fmt.Errorf("replay: turn %d: %w", t.N, err)
	}
	if len(got.rec.Turns) == 0 {
		return nil, nil, fmt.Errorf("replay: turn %d did not start (no monologue_start event)", t.N)
	}
	rt := got.rec.Turns[0]
	rt.N = t.N
	if div == nil {
		div = ended(t, rt)
	}
	return rt, div, nil
}

// observe collects the replayed events and checks, as each iteration
// begins, that the previous one took the recorded path.
func (e *engine) observe(ev loop.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.got == nil || e.div != nil {
		return
	}
	if ev.Type == loop.EventIteration && ev.Agent == "" && ev.Iteration > 1 {
		if d := e.parted(ev.Iteration - 1); d != nil {
			e.diverge(d)
			return
		}
	}
	_ = e.got.add(ev) // live requests carry their contents: nothing to resolve
}

// parted compares iteration n's path with the recording's (nil: the same).
func (e *engine) parted(n int) *Divergence {
	if e.got.turn == nil && len(e.got.rec.Turns) == 0 {
		return nil
	}
	rt := e.got.rec.Turns[len(e.got.rec.Turns)-1]
	if n > len(rt.Iterations) {
		return nil
	}
	got := rt.Iterations[n-1].outcome()
	if n > len(e.cur.Iterations) {
		return &Divergence{Turn: e.cur.N, Iteration: n, Recorded: "the monologue had ended", Replayed: got}
	}
	if rec := e.cur.Iterations[n-1].outcome(); rec != got {
		return &Divergence{Turn: e.cur.N, Iteration: n, Recorded: rec, Replayed: got}
	}
	return nil
}

func (e *engine) diverge(d *Divergence) {
	e.div = d
	if e.cancel != nil {
		e.cancel()
	}
}

// execute serves the recorded result of the same call (loop.ToolExecutor),
// or runs a memory-writing tool again (writesMemory).
func (e *engine) execute(_ context.Context, iteration int, tc *exocortexv1.ToolCall) (*exocortexv1.ToolResult, error) {
	if e.opts.RerunTools {
		return nil, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cur == nil {
		return nil, fmt.Errorf("%w: a tool call outside a replayed turn", ErrDiverged)
	}
	args := compactJSON([]byte(tc.GetArgsJson()))
	if iteration <= len(e.cur.Iterations) {
		for _, x := range e.cur.Iterations[iteration-1].Executed {
			if x.Tool == tc.GetName() && compactJSON(x.Args) == args {
				if writesMemory(x.Tool) {
					// Run it: into the replay's own memory (the scratch home's),
					// which later turns recall from as the recording's did.
					return nil, nil
				}
				return &exocortexv1.ToolResult{Content: x.Result, Error: x.Error, BreakLoop: x.BreakLoop}, nil
			}
		}
	}
	rec := "no tool ran"
	if iteration <= len(e.cur.Iterations) {
		rec = e.cur.Iterations[iteration-1].outcome()
	}
	e.diverge(&Divergence{Turn: e.cur.N, Iteration: iteration, Recorded: rec, Replayed: "ran " + tc.GetName() + " " + args})
	return nil, fmt.Errorf("%w at turn %d, iteration %d", ErrDiverged, e.cur.N, iteration)
}

// writesMemory reports whether tool changes the memory: memory_save,
// memory_delete and memory_forget. A replay runs them again (the recorded
// call, same arguments), in the scratch home the replay's host opened, never
// the operator's store: what they wrote is what a later turn's recall and
// memory tools find, in the recording and in the replay alike. Their result
// is the one they give now (the same text when the memory is the same, else
// a difference in the next iteration's history).
func writesMemory(tool string) bool {
	switch tool {
	case "memory_save", "memory_delete", "memory_forget":
		return true
	}
	return false
}

// ended checks the end of a turn that did not part on the way: the last
// iteration's path and the number of iterations.
func ended(rec, got *Turn) *Divergence {
	n := len(got.Iterations)
	if n == 0 {
		if len(rec.Iterations) == 0 {
			return nil
		}
		return &Divergence{Turn: rec.N, Iteration: 0, Recorded: fmt.Sprintf("%d iterations", len(rec.Iterations)), Replayed: "the monologue ended before its first iteration (" + orDash(got.StopReason) + ")"}
	}
	if n > len(rec.Iterations) {
		return &Divergence{Turn: rec.N, Iteration: len(rec.Iterations) + 1, Recorded: "the monologue had ended", Replayed: got.Iterations[len(rec.Iterations)].outcome()}
	}
	if r, g := rec.Iterations[n-1].outcome(), got.Iterations[n-1].outcome(); r != g {
		return &Divergence{Turn: rec.N, Iteration: n, Recorded: r, Replayed: g}
	}
	if n < len(rec.Iterations) {
		return &Divergence{Turn: rec.N, Iteration: n, Recorded: fmt.Sprintf("went on to iteration %d", len(rec.Iterations)),
			Replayed: "the monologue ended here (" + orDash(got.StopReason) + ")"}
	}
	return nil
}

// guard is the main model for a replay: before each request it points the
// scripted server at the recorded reply of this turn and iteration, and it
// refuses a request the recording has no reply for.
type guard struct {
	llm.Provider
	e *engine
}

func (g *guard) Chat(ctx context.Context, req llm.ChatRequest, onChunk func(llm.Chunk) error) (llm.Reply, error) {
	e := g.e
	e.mu.Lock()
	var turn, it int
	if e.cur != nil && e.got != nil && len(e.got.rec.Turns) > 0 {
		rt := e.got.rec.Turns[len(e.got.rec.Turns)-1]
		turn, it = e.cur.N, len(rt.Iterations)
	}
	i, ok := e.index[[2]int{turn, it}]
	if !ok && e.cur != nil && e.div == nil {
		e.diverge(&Divergence{Turn: turn, Iteration: it, Recorded: "no model request", Replayed: "asked the model again"})
	}
	e.mu.Unlock()
	if !ok {
		return llm.Reply{}, fmt.Errorf("%w: the recording has no reply for turn %d, iteration %d", ErrDiverged, turn, it)
	}
	e.srv.Seek(i)
	return g.Provider.Chat(ctx, req, onChunk)
}

// noUtility answers a plugin's utility-model call during a replay: the
// recording has no utility replies, and the real model is never called.
type noUtility struct{ llm.Provider }

func (noUtility) Chat(context.Context, llm.ChatRequest, func(llm.Chunk) error) (llm.Reply, error) {
	return llm.Reply{}, errors.New("a replay serves no utility model: the recording holds the main model's replies only")
}
