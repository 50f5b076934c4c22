package secrets

import "strings"

// Stream masks a text that arrives in pieces (a model's streamed reply, a
// running tool's partial output), so that a value split across two pieces is
// masked too. Write returns the masked text that is safe to show now and holds
// back the tail that could still be the start of a secret's form (at most the
// longest form's length minus one bytes); the next Write, or Flush at the end
// of the stream, settles it. The concatenation of everything Write and Flush
// return equals Mask of the whole stream.
//
// With no secrets (a nil Masker) nothing is held back: Write returns its piece
// as it is, so streaming costs no latency. A Stream is for one stream and one
// goroutine.
type Stream struct {
	m       *Masker
	pending string
}

// NewStream returns a Stream masking with m (nil masks nothing).
func (m *Masker) NewStream() *Stream { return &Stream{m: m} }

// Write adds piece to the stream and returns the masked text now settled.
func (s *Stream) Write(piece string) string {
	if s.m == nil {
		return piece
	}
	buf := s.pending + piece
	cut := s.m.settled(buf)
	s.pending = buf[cut:]
	return s.m.Mask(buf[:cut])
}

// Flush ends the stream and returns the masked tail held back so far.
func (s *Stream) Flush() string {
	out := s.m.Mask(s.pending)
	s.pending = ""
	return out
}

// Pending is the number of bytes held back.
func (s *Stream) Pending() int { return len(s.pending) }

// settled is the length of buf's longest prefix whose masking more text after
// buf cannot change. It parses buf the way Mask's replacer does (leftmost
// first, at one position the longest form wins, then past the match) and stops
// at the first position where more text could still make a form match: where
// the rest of buf is a proper prefix of a form. No match of the whole stream
// crosses that position, so masking buf[:settled] alone gives the same text.
func (m *Masker) settled(buf string) int {
	i := 0
	for i < len(buf) {
		if !m.first[buf[i]] {
			i++
			continue
		}
		rest := buf[i:]
		longest := 0
		for _, p := range m.patterns {
			if len(p.text) > len(rest) {
				if strings.HasPrefix(p.text, rest) {
					return i // a form may continue in the next piece
				}
				continue
			}
			if longest == 0 && strings.HasPrefix(rest, p.text) {
				longest = len(p.text) // patterns are longest first
			}
		}
		if longest > 0 {
			i += longest
		} else {
			i++
		}
	}
	return i
}
