package secrets

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// streamMask feeds pieces through a Stream and returns what it emitted, in
// order, the last entry being Flush's.
func streamMask(m *Masker, pieces []string) []string {
	s := m.NewStream()
	var out []string
	for _, p := range pieces {
		out = append(out, s.Write(p))
	}
	return append(out, s.Flush())
}

func longestForm(m *Masker) int {
	n := 0
	for _, p := range m.patterns {
		n = max(n, len(p.text))
	}
	return n
}

// TestStreamMaskEverySplit streams a text holding a secret, raw or in one of
// its encodings, split in two at every byte position, and byte by byte: what
// the stream emits, put together, is Mask of the whole text, so the value (or
// its encoding) is in none of it, and no more than the longest form's length
// minus one is ever held back.
func TestStreamMaskEverySplit(t *testing.T) {
	const v = "stream-Secret/4x+Yz9"
	m := newMasker(map[string]string{"TOK": v})
	maxHold := longestForm(m) - 1
	b64 := func(pre string) string { return base64.StdEncoding.EncodeToString([]byte(pre + v + " tail")) }
	tests := []struct{ name, text, form string }{
		{"raw", "the token is " + v + " and more text after it", v},
		{"raw at start", v + " first", v},
		{"raw at end", "last " + v, v},
		{"raw twice", v + v + " x " + v, v},
		{"url-encoded", "GET /x?tok=" + url.QueryEscape(v) + "&y=1", url.QueryEscape(v)},
		{"base64 align 0", "b64: " + b64(""), base64Core(v, 0)},
		{"base64 align 1", "b64: " + b64("a"), base64Core(v, 1)},
		{"base64 align 2", "b64: " + b64("ab"), base64Core(v, 2)},
		{"base64 whole", "b64: " + base64.StdEncoding.EncodeToString([]byte(v)) + " end", base64Core(v, 0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := m.Mask(tc.text)
			if tc.form != "" && strings.Contains(want, tc.form) {
				t.Fatalf("Mask(%q) = %q still holds %q", tc.text, want, tc.form)
			}
			check := func(label string, pieces []string) {
				t.Helper()
				s := m.NewStream()
				var got strings.Builder
				for _, p := range pieces {
					got.WriteString(s.Write(p))
					if s.Pending() > maxHold {
						t.Fatalf("%s: holds back %d bytes, want at most %d", label, s.Pending(), maxHold)
					}
				}
				got.WriteString(s.Flush())
				if got.String() != want {
					t.Fatalf("%s: streamed %q, want %q", label, got.String(), want)
				}
			}
			for i := 0; i <= len(tc.text); i++ {
				check(fmt.Sprintf("split at %d", i), []string{tc.text[:i], tc.text[i:]})
			}
			var bytes []string
			for i := range len(tc.text) {
				bytes = append(bytes, tc.text[i:i+1])
			}
			check("byte by byte", bytes)
		})
	}
}

// TestStreamMaskNoHoldBack: with no secrets every piece comes out at once, as
// it is; with secrets, text that cannot begin a form is not held back either.
func TestStreamMaskNoHoldBack(t *testing.T) {
	pieces := []string{"a reply ", "streamed in ", "small pieces", ""}
	tests := []struct {
		name string
		m    *Masker
		text []string
	}{
		{"no secrets", nil, pieces},
		{"empty store", newMasker(nil), pieces},
		{"secrets, unrelated text", newMasker(map[string]string{"TOK": "zzzz-qqqq-9999"}), []string{"a reply ", "(streamed) ", "in pieces."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := streamMask(tc.m, tc.text)
			for i, p := range tc.text {
				if out[i] != p {
					t.Fatalf("piece %d: got %q, want %q at once", i, out[i], p)
				}
			}
			if last := out[len(out)-1]; last != "" {
				t.Fatalf("Flush = %q, want nothing held back", last)
			}
		})
	}
}
