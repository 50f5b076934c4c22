package stream

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		text string
		want Reply
	}{
		{"empty", "", Reply{}},
		{"prose", "Hello there, **operator**.", Reply{Text: "Hello there, **operator**."}},
		{"opening brace", "{", Reply{JSON: true}},
		{"fence only", "```json\n", Reply{JSON: true}},
		{"thoughts cut mid-string", `{"thoughts": ["first", "sec`, Reply{JSON: true, Thoughts: []string{"first", "sec"}}},
		{"headline and tool", `{"thoughts":["a"],"headline":"Reading the file","tool_name":"text_editor","tool_args":{"path":"README.md","op`,
			Reply{JSON: true, Thoughts: []string{"a"}, Headline: "Reading the file", Tool: "text_editor", Args: []Arg{{"path", "README.md"}}}},
		{"response text grows", `{"tool_name": "response", "tool_args": {"text": "Line one\nLine \"two\"\u00e9`,
			Reply{JSON: true, Tool: "response", Text: "Line one\nLine \"two\"é"}},
		{"half escape held back", `{"tool_name":"response","tool_args":{"text":"a\`, Reply{JSON: true, Tool: "response", Text: "a"}},
		{"half unicode escape held back", `{"tool_name":"response","tool_args":{"text":"a\u00`, Reply{JSON: true, Tool: "response", Text: "a"}},
		{"surrogate pair", `{"tool_name":"response","tool_args":{"text":"\ud83d\ude00!"}}`, Reply{JSON: true, Tool: "response", Text: "😀!"}},
		{"text before tool name", `{"tool_args":{"text":"early"`, Reply{JSON: true, Text: "early"}},
		{"fenced", "```json\n{\"headline\": \"h\", \"tool_name\": \"response\", \"tool_args\": {\"text\": \"hi\"}}\n```",
			Reply{JSON: true, Headline: "h", Tool: "response", Text: "hi"}},
		{"think block", "<think>let me see</think>\n{\"tool_name\":\"response\",\"tool_args\":{\"text\":\"ok\"}}",
			Reply{JSON: true, Think: "let me see", Tool: "response", Text: "ok"}},
		{"open think block", "<think>still thinking", Reply{Think: "still thinking"}},
		{"unquoted keys", `{tool_name: "response", tool_args: {text: "bare"}}`, Reply{JSON: true, Tool: "response", Text: "bare"}},
		{"nested args rendered", `{"tool_name":"memory_save","tool_args":{"text":"x","meta":{"b":2,"a":[1,true]}}}`,
			Reply{JSON: true, Tool: "memory_save", Args: []Arg{{"meta", "{a: [1, true], b: 2}"}, {"text", "x"}}}},
		{"prose mentioning braces", "Use a map like {x} here.", Reply{Text: "Use a map like {x} here."}},
		{"prose then object on its own line", "Here it is:\n{\"tool_name\":\"response\",\"tool_args\":{\"text\":\"t\"}}",
			Reply{JSON: true, Tool: "response", Text: "t"}},
		{"garbage after key stops quietly", `{"headline": "h", 42: "x"}`, Reply{JSON: true, Headline: "h"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Parse(tc.text); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%q)\n got %+v\nwant %+v", tc.text, got, tc.want)
			}
		})
	}
}

// TestEveryPrefix feeds a reply one byte at a time, as a stream cut anywhere
// would: no prefix may panic, and the answer text only ever grows.
func TestEveryPrefix(t *testing.T) {
	full := `{"thoughts": ["Check the \"file\"", "Answer"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "Done:\n- **one**\n- two \u2713\n\n` + "```go\\nfmt.Println(1)\\n```" + `"}}`
	prev := ""
	for i := 0; i <= len(full); i++ {
		r := Parse(full[:i])
		if !strings.HasPrefix(r.Text, prev) {
			t.Fatalf("at %d the text went from %q to %q", i, prev, r.Text)
		}
		prev = r.Text
	}
	want := "Done:\n- **one**\n- two ✓\n\n```go\nfmt.Println(1)\n```"
	if prev != want {
		t.Fatalf("final text %q, want %q", prev, want)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`{"tool_name":"response","tool_args":{"text":"a\u00e9"}}`)
	f.Add("<think>x</think>{'a': [1, {\"b\": \"\\ud83d")
	f.Fuzz(func(t *testing.T, s string) {
		_ = Parse(s)
	})
}

func BenchmarkParse4KB(b *testing.B) {
	text := `{"thoughts": ["one", "two"], "headline": "h", "tool_name": "response", "tool_args": {"text": "` +
		strings.Repeat(`Some words of an answer, with \"quotes\" and\nnew lines. `, 70) + `"}}`
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		_ = Parse(text)
	}
}
