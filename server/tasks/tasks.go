// Package tasks runs long tasks (the ECE seed's flow 3): a monologue started
// by one request and answered at once with its id, then polled for its
// status, progress and result, or cancelled:
//
//	POST   /api/v1/tasks        {message, session?}  → 202 {task_id, session, status}
//	GET    /api/v1/tasks[?session=NAME]               → {tasks: [Task]}
//	GET    /api/v1/tasks/{id}                         → Task
//	DELETE /api/v1/tasks/{id}                         → Task, cancelled
//
// A task is a turn of a session like any other (it waits for the session's
// running turn, and the terminal sees it in the history); its record is kept
// with the session, as sessions/NAME.tasks/ID.json, written at every change,
// so a restart of serve finds every task again. A task that was running when
// the process ended without finishing it is marked interrupted, never lost.
package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/renameio/v2"
	"github.com/google/uuid"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/server/sessions"
)

// Status of a task.
const (
	Queued      = "queued"
	Running     = "running"
	Done        = "done"
	Failed      = "failed"
	Cancelled   = "cancelled"
	Interrupted = "interrupted"
)

// Task is a long task's record.
type Task struct {
	ID      string `json:"task_id"`
	Session string `json:"session"`
	Message string `json:"message"`
	Status  string `json:"status"`
	// Progress is what the agent did so far, one line a step.
	Progress []string   `json:"progress"`
	Result   string     `json:"result,omitempty"`
	Error    string     `json:"error,omitempty"`
	Created  time.Time  `json:"created"`
	Started  *time.Time `json:"started,omitempty"`
	Finished *time.Time `json:"finished,omitempty"`
}

func (t *Task) over() bool {
	return t.Status != Queued && t.Status != Running
}

// Starter runs work that a graceful shutdown waits for (*server.Server).
type Starter interface {
	Go(fn func(ctx context.Context)) bool
}

// ErrNotFound is the error for an unknown task id.
var ErrNotFound = errors.New("no task with this id")

// Tasks runs and keeps the tasks of a session manager's sessions.
type Tasks struct {
	m     *sessions.Manager
	dir   string
	start Starter
	log   *slog.Logger

	mu      sync.Mutex
	tasks   map[string]*Task
	cancels map[string]context.CancelFunc
}

// Open loads the tasks kept under the sessions directory dir, marking those
// a stopped process left unfinished as interrupted.
func Open(m *sessions.Manager, dir string, start Starter, log *slog.Logger) (*Tasks, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ts := &Tasks{m: m, dir: dir, start: start, log: log, tasks: map[string]*Task{}, cancels: map[string]context.CancelFunc{}}
	files, err := filepath.Glob(filepath.Join(dir, "*.tasks", "*.json"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading task %s: %w", f, err)
		}
		t := &Task{}
		if err := json.Unmarshal(b, t); err != nil || t.ID == "" {
			log.Warn("serve: a task record that cannot be read is left alone", "file", f, "err", err)
			continue
		}
		if !t.over() {
			now := time.Now().UTC()
			t.Status, t.Error, t.Finished = Interrupted, "serve stopped before the task finished; start it again with POST /api/v1/tasks", &now
			if err := ts.save(t); err != nil {
				return nil, err
			}
		}
		ts.tasks[t.ID] = t
	}
	return ts, nil
}

func (ts *Tasks) path(t *Task) string {
	return filepath.Join(ts.dir, t.Session+".tasks", t.ID+".json")
}

// save writes t's record (the caller holds no lock on t's fields while
// another goroutine changes them: changes go through update).
func (ts *Tasks) save(t *Task) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	p := ts.path(t)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("keeping task %s: %w", t.ID, err)
	}
	if err := renameio.WriteFile(p, b, 0o644); err != nil {
		return fmt.Errorf("keeping task %s: %w", t.ID, err)
	}
	return nil
}

// update changes task id under the lock and saves it.
func (ts *Tasks) update(id string, fn func(*Task)) {
	ts.mu.Lock()
	t := ts.tasks[id]
	fn(t)
	cp := *t
	cp.Progress = slices.Clone(t.Progress)
	ts.mu.Unlock()
	if err := ts.save(&cp); err != nil {
		ts.log.Warn("serve: saving a task", "task", id, "err", err)
	}
}

