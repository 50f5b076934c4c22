package codeexec

import (
	"context"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"
)

// Partial output (Agent Zero's tool_output_update). While a command runs, what
// the shell writes is passed to the host as it comes (sdk.Call.ReportOutput),
// so the extensions at tool_output_update see it and the operator watches it
// grow. A report is a round trip through the host's hooks, so reports are
// coalesced: at most one every reportEvery, each carrying everything written
// since the last one; a command that prints a line every millisecond makes a
// few reports a second, not a thousand. The shell is never slowed by it: the
// reports go out from a goroutine of their own, and output that piles up
// beyond reportBacklog while one is in flight is dropped from the report (not
// from the result), saying how much. The tool's result is unchanged: the model
// sees the output as before.

const (
	// reportEvery is the least time between two reports of one command.
	reportEvery = 200 * time.Millisecond
	// reportBacklog bounds the output waiting for the next report.
	reportBacklog = 64 << 10
	// reportFlush bounds how long the last report may take when the command
	// is done, so a slow extension at tool_output_update cannot hold the
	// result back for long.
	reportFlush = 5 * time.Second
)

// streamer sends a command's output to report in coalesced pieces.
type streamer struct {
	report func(ctx context.Context, delta string) error
	every  time.Duration
	ctx    context.Context

	mu      sync.Mutex
	pending []byte
	skipped int64
	off     bool // a report failed: the host is not listening (an operator's !command)
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

// newStreamer starts a streamer reporting through report until close.
func newStreamer(ctx context.Context, every time.Duration, report func(ctx context.Context, delta string) error) *streamer {
	s := &streamer{report: report, every: every, ctx: ctx,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	return s
}

// write queues output for the next report. It never blocks on a report.
func (s *streamer) write(p []byte) {
	if len(p) == 0 {
		return
	}
	s.mu.Lock()
	if s.off {
		s.mu.Unlock()
		return
	}
	s.pending = append(s.pending, p...)
	if over := len(s.pending) - reportBacklog; over > 0 {
		// Drop whole characters from the front.
		for over < len(s.pending) && !utf8.RuneStart(s.pending[over]) {
			over++
		}
		s.skipped += int64(over)
		s.pending = append(s.pending[:0], s.pending[over:]...)
	}
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// take returns the next report's text: everything pending but an incomplete
// character at the end (unless final), after a note of what was dropped.
func (s *streamer) take(final bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.pending)
	if !final {
		n = completeRunes(s.pending)
	}
	if n == 0 && s.skipped == 0 {
		return ""
	}
	text := string(s.pending[:n])
	if s.skipped > 0 {
		text = fmt.Sprintf("[… %s bytes of output not shown …]\n", commas(s.skipped)) + text
		s.skipped = 0
	}
	s.pending = append(s.pending[:0], s.pending[n:]...)
	return text
}

// send reports text; a failure turns the streamer off for good.
func (s *streamer) send(ctx context.Context, text string) {
	if text == "" {
		return
	}
	if err := s.report(ctx, text); err != nil {
		s.mu.Lock()
		s.off, s.pending, s.skipped = true, nil, 0
		s.mu.Unlock()
	}
}

func (s *streamer) loop() {
	defer close(s.done)
	for {
		select {
		case <-s.kick:
		case <-s.stop:
			return
		}
		s.send(s.ctx, s.take(false))
		// At most one report every s.every.
		select {
		case <-time.After(s.every):
		case <-s.stop:
			return
		}
	}
}

// close waits for a report in flight, then reports what is left, so every
// piece reaches the host before the tool's result does.
func (s *streamer) close() {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	off := s.off
	s.mu.Unlock()
	if off {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), reportFlush)
	defer cancel()
	s.send(ctx, s.take(true))
}

// completeRunes is the length of b's longest prefix that does not end inside
// a UTF-8 character.
func completeRunes(b []byte) int {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if utf8.FullRune(b[len(b)-i:]) {
				return len(b)
			}
			return len(b) - i
		}
	}
	return len(b)
}
