package tui

import (
	"context"
	"fmt"
	"strings"
)

// compressNow is /context compress: the operator's own history compression
// (trigger manual), which extensions at history_compress_before, Claude
// Code's PreCompact hooks among them, may hold back. Words after it are
// instructions for the summary (PreCompact's custom_instructions).
func (e *Engine) compressNow(ctx context.Context, instructions string) (Output, error) {
	a := e.Agent()
	if a == nil {
		return Output{}, ErrNotReady
	}
	e.mu.Lock()
	if e.busy {
		e.mu.Unlock()
		return Output{}, ErrBusy
	}
	e.busy = true
	e.mu.Unlock()
	defer e.end()
	c, err := a.CompressNow(ctx, instructions)
	if err != nil {
		return Output{}, err
	}
	if c == nil {
		return Output{Title: "context", Text: "nothing to compress: the history has fewer than two messages in the prompt"}, nil
	}
	return Output{Title: "context", Text: fmt.Sprintf("compressed %d messages (%s summary); the summary's new part:\n%s", c.Messages, c.Method, strings.TrimSpace(c.Added))}, nil
}
