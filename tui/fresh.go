package tui

import (
	"context"
	"errors"
	"fmt"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/core/session"
)

// On a shared session store (the memory journal on NATS JetStream) another
// host — a `serve` replica, another terminal — may append to the session this
// terminal holds open. Before every turn the engine reads what was appended
// since it last read or wrote (Session.Refresh) and, when there is anything,
// rebuilds the agent on it, so the turn starts from the store's latest copy
// and no turn written elsewhere is lost. A turn written elsewhere while this
// one runs makes this one's next save a conflict: it is refused (nothing of
// either turn is overwritten) and reported as such; the next turn starts from
// the fresh copy. On a directory store nothing is ever new.

// freshLocked brings the open session up to its store and returns how many
// messages another host added. e.mu is held.
func (e *Engine) freshLocked(ctx context.Context) (int, error) {
	if e.sess == nil {
		return 0, nil
	}
	before := len(e.sess.History())
	changed, err := e.sess.Refresh(ctx)
	if errors.Is(err, session.ErrRemoved) {
		return 0, fmt.Errorf("session %s was renamed or ended through another host (%s): /sessions lists the sessions, /resume NAME opens one: %w", e.sess.Name(), e.store().Location(), err)
	}
	if err != nil {
		return 0, fmt.Errorf("reading what other hosts wrote to session %s before this turn: %w", e.sess.Name(), err)
	}
	if !changed {
		return 0, nil
	}
	if err := e.buildAgentLocked(); err != nil {
		return 0, err
	}
	return len(e.sess.History()) - before, nil
}

// noticeFresh says, as the turn's first event, what begin read from
// another host.
func (e *Engine) noticeFresh() {
	e.mu.Lock()
	text := e.pendingNotice
	e.pendingNotice = ""
	e.mu.Unlock()
	if text != "" {
		e.observe(loop.Event{Type: loop.EventNotice, Text: text})
	}
}

// conflictError makes a turn's save refused by the shared store say what
// happened and what comes next.
func (e *Engine) conflictError(err error) error {
	if !errors.Is(err, session.ErrConflict) {
		return err
	}
	name := ""
	if s := e.Session(); s != nil {
		name = s.Name()
	}
	return fmt.Errorf("another host wrote to session %s while this turn ran, so the rest of this turn was not saved (nothing of either is overwritten); your next message continues from the shared copy, with the other host's turn: %w", name, err)
}

// freshNotice is the turn's first line when begin read n messages another
// host wrote.
func freshNotice(n int, name, where string) string {
	what := fmt.Sprintf("%d messages another host wrote", n)
	if n == 1 {
		what = "1 message another host wrote"
	}
	return fmt.Sprintf("%s to session %s since this terminal last read it (%s) are in this turn's context", what, name, where)
}
