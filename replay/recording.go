package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/signals"
)

// Recording is a recorded session, turn by turn.
type Recording struct {
	// Source is the file it was read from.
	Source string
	Turns  []*Turn
	// Warnings are lines of the file that were not used (a torn last line).
	Warnings []string
}

// Turn is one monologue: the user message and its iterations.
type Turn struct {
	N    int
	User string
	// Opening holds the events before the first iteration (the user
	// message's hooks, monologue_start).
	Opening *Iteration
	// Iterations are in order, from 1.
	Iterations []*Iteration
	// StopReason is how the monologue ended ("" when a tool ended it).
	StopReason string
	// Took is the monologue's wall time, as recorded (0 when unknown).
	TookUS int64
	// Start is when the monologue began (its monologue_start event); Ended
	// says its monologue_end was recorded (false for a turn still running,
	// or cut off).
	Start time.Time
	Ended bool
}

// Iteration is what one iteration did.
type Iteration struct {
	N       int
	Request *loop.Request
	// Reply and Thinking are what the model answered (nil when the model
	// was not called).
	Reply    *string
	Thinking string
	Native   []loop.NativeCall
	// Hooks are the extension calls, Signals the core's injected messages,
	// Calls the tool calls the model made, Executed what the tools returned.
	Hooks    []loop.Event
	Signals  []loop.Event
	Calls    []loop.Event
	Executed []loop.Event
	Results  []loop.Event
	Notices  []loop.Event
	// Approvals are the answers to held calls.
	Approvals []loop.Event
	// Timeline is the hook and hook_done events in the order they came (a
	// hook_done closes the calls of one firing before it: its wall time and
	// round trips); Budget is how the iteration's request was sized.
	Timeline []loop.Event
	Budget   *loop.Budget
	// Responded is set when the monologue ended at this iteration's tool.
	Responded bool
}

// Load reads a recording: a session's recording directory, a session file
// (its recording is beside it), or a run --json file.
func Load(path string) (*Recording, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w (give a session name, a session file, its .replay directory or a run --json file)", path, err)
	}
	dir, events := "", path
	switch {
	case fi.IsDir():
		dir, events = path, filepath.Join(path, EventsFile)
	case isSessionFile(path):
		dir = DirFor(path)
		events = filepath.Join(dir, EventsFile)
		if _, err := os.Stat(events); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("session %s has no recording (%s is missing): it was held before sessions were recorded; hold a session again, or replay a run --json file", path, events)
		}
	}
	f, err := os.Open(events)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	rec := &Recording{Source: events}
	b := &builder{rec: rec, dir: dir, contents: map[string]string{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 || raw[0] != '{' {
			continue
		}
		var e loop.Event
		if err := json.Unmarshal(raw, &e); err != nil {
			rec.Warnings = append(rec.Warnings, fmt.Sprintf("%s:%d: not an event (%v); the line is skipped", events, line, err))
			continue
		}
		if err := b.add(e); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", events, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", events, err)
	}
	if len(rec.Turns) == 0 {
		return nil, fmt.Errorf("%s holds no monologue to replay (no monologue_start event): record one with a session, or with run --json", events)
	}
	for _, t := range rec.Turns {
		for _, it := range t.Iterations {
			if it.Request == nil && it.Reply != nil {
				return nil, fmt.Errorf("%s: turn %d, iteration %d has no request event: it was written before requests were recorded; record it again", events, t.N, it.N)
			}
		}
	}
	return rec, nil
}

// isSessionFile reports whether path is a session's .jsonl, not a run --json
// file: its first record is a session record.
func isSessionFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := f.Read(head)
	return bytes.Contains(head[:n], []byte(`"session.meta"`))
}

type builder struct {
	rec      *Recording
	dir      string
	contents map[string]string
	turn     *Turn
}

