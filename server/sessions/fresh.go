package sessions

import (
	"context"
	"fmt"
)

// fresh brings the open session up to its store before a turn: when another
// replica (a `serve` on another host sharing the store) appended to it since
// this one last read or wrote it, the new records are read and the agent is
// rebuilt on them, so the turn continues the session as it is rather than as
// this replica last saw it. On a directory store there is never anything new.
// The caller holds the turn.
func (l *Live) fresh(ctx context.Context) error {
	before := len(l.sess.History())
	changed, err := l.sess.Refresh(ctx)
	if err != nil {
		return err
	}
	if !changed {
		return nil
	}
	agent, err := l.m.opts.NewAgent(ctx, AgentSpec{Session: l.sess, Approver: l.approver, Observer: l.observe, Profile: l.profile})
	if err != nil {
		return fmt.Errorf("rebuilding the agent of session %q on what another host wrote to it: %w", l.name, err)
	}
	l.mu.Lock()
	stopJobs := l.stopJobs
	l.mu.Unlock()
	if stopJobs != nil {
		stopJobs() // the old agent's job loop
	}
	l.agent.Store(agent)
	if hist := l.sess.History(); len(hist) > before {
		l.log.fromHistory(hist[before:])
	}
	l.openFrontend()
	l.m.log.Info("serve: session continued from records another host wrote", "session", l.name, "store", l.m.opts.Store.Location(), "messages", len(l.sess.History())-before)
	return nil
}

// freshIfIdle is fresh when no turn runs (one that runs has the session as
// this replica wrote it), for the readers of a session's history.
func (l *Live) freshIfIdle(ctx context.Context) {
	select {
	case l.turn <- struct{}{}:
		if err := l.fresh(ctx); err != nil {
			l.m.log.Warn("serve: reading what another host wrote to a session", "session", l.name, "err", err)
		}
		<-l.turn
	default:
	}
}
