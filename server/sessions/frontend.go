package sessions

import (
	"context"
	"time"

	"github.com/exocortex/exocortex/core/loop"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// serve is a long-running front end: each open session runs the job loop
// (loop.RunJobLoop, once a minute, as Agent Zero's) until it closes, and its
// banners (the extensions' messages for a session's start) are the first
// items of its log, type "banner", as Agent Zero's web UI shows them on its
// welcome screen.

// bannersTimeout bounds the banners' hook call of a session.
const bannersTimeout = 30 * time.Second

// openFrontend starts the session's job loop and asks for its banners, in
// the background (the session is usable at once). l.agent is set.
func (l *Live) openFrontend() {
	ctx, cancel := context.WithCancel(context.Background())
	l.mu.Lock()
	l.stopJobs = cancel
	l.mu.Unlock()
	every := l.m.opts.JobLoopEvery
	if every <= 0 {
		every = loop.JobLoopEvery
	}
	fe := l.m.opts.Frontend
	if fe == nil {
		fe = &exocortexv1.FrontendContext{Client: "serve", Hostname: "localhost", Protocol: "http:"}
	}
	go func() {
		// The banners fire agent_init when it has not run: they take the
		// session's turn, so no monologue runs beside them.
		select {
		case l.turn <- struct{}{}:
		case <-ctx.Done():
			return
		}
		bctx, bcancel := context.WithTimeout(ctx, bannersTimeout)
		agent := l.Agent()
		bs, _ := agent.Banners(bctx, fe)
		bcancel()
		<-l.turn
		for _, b := range bs {
			l.log.add("banner", b.GetTitle(), b.GetText(), map[string]any{"id": b.GetId(), "type": b.GetType(), "priority": b.GetPriority(), "dismissible": b.GetDismissible()}, 0)
		}
		agent.RunJobLoop(ctx, every)
	}()
}
