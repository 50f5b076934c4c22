package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/core/session"
)

// Attachment is a file sent with a message.
type Attachment struct {
	Filename string
	Data     []byte
}

// Turn is one message to a session's agent.
type Turn struct {
	// Session names the session; "" starts a new one (its name is returned).
	Session string
	// Create opens the session new when it does not exist; without it an
	// unknown session is ErrNotFound.
	Create      bool
	Message     string
	Attachments []Attachment
	// Lifetime keeps the session open while idle (DefaultLifetime when 0).
	Lifetime time.Duration
	Profile  string
	// OnEvent is told of the turn's loop events (approvals waiting included).
	OnEvent func(loop.Event)
	// Before, when set, is called with the open session before the turn
	// waits for its place (to say which session it is, at once).
	Before func(*Live)
}

// Run runs t's monologue, after any running in the same session, and
// returns the session's name and the result. A monologue the loop stopped
// returns its result with a *loop.StopError.
func (m *Manager) Run(ctx context.Context, t Turn) (string, *loop.Result, error) {
	name := t.Session
	if name == "" {
		name, t.Create = session.NewName(time.Now()), true
	}
	l, err := m.Open(ctx, name, t.Create, t.Profile)
	if err != nil {
		return name, nil, err
	}
	l.Touch(t.Lifetime)
	if t.Before != nil {
		t.Before(l)
	}
	text := t.Message
	if len(t.Attachments) > 0 {
		paths, err := l.saveAttachments(t.Attachments)
		if err != nil {
			return name, nil, err
		}
		text += "\n\nAttached files (in this session's files directory):\n- " + strings.Join(paths, "\n- ")
	}
	select {
	case l.turn <- struct{}{}:
	case <-ctx.Done():
		return name, nil, fmt.Errorf("waiting for the running turn of session %s: %w", name, ctx.Err())
	}
	if err := l.fresh(ctx); err != nil {
		<-l.turn
		if errors.Is(err, session.ErrRemoved) {
			// Renamed or ended through another replica: this copy goes.
			if derr := m.drop(ctx, name); derr != nil {
				m.log.Warn("serve: closing a session removed elsewhere", "session", name, "err", derr)
			}
			return name, nil, fmt.Errorf("session %q: %w (%w)", name, ErrNotFound, err)
		}
		return name, nil, err
	}
	defer func() { <-l.turn }()
	stop := l.listen(t.OnEvent)
	defer stop()
	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	l.mu.Lock()
	l.cancel = cancel
	l.mu.Unlock()
	l.log.add("user", "", t.Message, map[string]any{"attachments": names(t.Attachments)}, 0)
	res, err := l.Agent().Monologue(turnCtx, text)
	l.mu.Lock()
	l.cancel = nil
	l.mu.Unlock()
	l.log.setProgress("", false)
	if err != nil {
		l.log.add("error", "", err.Error(), nil, 0)
	}
	l.Touch(t.Lifetime)
	return name, res, err
}

func names(as []Attachment) []string {
	out := make([]string, 0, len(as))
	for _, a := range as {
		out = append(out, a.Filename)
	}
	return out
}

// SafeFilename is name reduced to a file name that stays in a directory, or
// an error naming it.
func SafeFilename(name string) (string, error) {
	base := filepath.Base(filepath.Clean("/" + strings.ReplaceAll(name, "\\", "/")))
	if base == "/" || base == "." || base == ".." || strings.HasPrefix(base, ".") {
		return "", fmt.Errorf("attachment filename %q: name a file, e.g. notes.txt", name)
	}
	return base, nil
}

func (l *Live) saveAttachments(as []Attachment) ([]string, error) {
	dir := l.FilesDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the files of session %s: %w", l.name, err)
	}
	var paths []string
	for _, a := range as {
		base, err := SafeFilename(a.Filename)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, base)
		if err := os.WriteFile(p, a.Data, 0o600); err != nil {
			return nil, fmt.Errorf("saving attachment %s: %w", a.Filename, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// close stops the running turn, waits for it (up to ctx), and closes the session.
func (l *Live) close(ctx context.Context) error {
	l.mu.Lock()
	if l.cancel != nil {
		l.cancel()
	}
	if l.stopJobs != nil {
		l.stopJobs()
	}
	l.mu.Unlock()
	select {
	case l.turn <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("session %s: its turn did not stop: %w", l.name, ctx.Err())
	}
	return l.sess.Close()
}

// Terminate stops and closes session name and moves its files to the
// sessions directory's .trash (Agent Zero's api_terminate_chat removes the
// chat; ours can be fetched back by hand).
func (m *Manager) Terminate(ctx context.Context, name string) error {
	if err := m.drop(ctx, name); err != nil {
		return err
	}
	return m.trash(ctx, name)
}

// Reset empties session name's history, keeping the session (Agent Zero's
// api_reset_chat); the old history goes to .trash.
func (m *Manager) Reset(ctx context.Context, name string) error {
	var profile string
	m.mu.Lock()
	if l := m.live[name]; l != nil {
		profile = l.profile
	}
	m.mu.Unlock()
	if err := m.Terminate(ctx, name); err != nil {
		return err
	}
	_, err := m.Open(ctx, name, true, profile)
	return err
}

// drop closes the open session name (ErrNotFound when neither open nor on disk).
func (m *Manager) drop(ctx context.Context, name string) error {
	if err := session.ValidateName(name); err != nil {
		return err
	}
	m.mu.Lock()
	l := m.live[name]
	delete(m.live, name)
	m.mu.Unlock()
	if l == nil {
		if !m.exists(ctx, name) {
			return fmt.Errorf("session %q: %w", name, ErrNotFound)
		}
		return nil
	}
	return l.close(ctx)
}

func (m *Manager) trash(ctx context.Context, name string) error {
	stamp := session.TrashStamp(time.Now())
	if err := m.opts.Store.Trash(ctx, name, stamp); err != nil {
		return err
	}
	dir := filepath.Join(m.opts.Dir, ".trash")
	from := FilesDir(m.opts.Dir, name)
	if _, err := os.Stat(from); err != nil {
		return nil // no attachments
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := os.Rename(from, filepath.Join(dir, name+"-"+stamp+".files")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("moving %s to %s: %w", from, dir, err)
	}
	return nil
}

// Expire ends the sessions idle past their lifetime at now (closes those
// with no lifetime of their own), and returns the names of those ended.
func (m *Manager) Expire(ctx context.Context, now time.Time) []string {
	var idle []*Live
	m.Each(func(l *Live) {
		if l.expired(now) && !l.Busy() {
			idle = append(idle, l)
		}
	})
	var gone []string
	for _, l := range idle {
		ended, err := m.expire(ctx, l)
		if err != nil {
			m.log.Warn("serve: expiring a session", "session", l.name, "err", err)
		}
		if ended {
			gone = append(gone, l.name)
		}
	}
	return gone
}

// expire ends l (ephemeral) or closes it, and reports whether it ended.
func (m *Manager) expire(ctx context.Context, l *Live) (bool, error) {
	l.mu.Lock()
	ephemeral := l.ephemeral
	l.mu.Unlock()
	if ephemeral {
		return true, m.Terminate(ctx, l.name)
	}
	return false, m.drop(ctx, l.name)
}

// Close closes every open session, stopping running turns (a graceful
// shutdown lets them finish first); nothing opens after it.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	live := m.live
	m.live = map[string]*Live{}
	m.mu.Unlock()
	var errs []error
	for _, l := range live {
		errs = append(errs, l.close(ctx))
	}
	return errors.Join(errs...)
}
