// Package toolstream passes a running tool's output to the host as it comes
// (sdk.Call.ReportOutput, Agent Zero's tool_output_update), so the extensions
// at tool_output_update see it and the operator watches it grow, without
// slowing the tool.
//
// A report is a round trip through the host's hooks, so reports are coalesced:
// at most one every Every, each carrying everything written since the last one;
// a command that prints a line every millisecond makes a few reports a second,
// not a thousand. Write never waits for a report: the reports go out from a
// goroutine of their own, and output that piles up beyond Backlog while one is
// in flight is left out of the next report (not out of the tool's result),
// with a note saying how much. A character split across writes is never split
// across reports. The first report the host refuses (no agent runs the call:
// an operator's own command) turns reporting off. Close reports what is left,
// so every piece reaches the host before the tool's result does.
package toolstream

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

const (
	// Every is the least time between two reports of one tool call.
	Every = 200 * time.Millisecond
	// Backlog bounds the output waiting for the next report.
	Backlog = 64 << 10
	// flushTimeout bounds how long the last report may take when the tool is
	// done, so a slow extension at tool_output_update cannot hold the result
	// back for long.
	flushTimeout = 5 * time.Second
)

// Streamer sends a tool's output to report in coalesced pieces. Its methods
// are safe for concurrent use.
type Streamer struct {
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

// New starts a Streamer reporting through report (for a tool:
// sdk.Call.ReportOutput) at most once every every, until Close.
func New(ctx context.Context, every time.Duration, report func(ctx context.Context, delta string) error) *Streamer {
	s := &Streamer{report: report, every: every, ctx: ctx,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	return s
}

// Write queues output for the next report. It never waits for a report and
// never fails (an io.Writer, to tee a command's output into).
func (s *Streamer) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.mu.Lock()
	if s.off {
		s.mu.Unlock()
		return len(p), nil
	}
	s.pending = append(s.pending, p...)
	if over := len(s.pending) - Backlog; over > 0 {
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
	return len(p), nil
}

// take returns the next report's text: everything pending but an incomplete
// character at the end (unless final), after a note of what was dropped.
func (s *Streamer) take(final bool) string {
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
func (s *Streamer) send(ctx context.Context, text string) {
	if text == "" {
		return
	}
	if err := s.report(ctx, text); err != nil {
		s.mu.Lock()
		s.off, s.pending, s.skipped = true, nil, 0
		s.mu.Unlock()
	}
}

func (s *Streamer) loop() {
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

// Close waits for a report in flight, then reports what is left, so every
// piece reaches the host before the tool's result does. Call it once.
func (s *Streamer) Close() {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	off := s.off
	s.mu.Unlock()
	if off {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), flushTimeout)
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

// commas writes n with thousands separators: 48213 -> "48,213".
func commas(n int64) string {
	d := strconv.FormatInt(n, 10)
	var out []byte
	for i := range len(d) {
		if i > 0 && (len(d)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, d[i])
	}
	return string(out)
}
