package llm

import (
	"strings"
	"unicode"
)

// Reasoning models reached without a reasoning parser (Qwen3 and DeepSeek-R1
// through llama-server without --reasoning-format, vLLM without
// --reasoning-parser, an Ollama model whose template does not separate it)
// write their reasoning into the reply text as a leading <think>…</think>
// block. Both providers pass the streamed text through a thinkSplitter, so
// that block arrives as Chunk.Thinking and ends up in Reply.Thinking, exactly
// as when the server separates it itself (Ollama's thinking,
// reasoning_content): the reply text, which is parsed and kept in the
// history, never holds it.
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

type thinkState int

const (
	thinkStart   thinkState = iota // before the first non-space text: may open a block
	thinkInside                    // inside the block
	thinkAfter                     // just after the block: leading white space is dropped
	thinkContent                   // plain reply text from here on
)

// thinkSplitter splits a streamed reply text into reasoning and reply. Only a
// block that opens the reply counts (a <think> later in the text is the model
// talking about the tag). Tags split across chunks are held back until they
// are whole; nothing is lost and nothing is emitted twice.
type thinkSplitter struct {
	state thinkState
	held  string // text held back: a possible tag, or leading white space
}

// feed takes the next piece of streamed text and returns what of it is reply
// text and what is reasoning, as far as can be told yet.
func (s *thinkSplitter) feed(text string) (content, thinking string) {
	var c, t strings.Builder
	s.held += text
	for s.held != "" {
		switch s.state {
		case thinkStart:
			rest := strings.TrimLeftFunc(s.held, unicode.IsSpace)
			switch {
			case rest == "" || (len(rest) < len(thinkOpen) && strings.HasPrefix(thinkOpen, rest)):
				return c.String(), t.String() // could still open a block
			case strings.HasPrefix(rest, thinkOpen):
				s.held, s.state = rest[len(thinkOpen):], thinkInside
			default:
				s.state = thinkContent
			}
		case thinkInside:
			if i := strings.Index(s.held, thinkClose); i >= 0 {
				t.WriteString(s.held[:i])
				s.held, s.state = s.held[i+len(thinkClose):], thinkAfter
				continue
			}
			keep := partialSuffix(s.held, thinkClose)
			t.WriteString(s.held[:len(s.held)-keep])
			s.held = s.held[len(s.held)-keep:]
			return c.String(), t.String()
		case thinkAfter:
			s.held = strings.TrimLeftFunc(s.held, unicode.IsSpace)
			if s.held != "" {
				s.state = thinkContent
			}
		case thinkContent:
			c.WriteString(s.held)
			s.held = ""
		}
	}
	return c.String(), t.String()
}

// flush returns what is still held back when the stream ends: an unfinished
// tag inside the block is reasoning, a lone prefix of <think> is reply text.
func (s *thinkSplitter) flush() (content, thinking string) {
	held := s.held
	s.held = ""
	switch s.state {
	case thinkInside:
		return "", held
	case thinkStart:
		if strings.TrimSpace(held) == "" {
			return "", ""
		}
		return held, ""
	case thinkAfter:
		return "", ""
	}
	return held, ""
}

// partialSuffix is the length of the longest proper prefix of tag that s ends with.
func partialSuffix(s, tag string) int {
	for n := min(len(tag)-1, len(s)); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}

// streamText gathers a streamed reply's text and reasoning, with the reply's
// leading <think> block moved to the reasoning.
type streamText struct {
	split             thinkSplitter
	content, thinking strings.Builder
}

// add takes a piece of reply text and of reasoning as the server sent them and
// returns the chunk to pass on (empty when everything is held back yet).
func (s *streamText) add(content, thinking string) Chunk {
	c, t := s.split.feed(content)
	ch := Chunk{Content: c, Thinking: thinking + t}
	s.content.WriteString(ch.Content)
	s.thinking.WriteString(ch.Thinking)
	return ch
}

// end returns what was held back when the stream ends.
func (s *streamText) end() Chunk {
	c, t := s.split.flush()
	s.content.WriteString(c)
	s.thinking.WriteString(t)
	return Chunk{Content: c, Thinking: t}
}

func (c Chunk) empty() bool { return c.Content == "" && c.Thinking == "" }
