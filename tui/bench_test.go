package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/loop"
)

// answerText is a Markdown answer of about n bytes: paragraphs, a list and a
// Go code block, as a model writes them.
func answerText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "Paragraph %d explains a step of the work with **some emphasis**, a `code span` and a plain sentence that goes on for a while.\n\n", i)
		case 1:
			b.WriteString("- the first point of a list\n- the second point, a little longer than the first\n\n")
		case 2:
			b.WriteString("```go\nfunc add(a, b int) int {\n\treturn a + b\n}\n```\n\n")
		default:
			b.WriteString("### A heading\n\nMore text under the heading, to wrap over two lines of a narrow terminal window.\n\n")
		}
	}
	return b.String()
}

// streamChunks is the reply as the model streams it: the JSON reply format,
// eight bytes a chunk (about two tokens).
func streamChunks(n int) []string {
	b, _ := json.Marshal(map[string]any{
		"thoughts": []string{"Writing the answer."}, "headline": "Answering",
		"tool_name": "response", "tool_args": map[string]string{"text": answerText(n)},
	})
	s := string(b)
	var out []string
	for len(s) > 0 {
		k := min(8, len(s))
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

func benchModel(b *testing.B) *Model {
	eng := NewEngine(Config{Model: "bench", Address: "http://127.0.0.1:1"})
	m, err := New(context.Background(), eng)
	if err != nil {
		b.Fatal(err)
	}
	m.resize(100, 40)
	m.boot.welcomed = true
	return m
}

// BenchmarkChunkRender is the cost of one streamed chunk: the reply view
// updated and the live area drawn, per chunk, over a whole answer of the
// given size. The clock is simulated:
//
//	session  100 chunks a second (a fast local model), the session's own
//	         throttle: the open paragraph is re-rendered at most every 50 ms
//	every    a render on every chunk (the worst case of the session's code)
//	full     the whole answer rendered on every chunk (the naive way), for
//	         the ratio
func BenchmarkChunkRender(b *testing.B) {
	for _, size := range []int{1 << 10, 8 << 10, 32 << 10} {
		chunks := streamChunks(size)
		for _, mode := range []string{"session", "every", "full"} {
			if mode == "full" && size > 8<<10 {
				continue // minutes per iteration: the point is made at 8 KB
			}
			b.Run(fmt.Sprintf("%s/%dKB", mode, size>>10), func(b *testing.B) {
				m := benchModel(b)
				clock := time.Unix(0, 0)
				m.now = func() time.Time { return clock }
				step := 10 * time.Millisecond
				if mode != "session" {
					step = liveEvery
				}
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					m.turn = &turn{kind: kindPrompt, start: clock}
					m.event(loop.Event{Type: loop.EventIteration, Iteration: 1})
					for _, c := range chunks {
						clock = clock.Add(step)
						m.event(loop.Event{Type: loop.EventLLMChunk, Text: c})
						if mode == "full" {
							m.md.render(m.turn.view.Text, m.width)
						}
						_ = m.View()
						n++
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/1e3, "µs/chunk")
			})
		}
	}
}
