package secrets

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// Masker replaces secret values, and their common encodings, by their
// placeholders. It is immutable and safe for concurrent use; a nil *Masker
// masks nothing.
type Masker struct {
	// patterns are every form of every value, longest first, each with the
	// placeholder that replaces it.
	patterns []pattern
	replacer *strings.Replacer
	// detect are the forms Contains looks for: every other form holds one of
	// them (a whole base64 encoding starts with the alignment-0 core).
	detect []string
	// seen remembers Contains for long strings by identity (seen.go): the
	// history is sent again with every request, and each message is read once.
	seen seenCache
	// first marks the bytes a form starts with (Stream skips the others).
	first [256]bool
}

type pattern struct{ text, placeholder string }

func newMasker(values map[string]string) *Masker {
	if len(values) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var ps []pattern
	for name, v := range values {
		for _, f := range forms(v) {
			if len(f) < MinLength || seen[f] {
				continue
			}
			seen[f] = true
			ps = append(ps, pattern{f, Placeholder(name)})
		}
	}
	// Longest first: at one position the whole encoded value wins over the
	// core of it, and a value wins over a shorter one inside it.
	sort.Slice(ps, func(i, j int) bool {
		if len(ps[i].text) != len(ps[j].text) {
			return len(ps[i].text) > len(ps[j].text)
		}
		return ps[i].text < ps[j].text
	})
	pairs := make([]string, 0, 2*len(ps))
	for _, p := range ps {
		pairs = append(pairs, p.text, p.placeholder)
	}
	var detect []string
	for _, v := range values {
		for _, f := range detectForms(v) {
			if len(f) >= MinLength && !slices.Contains(detect, f) {
				detect = append(detect, f)
			}
		}
	}
	mk := &Masker{patterns: ps, replacer: strings.NewReplacer(pairs...), detect: detect}
	for _, p := range ps {
		mk.first[p.text[0]] = true
	}
	return mk
}

// forms are the texts a value may take on its way out: itself, JSON-escaped,
// URL-encoded (query and path escaping), and base64 in the standard and URL
// alphabets, padded and not, whole and as the part that stays the same
// wherever the value sits inside a longer encoded text (its alignment 0, 1 or
// 2 bytes past a group of three).
func forms(v string) []string {
	out := []string{v}
	if b, err := json.Marshal(v); err == nil {
		out = append(out, string(b[1:len(b)-1]))
	}
	out = append(out, url.QueryEscape(v), url.PathEscape(v))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		out = append(out, enc.EncodeToString([]byte(v)))
	}
	for off := 0; off < 3; off++ {
		core := base64Core(v, off)
		out = append(out, core, strings.NewReplacer("+", "-", "/", "_").Replace(core))
	}
	return out
}

// detectForms are the forms whose presence Contains checks: the value, its
// JSON and URL escapings, and the base64 cores at the three alignments in
// both alphabets. Every form of forms holds one of them.
func detectForms(v string) []string {
	out := []string{v}
	if b, err := json.Marshal(v); err == nil {
		out = append(out, string(b[1:len(b)-1]))
	}
	out = append(out, url.QueryEscape(v), url.PathEscape(v))
	for off := 0; off < 3; off++ {
		core := base64Core(v, off)
		out = append(out, core, strings.NewReplacer("+", "-", "/", "_").Replace(core))
	}
	return out
}

// base64Core is the part of the base64 encoding of value, placed off bytes
// past a group boundary of a longer text, that does not depend on the bytes
// around it: the groups of three bytes that hold value's bytes only.
func base64Core(v string, off int) string {
	buf := make([]byte, off+len(v))
	copy(buf[off:], v)
	enc := base64.StdEncoding.EncodeToString(buf)
	start := 0
	if off > 0 {
		start = 4 // the first group mixes the bytes before the value in
	}
	end := 4 * ((off + len(v)) / 3) // a last partial group mixes in the bytes after it
	if end <= start {
		return ""
	}
	return enc[start:end]
}

// Mask returns s with every secret value and encoding replaced by its
// placeholder; s itself (no copy) when it holds none.
func (m *Masker) Mask(s string) string {
	if m == nil || !m.Contains(s) {
		return s
	}
	return m.replacer.Replace(s)
}

// Contains reports whether s holds a secret value or an encoding of one.
func (m *Masker) Contains(s string) bool {
	if m == nil || len(s) < MinLength {
		return false
	}
	if len(s) < seenMin {
		return m.scan(s)
	}
	if hit, ok := m.seen.get(s); ok {
		return hit
	}
	hit := m.scan(s)
	m.seen.put(s, hit)
	return hit
}

func (m *Masker) scan(s string) bool {
	for _, p := range m.detect {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// MaskBytes is Mask for bytes; b itself when it holds no secret.
func (m *Masker) MaskBytes(b []byte) []byte {
	if m == nil || len(b) < MinLength {
		return b
	}
	s := string(b)
	if !m.Contains(s) {
		return b
	}
	return []byte(m.replacer.Replace(s))
}
