package loop

import (
	"math"
	"sync"

	"github.com/exocortex/exocortex/core/llm"
)

// Token counting for the prompt budget. The loop cannot run the model's
// tokenizer, but the server reports how many tokens each prompt took
// (prompt_eval_count), so a count is bytes × a per-model factor plus a fixed
// cost per message (role markers of the chat template). Before the first reply
// the factor is conservative (three bytes a token, where English prose with a
// BPE tokenizer takes about four); after each reply it is recalibrated from the
// server's count, with a margin. A server that reuses a cached prefix may
// report fewer tokens than the prompt had; such low counts are not taken, so
// the factor errs towards too many tokens, never too few.
const (
	// initialTokensPerByte is the estimate before the model has answered.
	initialTokensPerByte = 1.0 / 3
	// messageOverhead is the tokens a chat template adds per message.
	messageOverhead = 6
	// calibrationMargin is added to the observed factor.
	calibrationMargin = 1.05
)

// tokenCounter counts tokens for one model. Safe for concurrent use.
type tokenCounter struct {
	mu         sync.Mutex
	perByte    float64
	observed   float64 // the highest factor observed; 0 before the first reply
	calibrated bool
}

func newTokenCounter() *tokenCounter { return &tokenCounter{perByte: initialTokensPerByte} }

// text counts a piece of text without message overhead.
func (c *tokenCounter) text(s string) int {
	return c.ofBytes(len(s))
}

// ofBytes counts a text of n bytes.
func (c *tokenCounter) ofBytes(n int) int {
	c.mu.Lock()
	f := c.perByte
	c.mu.Unlock()
	return int(math.Ceil(float64(n) * f))
}

// message counts one message with its overhead.
func (c *tokenCounter) message(m llm.Message) int {
	return messageOverhead + c.text(m.Content) + c.text(m.Thinking)
}

// messages counts a prompt.
func (c *tokenCounter) messages(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += c.message(m)
	}
	return n
}

// observe takes the server's count of a prompt it was sent whole. A count at
// the window (the server may have cut the prompt) or far below the estimate (a
// cached prefix counted out) says nothing about the tokenizer and is ignored.
func (c *tokenCounter) observe(msgs []llm.Message, reported, numCtx int) {
	bytes := 0
	for _, m := range msgs {
		bytes += len(m.Content) + len(m.Thinking)
	}
	if reported <= 0 || bytes < 256 || (numCtx > 0 && reported >= numCtx) {
		return
	}
	f := float64(reported-messageOverhead*len(msgs)) / float64(bytes)
	if f <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.observed > 0 && f < c.observed/2 {
		return
	}
	c.observed = max(c.observed, f)
	c.perByte = c.observed * calibrationMargin
	c.calibrated = true
}

// state reports the factor in use (tokens a byte) and whether it was
// calibrated.
func (c *tokenCounter) state() (float64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.perByte, c.calibrated
}
