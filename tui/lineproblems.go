package tui

import (
	"context"
	"sync"
	"time"
)

// lineProblemsEvery is how often line mode reads the plugins' problems
// again, as the terminal's status tick does.
const lineProblemsEvery = 5 * time.Second

// lineProblems prints the plugins' problems (Config.Problems: an MCP server
// that failed to start, crashed or hangs, with its stderr and what to check)
// on line mode's stderr, each once: those found once the plugins are up at
// start, then each new one read every lineProblemsEvery until ctx ends.
type lineProblems struct {
	eng   *Engine
	say   func(string, ...any)
	mu    sync.Mutex
	shown map[string]bool
}

// report prints the problems not printed yet.
func (p *lineProblems) report() {
	lines := p.eng.Problems()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range lines {
		if p.shown[l] {
			continue
		}
		p.shown[l] = true
		p.say("! %s", l)
	}
}

// watch reports new problems until ctx ends; it returns at once when the
// engine has none to read.
func (p *lineProblems) watch(ctx context.Context) {
	if p.eng.Config().Problems == nil {
		return
	}
	t := time.NewTicker(lineProblemsEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.report()
		}
	}
}
