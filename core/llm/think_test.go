package llm

import (
	"strings"
	"testing"
)

// TestThinkSplitter: a leading <think> block goes to the reasoning however the
// stream cuts the text, and nothing else does.
func TestThinkSplitter(t *testing.T) {
	tests := []struct {
		name, text, content, thinking string
	}{
		{name: "plain reply", text: `{"tool_name": "response"}`, content: `{"tool_name": "response"}`},
		{name: "leading block", text: "<think>\nwhich tool?\n</think>\n\n{\"a\": 1}", content: `{"a": 1}`, thinking: "\nwhich tool?\n"},
		{name: "white space before the block", text: "\n  <think>x</think>y", content: "y", thinking: "x"},
		{name: "a tag later is text", text: "use <think> tags</think>", content: "use <think> tags</think>"},
		{name: "unfinished block", text: "<think>still going </thi", thinking: "still going </thi"},
		{name: "only a prefix of the tag", text: "<thi", content: "<thi"},
		{name: "a close tag inside a close-tag prefix", text: "<think>a<</think>b", content: "b", thinking: "a<"},
		{name: "empty block", text: "<think></think>answer", content: "answer"},
		{name: "only white space", text: "  \n"},
	}
	for _, tt := range tests {
		for _, size := range []int{1, 2, 3, 7, 1000} {
			var s streamText
			var content, thinking strings.Builder
			for i := 0; i < len(tt.text); i += size {
				c := s.add(tt.text[i:min(i+size, len(tt.text))], "")
				content.WriteString(c.Content)
				thinking.WriteString(c.Thinking)
			}
			last := s.end()
			content.WriteString(last.Content)
			thinking.WriteString(last.Thinking)
			if content.String() != tt.content || thinking.String() != tt.thinking {
				t.Errorf("%s, pieces of %d: text %q, thinking %q; want %q, %q", tt.name, size, content.String(), thinking.String(), tt.content, tt.thinking)
			}
			if s.content.String() != tt.content || s.thinking.String() != tt.thinking {
				t.Errorf("%s, pieces of %d: gathered %q, %q", tt.name, size, s.content.String(), s.thinking.String())
			}
		}
	}
}
