package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
)

// TestReasoningFolded: a thinking model's reasoning, whether the server
// separates it (Ollama's thinking, reasoning_content) or leaves a <think>
// block in the text, is one folded line in the scrollback while it streams
// and after; ctrl+o opens it; the answer is parsed and kept without it.
func TestReasoningFolded(t *testing.T) {
	const reasoning = "SECRETPLAN first list the files, then answer."
	answerJSON := `{"thoughts":["answer"],"headline":"Answering","tool_name":"response","tool_args":{"text":"The files are listed."}}`
	tests := []struct {
		name     string
		provider string
		reply    scripted.Reply
	}{
		{"think block, ollama", llm.ProviderOllama, scripted.Reply{Content: "<think>\n" + reasoning + "\n</think>\n\n" + answerJSON}},
		{"think block, openai", llm.ProviderOpenAI, scripted.Reply{Content: "<think>\n" + reasoning + "\n</think>\n\n" + answerJSON}},
		{"thinking field, ollama", llm.ProviderOllama, scripted.Reply{Thinking: reasoning, Content: answerJSON}},
		{"reasoning_content, openai", llm.ProviderOpenAI, scripted.Reply{Thinking: reasoning, Content: answerJSON}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			tc.reply.ChunkSize, tc.reply.Delay = 4, 15*time.Millisecond
			eng, srv := e.engineOn(t, tc.provider, "r1", tc.reply)
			u := start(t, eng)
			u.submit("list the files")
			u.waitFor("the folded reasoning while it streams", func(m *Model) bool {
				return m.turn != nil && strings.Contains(plain(m.View().Content), "Thinking… ")
			})
			u.idle()
			u.waitPrinted("✻ Thought for", "chars (ctrl+o or /expand 1)", "The files are listed.")
			if p := u.printed(); strings.Contains(p, "SECRETPLAN") || strings.Contains(p, "<think>") {
				t.Fatalf("the reasoning is shown unfolded:\n%s", p)
			}
			u.key(ctrlO)
			u.waitPrinted("thought 1 ·", "SECRETPLAN first list the files, then answer.")
			for _, m := range eng.Session().History() {
				if strings.Contains(m.GetContent(), "SECRETPLAN") {
					t.Errorf("the session keeps the reasoning: %s %q", m.GetRole(), m.GetContent())
				}
			}
			if f := srv.Failures(); len(f) > 0 {
				t.Errorf("script failures %v", f)
			}
		})
	}
}

// TestReasoningFoldLines: --plain and run -p fold each stretch of reasoning
// into one line when the reply starts, per agent.
func TestReasoningFoldLines(t *testing.T) {
	now := time.Unix(0, 0)
	f := NewReasoningFold(func() time.Time { return now })
	var got []string
	feed := func(e loop.Event) {
		if l, ok := f.Observe(e); ok {
			got = append(got, e.Agent+"|"+l)
		}
	}
	feed(loop.Event{Type: loop.EventReasoning, Text: "abc"})
	feed(loop.Event{Type: loop.EventReasoning, Agent: "sub#1", Text: "x"})
	now = now.Add(1500 * time.Millisecond)
	feed(loop.Event{Type: loop.EventReasoning, Text: "déf"})
	feed(loop.Event{Type: loop.EventLLMChunk, Text: "{"})
	feed(loop.Event{Type: loop.EventLLMReply, Text: "{}"}) // nothing open: nothing
	feed(loop.Event{Type: loop.EventToolCall, Agent: "sub#1", Tool: "t"})
	feed(loop.Event{Type: loop.EventReasoning, Text: "  "})
	feed(loop.Event{Type: loop.EventMonologueEnd}) // only white space: nothing
	want := []string{"|✻ Thought for 1.5s · 6 chars", "sub#1|✻ Thought for 1.5s · 1 char"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("folded lines %q, want %q", got, want)
	}
}
