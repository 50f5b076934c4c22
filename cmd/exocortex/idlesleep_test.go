package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/sleep"
)

func TestIdleSleeperStartsOnlyWhenIdleAndRequested(t *testing.T) {
	home := t.TempDir()
	s := newIdleSleeper(home, time.Minute, slog.New(slog.DiscardHandler), io.Discard)
	now := time.Now()
	observe := s.observe(nil)

	if s.due(now.Add(2 * time.Minute)) {
		t.Fatal("due without a request from the trigger")
	}
	req := filepath.Join(home, sleep.RequestFile)
	if err := os.MkdirAll(filepath.Dir(req), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(req, []byte(`{"reasons":["test"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	observe(loop.Event{Type: loop.EventMonologueStart})
	if s.due(time.Now().Add(2 * time.Minute)) {
		t.Fatal("due while a monologue runs")
	}
	observe(loop.Event{Type: loop.EventMonologueEnd})
	if s.due(time.Now().Add(30 * time.Second)) {
		t.Fatal("due before the idle time passed")
	}
	observe(loop.Event{Type: loop.EventMonologueStart, Agent: "subordinate#1"})
	if !s.due(time.Now().Add(2 * time.Minute)) {
		t.Fatal("not due after the idle time with a request (a subordinate's events do not count)")
	}

	var runs atomic.Int32
	s.after = time.Millisecond
	s.start = func(context.Context) error { runs.Add(1); return os.Remove(req) }
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	go s.run(ctx, time.Millisecond)
	for runs.Load() == 0 && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	if n := runs.Load(); n != 1 {
		t.Fatalf("ran %d times; want once (the run consumed the request)", n)
	}
}