// Start records a task and runs it beside the requests.
func (ts *Tasks) Start(session, message string) (Task, error) {
	if session == "" {
		session = "task-" + time.Now().UTC().Format("2006-01-02-1504") + "-" + uuid.NewString()[:4]
	}
	t := &Task{ID: uuid.NewString(), Session: session, Message: message, Status: Queued, Progress: []string{}, Created: time.Now().UTC()}
	if err := ts.save(t); err != nil {
		return Task{}, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts.mu.Lock()
	ts.tasks[t.ID] = t
	ts.cancels[t.ID] = cancel
	cp := *t
	ts.mu.Unlock()
	started := ts.start.Go(func(base context.Context) {
		stop := context.AfterFunc(base, cancel)
		defer stop()
		ts.run(ctx, base, t.ID)
	})
	if !started {
		cancel()
		ts.update(t.ID, func(t *Task) { t.Status, t.Error = Interrupted, "serve is shutting down; start it again later" })
		return Task{}, sessions.ErrClosed
	}
	return cp, nil
}

// run runs task id; base is the server's context, which ends when the
// shutdown deadline passes (the task is then interrupted, not cancelled).
func (ts *Tasks) run(ctx, base context.Context, id string) {
	ts.mu.Lock()
	session, message := ts.tasks[id].Session, ts.tasks[id].Message
	ts.mu.Unlock()
	_, res, err := ts.m.Run(ctx, sessions.Turn{
		Session: session, Create: true, Message: message,
		OnEvent: func(e loop.Event) {
			if e.Type == loop.EventMonologueStart && e.Agent == "" {
				now := time.Now().UTC()
				ts.update(id, func(t *Task) {
					if t.Status == Queued {
						t.Status, t.Started = Running, &now
					}
				})
			}
			if p := sessions.Progress(e); p != "" {
				ts.update(id, func(t *Task) { t.Progress = append(t.Progress, p) })
			}
		},
	})
	now := time.Now().UTC()
	ts.update(id, func(t *Task) {
		t.Finished = &now
		var stop *loop.StopError
		switch {
		case t.Status == Cancelled:
		case base.Err() != nil:
			t.Status, t.Error = Interrupted, "serve stopped before the task finished (serve.shutdown_timeout passed); start it again with POST /api/v1/tasks"
		case ctx.Err() != nil:
			t.Status, t.Error = Cancelled, "cancelled"
		case err != nil && !(errors.As(err, &stop) && res != nil):
			t.Status, t.Error = Failed, err.Error()
		default:
			t.Status, t.Result = Done, res.Response
			if stop != nil {
				t.Error = stop.Error()
			}
		}
	})
	ts.mu.Lock()
	delete(ts.cancels, id)
	ts.mu.Unlock()
}

// Get returns task id.
func (ts *Tasks) Get(id string) (Task, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.tasks[id]
	if !ok {
		return Task{}, fmt.Errorf("task %q: %w", id, ErrNotFound)
	}
	cp := *t
	cp.Progress = slices.Clone(t.Progress)
	return cp, nil
}

// List returns the tasks, newest first; session "" lists every session's.
func (ts *Tasks) List(session string) []Task {
	ts.mu.Lock()
	var out []Task
	for _, t := range ts.tasks {
		if session == "" || t.Session == session {
			cp := *t
			cp.Progress = slices.Clone(t.Progress)
			out = append(out, cp)
		}
	}
	ts.mu.Unlock()
	slices.SortFunc(out, func(a, b Task) int { return b.Created.Compare(a.Created) })
	return out
}

// Cancel stops task id if it has not finished, and returns it.
func (ts *Tasks) Cancel(id string) (Task, error) {
	ts.mu.Lock()
	t, ok := ts.tasks[id]
	cancel := ts.cancels[id]
	over := ok && t.over()
	ts.mu.Unlock()
	if !ok {
		return Task{}, fmt.Errorf("task %q: %w", id, ErrNotFound)
	}
	if !over {
		now := time.Now().UTC()
		ts.update(id, func(t *Task) {
			t.Status, t.Error, t.Finished = Cancelled, "cancelled by DELETE /api/v1/tasks/"+id, &now
		})
		if cancel != nil {
			cancel()
		}
	}
	return ts.Get(id)
}

// validMessage reports a problem with a task's message, or "".
func validMessage(s string) string {
	if strings.TrimSpace(s) == "" {
		return "field \"message\" is required: the task for the agent"
	}
	return ""
}
