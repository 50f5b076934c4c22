// Package stream reads a model reply while it is still arriving. The agent
// answers in the JSON reply format
//
//	{"thoughts": ["..."], "headline": "...", "tool_name": "response", "tool_args": {"text": "..."}}
//
// so what streams in is JSON, cut anywhere. The operator wants to watch the
// thoughts, the headline and, for the response tool, the answer as it grows,
// not braces and escapes. Parse takes the text received so far and pulls those
// fields out leniently: a string cut by the end of the text is kept up to
// there, escapes are decoded (a half-received escape is held back), unquoted
// keys and a missing comma are tolerated, and parsing stops quietly at
// anything it cannot read. A reply that is not a JSON object (a model answering
// in prose) is returned as prose.
//
// Parse is a view for the screen, not the parser of record: what the loop does
// with the reply is decided by core/llm.ParseReply once the reply is complete.
package stream

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Reply is what can be shown of a partial reply.
type Reply struct {
	// JSON is true when the reply is (so far) a JSON object.
	JSON bool
	// Think is the text of a leading <think> block, if any.
	Think    string
	Thoughts []string
	Headline string
	Tool     string
	// Text is the answer so far: the response tool's text argument, or the
	// whole reply when it is prose.
	Text string
	// Args are the other tool arguments seen so far, as "key: value" lines, for
	// a tool call being written.
	Args []Arg
}

// Arg is one tool argument, its value rendered as text (strings unquoted).
type Arg struct {
	Key, Value string
}

// Parse reads the reply text received so far.
func Parse(text string) Reply {
	var r Reply
	body := text
	if t := strings.TrimLeft(body, " \t\r\n"); strings.HasPrefix(t, "<think>") {
		t = t[len("<think>"):]
		end := strings.Index(t, "</think>")
		if end < 0 {
			r.Think = strings.TrimSpace(t)
			return r
		}
		r.Think = strings.TrimSpace(t[:end])
		body = t[end+len("</think>"):]
	}
	start := objectStart(body)
	if start < 0 {
		trimmed := strings.TrimSpace(body)
		if fence, ok := strings.CutPrefix(trimmed, "```"); ok && (fence == "" || fence == "json") {
			// A fence that opens a JSON reply; the object has not started yet.
			r.JSON = true
			return r
		}
		r.Text = trimmed
		return r
	}
	r.JSON = true
	p := &parser{s: body, i: start}
	v, _ := p.value()
	obj, _ := v.(map[string]any)
	r.fill(obj)
	return r
}

// objectStart finds the '{' that opens the reply object: at the start of the
// text or of a line, followed by a key. -1 when there is none (prose).
func objectStart(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] != '{' {
			continue
		}
		if i > 0 {
			prev := strings.TrimRight(s[:i], " \t")
			if prev != "" && !strings.HasSuffix(prev, "\n") && !strings.HasSuffix(prev, "```json") && !strings.HasSuffix(prev, "```") {
				continue
			}
		}
		rest := strings.TrimLeft(s[i+1:], " \t\r\n")
		if rest == "" || rest[0] == '"' || rest[0] == '\'' || isIdentStart(rest[0]) {
			return i
		}
	}
	return -1
}

func (r *Reply) fill(obj map[string]any) {
	if obj == nil {
		return
	}
	switch th := first(obj, "thoughts", "thought").(type) {
	case []any:
		for _, t := range th {
			if s, ok := t.(string); ok && strings.TrimSpace(s) != "" {
				r.Thoughts = append(r.Thoughts, s)
			}
		}
	case string:
		if strings.TrimSpace(th) != "" {
			r.Thoughts = []string{th}
		}
	}
	r.Headline, _ = first(obj, "headline").(string)
	r.Tool, _ = first(obj, "tool_name", "tool").(string)
	r.Tool = strings.TrimSpace(r.Tool)
	args, _ := first(obj, "tool_args", "args", "arguments").(map[string]any)
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "text" && (r.Tool == "response" || r.Tool == "") {
			r.Text, _ = args[k].(string)
			continue
		}
		r.Args = append(r.Args, Arg{Key: k, Value: render(args[k])})
	}
}

