package host

import (
	"fmt"
	"time"
)

// DefaultSlowStart is the start-up time beyond which a plugin is reported as
// slow to start: the host waits for every plugin before the first message, so
// a plugin that takes this long makes every run and session that much slower.
const DefaultSlowStart = time.Second

// EventSlowStart: a plugin took longer than Options.SlowStart to start
// (TookMS); at load it is also a notice (stderr of run, the welcome card).
const EventSlowStart = "slow_start"

// slow reports whether a start that took d is over the threshold.
func (h *Host) slow(d time.Duration) bool {
	return h.opts.SlowStart > 0 && d > h.opts.SlowStart
}

// slowEvent is the event of a start that took d.
func (p *Plugin) slowEvent(d time.Duration) Event {
	return Event{Kind: EventSlowStart, Plugin: p.Name(), TookMS: d.Milliseconds(), BudgetMS: p.h.opts.SlowStart.Milliseconds(),
		Detail: fmt.Sprintf("started in %s", d.Round(time.Millisecond))}
}

// noteSlowStart reports a plugin loaded at start that was slow to start: a
// notice and an event. p's start has finished.
func (h *Host) noteSlowStart(p *Plugin) {
	p.mu.Lock()
	d := p.startTook
	p.mu.Unlock()
	if !h.slow(d) {
		return
	}
	h.rl.notices = append(h.rl.notices, fmt.Sprintf("plugin %s took %s to start (more than %s), and every run and session waits for it: do slow set-up in the background (sdk.Plugin.Start in Go, a thread or task started in Python) or on first use; exocortex plugins status shows each plugin's start time",
		p.Name(), d.Round(time.Millisecond), h.opts.SlowStart))
	h.emit(p.slowEvent(d))
}
