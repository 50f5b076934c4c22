package secrets

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/llm"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// nopProvider answers every chat at once, so only the masking is timed.
type nopProvider struct{ llm.Provider }

func (nopProvider) Chat(context.Context, llm.ChatRequest, func(llm.Chunk) error) (llm.Reply, error) {
	return llm.Reply{Content: `{"tool_name":"x","tool_args":{}}`}, nil
}

// BenchmarkMaskSession60 is the masking a 60-turn session does, without the
// session: per turn a 2 KB tool result and a reply enter the history (masked
// once each), the model request carries the system prompt and the whole
// history (MaskProvider), three history-reading extensions get the history
// (MaskProto, as core/host masks each request), ten other hook requests and
// twenty events are masked. One op is the whole session; compare its time
// with BenchmarkSecretsSession60 in core/loop (docs/perf/secrets.md).
func BenchmarkMaskSession60(b *testing.B) {
	values := map[string]string{}
	for i := 0; i < 3; i++ {
		values[fmt.Sprintf("S%d", i)] = fmt.Sprintf("bench-secret-%d-value-%d", i, 1e6+i)
	}
	m := newMasker(values)
	system := strings.Repeat("You are an agent. Tools: code_execution, memory_save, response.\n", 120)
	result := strings.Repeat("line of tool output that holds no secret at all\n", 40)
	p := MaskProvider(nopProvider{}, m)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var hist []*exocortexv1.Message
		for turn := 0; turn < 60; turn++ {
			for _, c := range []string{`{"thoughts":["step"],"tool_name":"code_execution","tool_args":{"code":"ls"}}`, result} {
				msg := &exocortexv1.Message{Role: "tool", Content: m.Mask(c)}
				hist = append(hist, msg)
			}
			msgs := []llm.Message{{Role: "system", Content: system}}
			for _, h := range hist {
				msgs = append(msgs, llm.Message{Role: h.GetRole(), Content: h.GetContent()})
			}
			if _, err := p.Chat(context.Background(), llm.ChatRequest{Messages: msgs}, nil); err != nil {
				b.Fatal(err)
			}
			for e := 0; e < 3; e++ {
				_ = MaskProto(m, &exocortexv1.MessageLoopPromptsAfterRequest{Iteration: int32(turn), History: hist})
			}
			for e := 0; e < 10; e++ {
				_ = MaskProto(m, &exocortexv1.ToolExecuteAfterRequest{ToolCall: &exocortexv1.ToolCall{Name: "code_execution", ArgsJson: `{"code":"ls"}`}, Result: &exocortexv1.ToolResult{Content: hist[len(hist)-1].GetContent()}})
			}
			for e := 0; e < 20; e++ {
				_ = m.Mask("an event's text of modest length")
			}
		}
	}
}

// BenchmarkStream64K streams 64 KB of ordinary text (no secret in it) in
// 8-byte pieces, as a model streams its reply, through a Stream with three
// secrets: the per-piece cost of the hold-back scan (docs/perf/secrets.md).
func BenchmarkStream64K(b *testing.B) {
	values := map[string]string{}
	for i := 0; i < 3; i++ {
		values[fmt.Sprintf("S%d", i)] = fmt.Sprintf("bench-secret-%d-value-%d", i, 1e6+i)
	}
	m := newMasker(values)
	text := strings.Repeat("line of streamed reply text, holding no secret at all\n", 64<<10/54)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s := m.NewStream()
		for j := 0; j < len(text); j += 8 {
			_ = s.Write(text[j:min(j+8, len(text))])
		}
		_ = s.Flush()
	}
}
