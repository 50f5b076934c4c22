package tui

import (
	"sort"
	"sync"
	"time"

	"github.com/exocortex/exocortex/core/loop"
)

// Stats is what /stats shows: totals over the session's turns in this run.
type Stats struct {
	Turns        int
	ModelCalls   int
	PromptTokens int
	OutputTokens int
	// ModelTime is the time from a call's start to its last chunk; FirstToken
	// the time to its first chunk, summed over FirstTokenCalls calls.
	ModelTime       time.Duration
	FirstToken      time.Duration
	FirstTokenCalls int
	ToolCalls       int
	ToolTime        time.Duration
	HookCalls       int
	HookErrors      int
	HookTime        time.Duration
	Hooks           []HookStat // by total time, largest first
	// The last model call: its speed and how full the context was.
	LastTokensPerSec float64
	LastContextFill  float64
	LastPromptTokens int
}

// HookStat is the time spent in one extension at one hook.
type HookStat struct {
	Hook, Extension, Plugin string
	Calls, Errors           int
	Time                    time.Duration
}

// recorder keeps the hook calls of the current turn (for /wiring) and the
// session's totals (for /stats and the status line). The loop's observer
// feeds it from the monologue goroutine; the frontend reads it.
type recorder struct {
	mu    sync.Mutex
	s     Stats
	hooks map[string]*HookStat
	turn  []loop.Event

	prev      time.Time // the last event's time outside a model call
	callStart time.Time
	inCall    bool
	tools     map[string]time.Time
}

func newRecorder() *recorder {
	return &recorder{hooks: map[string]*HookStat{}, tools: map[string]time.Time{}}
}

func (r *recorder) startTurn() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.s.Turns++
	r.turn = nil
	r.prev = time.Now()
	r.inCall = false
}

func (r *recorder) record(e loop.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := e.Time
	if t.IsZero() {
		t = time.Now()
	}
	switch e.Type {
	case loop.EventHook:
		r.turn = append(r.turn, e)
		d := time.Duration(e.DurationUS) * time.Microsecond
		r.s.HookCalls++
		r.s.HookTime += d
		key := e.Hook + "\x00" + e.Extension + "\x00" + e.Plugin
		h := r.hooks[key]
		if h == nil {
			h = &HookStat{Hook: e.Hook, Extension: e.Extension, Plugin: e.Plugin}
			r.hooks[key] = h
		}
		h.Calls++
		h.Time += d
		if e.Error != "" {
			h.Errors++
			r.s.HookErrors++
		}
	case loop.EventLLMChunk:
		if !r.inCall {
			r.inCall = true
			r.callStart = r.prev
			r.s.FirstToken += t.Sub(r.callStart)
			r.s.FirstTokenCalls++
		}
	case loop.EventLLMReply:
		start := r.callStart
		if !r.inCall {
			start = r.prev
		}
		r.inCall = false
		r.s.ModelCalls++
		r.s.ModelTime += t.Sub(start)
		r.s.PromptTokens += e.PromptTokens
		r.s.OutputTokens += e.OutputTokens
		if e.Agent == "" {
			r.s.LastTokensPerSec = e.TokensPerSec
			r.s.LastContextFill = e.ContextFill
			r.s.LastPromptTokens = e.PromptTokens
		}
	case loop.EventToolCall:
		r.s.ToolCalls++
		r.tools[e.Agent+"\x00"+e.Tool] = t
	case loop.EventToolResult:
		if start, ok := r.tools[e.Agent+"\x00"+e.Tool]; ok {
			r.s.ToolTime += t.Sub(start)
			delete(r.tools, e.Agent+"\x00"+e.Tool)
		}
	}
	if !r.inCall {
		r.prev = t
	}
}

func (r *recorder) stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.s
	s.Hooks = make([]HookStat, 0, len(r.hooks))
	for _, h := range r.hooks {
		s.Hooks = append(s.Hooks, *h)
	}
	sort.Slice(s.Hooks, func(i, j int) bool {
		if s.Hooks[i].Time != s.Hooks[j].Time {
			return s.Hooks[i].Time > s.Hooks[j].Time
		}
		return s.Hooks[i].Hook+s.Hooks[i].Extension < s.Hooks[j].Hook+s.Hooks[j].Extension
	})
	return s
}

func (r *recorder) wiring() []loop.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]loop.Event(nil), r.turn...)
}