func first(obj map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := obj[k]; ok {
			return v
		}
	}
	return nil
}

// render shows a parsed value compactly.
func render(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ": " + render(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = render(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case nil:
		return ""
	}
	return strings.TrimSpace(strings.TrimSpace(v.(literal).s))
}

// literal is a number, true, false or null, kept as written.
type literal struct{ s string }

// parser is a forgiving reader of a JSON prefix.
type parser struct {
	s string
	i int
}

func (p *parser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

// value reads one value; complete is false when the text ended inside it or it
// could not be read.
func (p *parser) value() (v any, complete bool) {
	p.ws()
	if p.i >= len(p.s) {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"' || c == '\'':
		return p.str(c)
	default:
		start := p.i
		for p.i < len(p.s) && !strings.ContainsRune(",}] \t\r\n", rune(p.s[p.i])) {
			p.i++
		}
		if p.i == start {
			return nil, false
		}
		return literal{p.s[start:p.i]}, p.i < len(p.s)
	}
}

func (p *parser) object() (map[string]any, bool) {
	p.i++ // {
	obj := map[string]any{}
	for {
		p.ws()
		if p.i >= len(p.s) {
			return obj, false
		}
		switch p.s[p.i] {
		case '}':
			p.i++
			return obj, true
		case ',':
			p.i++
			continue
		}
		var key string
		switch c := p.s[p.i]; {
		case c == '"' || c == '\'':
			k, ok := p.str(c)
			if !ok {
				return obj, false
			}
			key = k
		case isIdentStart(c):
			start := p.i
			for p.i < len(p.s) && (isIdentStart(p.s[p.i]) || (p.s[p.i] >= '0' && p.s[p.i] <= '9')) {
				p.i++
			}
			key = p.s[start:p.i]
		default:
			return obj, false
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return obj, false
		}
		p.i++
		v, ok := p.value()
		if v != nil {
			obj[key] = v
		}
		if !ok {
			return obj, false
		}
	}
}

func (p *parser) array() ([]any, bool) {
	p.i++ // [
	var arr []any
	for {
		p.ws()
		if p.i >= len(p.s) {
			return arr, false
		}
		switch p.s[p.i] {
		case ']':
			p.i++
			return arr, true
		case ',':
			p.i++
			continue
		}
		v, ok := p.value()
		if v != nil {
			arr = append(arr, v)
		}
		if !ok {
			return arr, false
		}
	}
}

// str reads a string opened by quote, decoding escapes. At the end of the text
// it returns what it has, without a trailing half escape.
func (p *parser) str(quote byte) (string, bool) {
	p.i++ // opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == quote:
			p.i++
			return b.String(), true
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return b.String(), false
			}
			e := p.s[p.i+1]
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b', 'f':
			case 'u':
				if p.i+6 > len(p.s) {
					return b.String(), false
				}
				n, err := strconv.ParseUint(p.s[p.i+2:p.i+6], 16, 32)
				if err != nil {
					b.WriteString(p.s[p.i : p.i+6])
				} else {
					r := rune(n)
					if utf16Surrogate(r) && p.i+12 <= len(p.s) && p.s[p.i+6] == '\\' && p.s[p.i+7] == 'u' {
						if lo, err := strconv.ParseUint(p.s[p.i+8:p.i+12], 16, 32); err == nil {
							r = (r-0xD800)<<10 + (rune(lo) - 0xDC00) + 0x10000
							p.i += 6
						}
					} else if utf16Surrogate(r) && p.i+12 > len(p.s) {
						return b.String(), false
					}
					if !utf8.ValidRune(r) {
						r = utf8.RuneError
					}
					b.WriteRune(r)
				}
				p.i += 6
				continue
			default:
				b.WriteByte(e)
			}
			p.i += 2
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return b.String(), false
}

func utf16Surrogate(r rune) bool { return r >= 0xD800 && r < 0xDC00 }

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