func (b *builder) add(e loop.Event) error {
	if e.Agent != "" {
		return nil // a subordinate's events: its own monologue, not replayed
	}
	if e.Type == loop.EventMonologueStart {
		b.turn = &Turn{N: len(b.rec.Turns) + 1, User: e.Text, Opening: &Iteration{}, Start: e.Time}
		b.turn.TookUS = -e.Time.UnixMicro()
		b.rec.Turns = append(b.rec.Turns, b.turn)
		return nil
	}
	t := b.turn
	if t == nil {
		return nil // the model line, load notices
	}
	it := t.iteration(e.Iteration)
	switch e.Type {
	case loop.EventHook:
		it.Hooks = append(it.Hooks, e)
		it.Timeline = append(it.Timeline, e)
	case loop.EventSignal:
		it.Signals = append(it.Signals, e)
	case loop.EventToolCall:
		it.Calls = append(it.Calls, e)
	case loop.EventToolExecuted:
		it.Executed = append(it.Executed, e)
	case loop.EventToolResult:
		it.Results = append(it.Results, e)
	case loop.EventNotice:
		it.Notices = append(it.Notices, e)
	case loop.EventApproval:
		it.Approvals = append(it.Approvals, e)
	case loop.EventHookDone:
		it.Timeline = append(it.Timeline, e)
	case loop.EventBudget:
		it.Budget = e.Budget
	case loop.EventReasoning:
		it.Thinking += e.Text
	case loop.EventLLMReply:
		text := e.Text
		it.Reply, it.Native = &text, e.NativeCalls
	case loop.EventResponse:
		it.Responded = true
	case loop.EventRequest:
		r, err := b.resolve(e.Request)
		if err != nil {
			return err
		}
		it.Request = r
	case loop.EventMonologueEnd:
		t.StopReason = e.StopReason
		t.TookUS += e.Time.UnixMicro()
		t.Ended = true
		b.turn = nil
	}
	return nil
}

// iteration returns the iteration n of t (0: the opening), adding it.
func (t *Turn) iteration(n int) *Iteration {
	if n <= 0 {
		return t.Opening
	}
	for len(t.Iterations) < n {
		t.Iterations = append(t.Iterations, &Iteration{N: len(t.Iterations) + 1})
	}
	return t.Iterations[n-1]
}

// resolve fills the contents a recording left out, from earlier in the
// stream or from the blob store.
func (b *builder) resolve(r *loop.Request) (*loop.Request, error) {
	if r == nil {
		return nil, errors.New("a request event without its request")
	}
	for i := range r.Messages {
		m := &r.Messages[i]
		if m.Content != "" {
			if m.Hash != "" {
				b.contents[m.Hash] = m.Content
			}
			continue
		}
		if m.Hash == "" {
			continue // an empty message
		}
		if c, ok := b.contents[m.Hash]; ok {
			m.Content = c
			continue
		}
		if b.dir == "" {
			if m.Hash == Hash("") {
				continue
			}
			return nil, fmt.Errorf("message %s is referenced before its content: the run --json stream was cut or reordered", short(m.Hash))
		}
		c, err := readBlob(b.dir, m.Hash)
		if err != nil {
			return nil, err
		}
		b.contents[m.Hash] = c
		m.Content = c
	}
	return r, nil
}

func short(h string) string { return h[:min(12, len(h))] }

// Script is the recorded model replies of every turn, in order: what the
// scripted model serves.
func (r *Recording) Script() scripted.Script {
	s := scripted.Script{Source: "replay of " + r.Source}
	for _, t := range r.Turns {
		for _, it := range t.Iterations {
			if it.Reply == nil {
				continue
			}
			// Big chunks: the replay's time goes to the plugins, not to streaming.
			reply := scripted.Reply{Content: *it.Reply, Thinking: it.Thinking, ChunkSize: 1 << 12}
			for _, c := range it.Native {
				reply.ToolCalls = append(reply.ToolCalls, scripted.ToolCall{Name: c.Name, Arguments: c.Arguments})
			}
			if reply.Content == "" && reply.Thinking == "" && len(reply.ToolCalls) == 0 {
				reply.Content = " " // an empty reply plays as one (a script reply may not be empty)
			}
			s.Replies = append(s.Replies, reply)
		}
	}
	return s
}

// outcome says which path an iteration took, for the divergence check:
// the tool run (with its arguments), a refused call, or the core's signal.
func (it *Iteration) outcome() string {
	for _, s := range it.Signals {
		switch s.Signal {
		case signals.ToolBlocked:
			return "refused " + toolOf(it) + ": " + firstLine(s.Text)
		case signals.ToolNotFound, signals.Misformat, signals.Repeat, signals.UnusableLimit:
			return "signal " + s.Signal
		}
	}
	if len(it.Executed) > 0 {
		e := it.Executed[len(it.Executed)-1]
		o := "ran " + e.Tool + " " + compactJSON(e.Args)
		if it.Responded || e.BreakLoop {
			o += " (ended the monologue)"
		}
		return o
	}
	if len(it.Calls) > 0 {
		return "called " + toolOf(it)
	}
	return "no tool call"
}

func toolOf(it *Iteration) string {
	if len(it.Calls) == 0 {
		return "a tool"
	}
	c := it.Calls[len(it.Calls)-1]
	return c.Tool + " " + compactJSON(c.Args)
}

func compactJSON(b json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
