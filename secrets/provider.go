package secrets

import (
	"context"

	"github.com/exocortex/exocortex/core/llm"
)

// MaskProvider wraps a model provider so that no request carries a secret:
// every message, tool description and tool schema of every Chat (the main
// model's, the utility model's, compression's summaries, plugins' utility
// calls) and every text to embed is masked before it leaves, and the reply
// is masked before it comes back. With a nil masker it returns p.
func MaskProvider(p llm.Provider, m *Masker) llm.Provider {
	if m == nil || p == nil {
		return p
	}
	if mp, ok := p.(*maskedProvider); ok && mp.m == m {
		return p
	}
	return &maskedProvider{Provider: p, m: m}
}

type maskedProvider struct {
	llm.Provider
	m *Masker
}

func (p *maskedProvider) Chat(ctx context.Context, req llm.ChatRequest, onChunk func(llm.Chunk) error) (llm.Reply, error) {
	req.Messages = p.maskMessages(req.Messages)
	if len(req.Tools) > 0 {
		tools := make([]llm.Tool, len(req.Tools))
		for i, t := range req.Tools {
			t.Description = p.m.Mask(t.Description)
			t.Parameters = p.m.MaskBytes(t.Parameters)
			tools[i] = t
		}
		req.Tools = tools
	}
	r, err := p.Provider.Chat(ctx, req, onChunk)
	r.Content = p.m.Mask(r.Content)
	r.Thinking = p.m.Mask(r.Thinking)
	for i := range r.ToolCalls {
		r.ToolCalls[i].Arguments = p.m.MaskBytes(r.ToolCalls[i].Arguments)
	}
	return r, err
}

// maskMessages returns ms, or a copy with the messages that hold a secret
// masked (the caller's slice is the history's prompt and stays as it is).
func (p *maskedProvider) maskMessages(ms []llm.Message) []llm.Message {
	var out []llm.Message
	for i, msg := range ms {
		if !p.holds(msg) {
			continue
		}
		if out == nil {
			out = append([]llm.Message(nil), ms...)
		}
		msg.Content = p.m.Mask(msg.Content)
		msg.Thinking = p.m.Mask(msg.Thinking)
		calls := make([]llm.ToolCall, len(msg.ToolCalls))
		for j, tc := range msg.ToolCalls {
			tc.Arguments = p.m.MaskBytes(tc.Arguments)
			calls[j] = tc
		}
		msg.ToolCalls = calls
		out[i] = msg
	}
	if out == nil {
		return ms
	}
	return out
}

func (p *maskedProvider) holds(msg llm.Message) bool {
	if p.m.Contains(msg.Content) || p.m.Contains(msg.Thinking) {
		return true
	}
	for _, tc := range msg.ToolCalls {
		if p.m.Contains(string(tc.Arguments)) {
			return true
		}
	}
	return false
}

func (p *maskedProvider) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	masked := texts
	for i, t := range texts {
		if !p.m.Contains(t) {
			continue
		}
		if len(masked) > 0 && &masked[0] == &texts[0] {
			masked = append([]string(nil), texts...)
		}
		masked[i] = p.m.Mask(t)
	}
	return p.Provider.Embed(ctx, model, masked)
}
