package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/sleep"
)

// idleSleeper is the host's side of the seed's _60_sleep_trigger: the trigger
// extension only leaves a request (a batch never runs inside a hook), and when the
// operator's session has been idle for a while this starts `exocortex sleep
// --if-requested` in the background. The session's memory plugin releases the
// store when idle; the run waits for it if it has not yet.
type idleSleeper struct {
	home  string
	after time.Duration
	log   *slog.Logger
	out   io.Writer
	// start runs the consolidation; tests replace it.
	start func(ctx context.Context) error

	mu      sync.Mutex
	busy    bool
	last    time.Time
	running bool
}

func newIdleSleeper(home string, after time.Duration, log *slog.Logger, out io.Writer) *idleSleeper {
	s := &idleSleeper{home: home, after: after, log: log, out: out, last: time.Now()}
	s.start = s.runSleep
	return s
}

// observe wraps the agent's observer to learn when monologues start and end.
func (s *idleSleeper) observe(next func(loop.Event)) func(loop.Event) {
	return func(e loop.Event) {
		switch {
		case e.Type == loop.EventMonologueStart && e.Agent == "":
			s.mu.Lock()
			s.busy = true
			s.mu.Unlock()
		case e.Type == loop.EventMonologueEnd && e.Agent == "":
			s.mu.Lock()
			s.busy, s.last = false, time.Now()
			s.mu.Unlock()
		}
		if next != nil {
			next(e)
		}
	}
}

// due reports whether a run should start now.
func (s *idleSleeper) due(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.after > 0 && !s.busy && !s.running && now.Sub(s.last) >= s.after && sleep.Pending(s.home) != nil
}

// run checks every tick until ctx ends.
func (s *idleSleeper) run(ctx context.Context, tick time.Duration) {
	if s.after <= 0 {
		return
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if !s.due(now) {
				continue
			}
			s.mu.Lock()
			s.running = true
			s.mu.Unlock()
			err := s.start(ctx)
			s.mu.Lock()
			s.running, s.last = false, time.Now()
			s.mu.Unlock()
			if err != nil {
				s.log.Warn("idle sleep consolidation failed; run `exocortex sleep` to see why", "err", err)
			}
		}
	}
}

// runSleep runs the consolidation as a child process, so a crash in it cannot
// take the session down; its output goes to the log.
func (s *idleSleeper) runSleep(ctx context.Context) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	s.log.Info("the session is idle and the sleep trigger asked for a run: starting exocortex sleep")
	cmd := exec.CommandContext(ctx, exe, "sleep", "--if-requested", "--wait", "2m")
	cmd.Stdout, cmd.Stderr = s.out, s.out
	return cmd.Run()
}
