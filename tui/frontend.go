package tui

import (
	"context"
	"time"

	"github.com/exocortex/exocortex/core/loop"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// The terminal is a long-running, interactive front end: it asks the
// extensions at banners for the messages to show at a session's start (the
// welcome card, line mode's opening lines) and runs the job loop beside the
// session (loop.RunJobLoop, once a minute), as Agent Zero's web UI and its
// job loop do.

// frontendState is the Engine's part for it, under e.mu.
type frontendState struct {
	// banners were given for bannersOf, the agent they were asked of.
	banners   []*exocortexv1.Banner
	bannersOf *loop.Agent
	// stopJobs ends the job loop of the current agent.
	stopJobs context.CancelFunc
}

// bannersTimeout bounds the banners' hook call at a session's start: the
// welcome card waits for it.
const bannersTimeout = 30 * time.Second

// startJobLoopLocked runs the job loop of a (just built), ending the previous
// agent's. e.mu is held.
func (e *Engine) startJobLoopLocked(a *loop.Agent) {
	if e.fe.stopJobs != nil {
		e.fe.stopJobs()
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.fe.stopJobs = cancel
	every := e.cfg.JobLoopEvery
	if every <= 0 {
		every = loop.JobLoopEvery
	}
	go a.RunJobLoop(ctx, every)
}

// Banners returns the banners of the open session's agent, asking the
// extensions once per agent (nil before the agent is built). A failure is the
// extension's event, as at every hook; the banners the others gave are kept.
func (e *Engine) Banners(ctx context.Context) []*exocortexv1.Banner {
	e.mu.Lock()
	a := e.agent
	if a == nil || e.fe.bannersOf == a {
		b := e.fe.banners
		e.mu.Unlock()
		return b
	}
	e.mu.Unlock()
	bctx, cancel := context.WithTimeout(ctx, bannersTimeout)
	defer cancel()
	b, _ := a.Banners(bctx, &exocortexv1.FrontendContext{Client: "terminal", Hostname: "localhost"})
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.agent == a {
		e.fe.banners, e.fe.bannersOf = b, a
	}
	return b
}

// ShownBanners returns the banners already asked for, without asking.
func (e *Engine) ShownBanners() []*exocortexv1.Banner {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fe.bannersOf != e.agent {
		return nil
	}
	return e.fe.banners
}

// bannerLine is how the terminal shows a banner: its type, title and text.
func bannerLine(b *exocortexv1.Banner) string {
	s := b.GetTitle()
	if t := b.GetText(); t != "" {
		if s != "" {
			s += ": "
		}
		s += t
	}
	if b.GetType() != "" {
		s = b.GetType() + " · " + s
	}
	return s
}
