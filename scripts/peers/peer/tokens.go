package peer

import (
	"encoding/json"
	"fmt"

	"github.com/tiktoken-go/tokenizer"

	"github.com/exocortex/exocortex/core/llm/scripted"
)

// Counter counts a chat request's tokens with o200k_base (GPT-4o's encoding),
// the way OpenAI's guide counts a chat prompt: every message's role, content
// and tool calls (name and arguments), 3 tokens of framing a message and 3 for
// the reply's start, plus the tool definitions as the request sends them
// (their JSON). One count for every agent, whatever its own tokenizer guess.
type Counter struct{ codec tokenizer.Codec }

// NewCounter loads the o200k_base encoding (compiled into the binary).
func NewCounter() (*Counter, error) {
	c, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return nil, fmt.Errorf("o200k_base: %w", err)
	}
	return &Counter{codec: c}, nil
}

func (c *Counter) text(s string) int {
	n, err := c.codec.Count(s)
	if err != nil {
		return (len(s) + 3) / 4
	}
	return n
}

// Request is req's token count.
func (c *Counter) Request(req scripted.OpenAIRequest) int {
	n := 3
	for _, m := range req.Messages {
		n += 3 + c.text(m.Role) + c.text(string(m.Content))
		for _, tc := range m.ToolCalls {
			n += c.text(tc.Function.Name) + c.text(tc.Function.Arguments)
		}
	}
	if len(req.Tools) > 0 {
		b, err := json.Marshal(req.Tools)
		if err == nil {
			n += c.text(string(b))
		}
	}
	return n
}
