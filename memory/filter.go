package memory

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// FilterExpr is a parsed filter expression, the small language Agent Zero's
// memory tools take as "filter":
//
//	area == 'main' and ('deploy' in tags or key != '')
//	importance >= 0.8 and not status == 'archived'
//	created >= '2026-01-01' and project == 'exocortex'
//
// Comparisons are field OP literal with OP one of == != < <= > >=, or 'x' in tags.
// Fields are id, area, key, text, status, tags, importance, access_count, created
// and updated (timestamp is updated), or else a metadata key. Times compare as
// RFC 3339 strings, so a date prefix works. and binds tighter than or; not and
// parentheses work as usual. The empty expression admits everything.
type FilterExpr struct{ root node }

type node interface{ eval(r *Record) bool }

type andNode struct{ a, b node }
type orNode struct{ a, b node }
type notNode struct{ a node }
type trueNode struct{}
type cmpNode struct {
	field, op string
	lit       any // string, float64 or bool
}
type inNode struct {
	lit   string
	field string
}

func (n andNode) eval(r *Record) bool { return n.a.eval(r) && n.b.eval(r) }
func (n orNode) eval(r *Record) bool  { return n.a.eval(r) || n.b.eval(r) }
func (n notNode) eval(r *Record) bool { return !n.a.eval(r) }
func (trueNode) eval(*Record) bool    { return true }

func (n inNode) eval(r *Record) bool {
	switch v := fieldValue(r, n.field).(type) {
	case []string:
		return contains(v, strings.ToLower(n.lit)) || contains(v, n.lit)
	case string:
		return strings.Contains(v, n.lit)
	case []any:
		for _, x := range v {
			if fmt.Sprint(x) == n.lit {
				return true
			}
		}
	}
	return false
}

func (n cmpNode) eval(r *Record) bool {
	v := fieldValue(r, n.field)
	var c int
	switch lit := n.lit.(type) {
	case float64:
		f, ok := toFloat(v)
		if !ok {
			return n.op == "!="
		}
		c = cmpFloat(f, lit)
	case bool:
		b, ok := v.(bool)
		if !ok {
			return n.op == "!="
		}
		if b == lit {
			c = 0
		} else {
			c = 1
		}
	default:
		s, ok := v.(string)
		if !ok {
			if v == nil {
				s = ""
			} else {
				s = fmt.Sprint(v)
			}
		}
		c = strings.Compare(s, lit.(string))
	}
	switch n.op {
	case "==":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

func fieldValue(r *Record, field string) any {
	switch field {
	case "id":
		return r.ID
	case "area":
		return r.Area
	case "key":
		return r.Key
	case "text", "content":
		return r.Text
	case "status":
		return string(r.Status)
	case "tags":
		return r.Tags
	case "importance":
		return r.Importance
	case "access_count":
		return r.AccessCount
	case "created":
		return r.Created.UTC().Format(time.RFC3339Nano)
	case "updated", "timestamp":
		return r.Updated.UTC().Format(time.RFC3339Nano)
	}
	return r.Metadata[field]
}

// Match reports whether the expression admits r.
func (e FilterExpr) Match(r *Record) bool {
	if e.root == nil {
		return true
	}
	return e.root.eval(r)
}

// ParseFilter parses a filter expression; the error points at the offending token.
func ParseFilter(src string) (FilterExpr, error) {
	if strings.TrimSpace(src) == "" {
		return FilterExpr{}, nil
	}
	toks, err := lexFilter(src)
	if err != nil {
		return FilterExpr{}, err
	}
	p := &filterParser{src: src, toks: toks}
	n, err := p.or()
	if err != nil {
		return FilterExpr{}, err
	}
	if p.pos < len(p.toks) {
		return FilterExpr{}, p.errorf("unexpected %q", p.toks[p.pos].text)
	}
	return FilterExpr{root: n}, nil
}

// namesLibrary reports whether an expression compares area with 'library', in
// which case the isolated library area must be searched too.
func namesLibrary(src string) bool {
	e, err := ParseFilter(src)
	if err != nil || e.root == nil {
		return false
	}
	found := false
	var walk func(n node)
	walk = func(n node) {
		switch x := n.(type) {
		case andNode:
			walk(x.a)
			walk(x.b)
		case orNode:
			walk(x.a)
			walk(x.b)
		case notNode:
			walk(x.a)
		case cmpNode:
			if x.field == "area" && x.lit == AreaLibrary {
				found = true
			}
		}
	}
	walk(e.root)
	return found
}

type token struct {
	kind string // ident, string, number, op, lparen, rparen
	text string
	pos  int
}

func lexFilter(src string) ([]token, error) {
	var toks []token
	for i := 0; i < len(src); {
		c := rune(src[i])
		switch {
		case unicode.IsSpace(c):
			i++
		case c == '(' || c == ')':
			kind := "lparen"
			if c == ')' {
				kind = "rparen"
			}
			toks = append(toks, token{kind, string(c), i})
			i++
		case c == '\'' || c == '"':
			j := i + 1
			var b strings.Builder
			for j < len(src) && rune(src[j]) != c {
				if src[j] == '\\' && j+1 < len(src) {
					j++
				}
				b.WriteByte(src[j])
				j++
			}
			if j >= len(src) {
				return nil, fmt.Errorf("filter %q: unterminated string at %d", src, i)
			}
			toks = append(toks, token{"string", b.String(), i})
			i = j + 1
		case strings.ContainsRune("=!<>", c):
			j := i + 1
			if j < len(src) && src[j] == '=' {
				j++
			}
			op := src[i:j]
			if op == "=" || op == "!" {
				return nil, fmt.Errorf("filter %q: %q at %d is not an operator (use == or !=)", src, op, i)
			}
			toks = append(toks, token{"op", op, i})
			i = j
		case c == '-' || c == '.' || unicode.IsDigit(c):
			j := i + 1
			for j < len(src) && (unicode.IsDigit(rune(src[j])) || src[j] == '.' || src[j] == 'e' || src[j] == 'E') {
				j++
			}
			toks = append(toks, token{"number", src[i:j], i})
			i = j
		case unicode.IsLetter(c) || c == '_':
			j := i + 1
			for j < len(src) && (unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j])) || src[j] == '_' || src[j] == '.') {
				j++
			}
			toks = append(toks, token{"ident", src[i:j], i})
			i = j
		default:
			return nil, fmt.Errorf("filter %q: unexpected %q at %d", src, c, i)
		}
	}
	return toks, nil
}

type filterParser struct {
	src  string
	toks []token
	pos  int
}

func (p *filterParser) errorf(format string, args ...any) error {
	at := len(p.src)
	if p.pos < len(p.toks) {
		at = p.toks[p.pos].pos
	}
	return fmt.Errorf("filter %q at %d: %s", p.src, at, fmt.Sprintf(format, args...))
}

func (p *filterParser) peekWord(w string) bool {
	return p.pos < len(p.toks) && p.toks[p.pos].kind == "ident" && strings.EqualFold(p.toks[p.pos].text, w)
}

func (p *filterParser) or() (node, error) {
	a, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.peekWord("or") {
		p.pos++
		b, err := p.and()
		if err != nil {
			return nil, err
		}
		a = orNode{a, b}
	}
	return a, nil
}

func (p *filterParser) and() (node, error) {
	a, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.peekWord("and") {
		p.pos++
		b, err := p.unary()
		if err != nil {
			return nil, err
		}
		a = andNode{a, b}
	}
	return a, nil
}

func (p *filterParser) unary() (node, error) {
	if p.peekWord("not") {
		p.pos++
		a, err := p.unary()
		if err != nil {
			return nil, err
		}
		return notNode{a}, nil
	}
	if p.pos < len(p.toks) && p.toks[p.pos].kind == "lparen" {
		p.pos++
		a, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.pos >= len(p.toks) || p.toks[p.pos].kind != "rparen" {
			return nil, p.errorf("missing )")
		}
		p.pos++
		return a, nil
	}
	return p.comparison()
}

func (p *filterParser) literal() (any, error) {
	if p.pos >= len(p.toks) {
		return nil, p.errorf("a value is missing")
	}
	t := p.toks[p.pos]
	p.pos++
	switch t.kind {
	case "string":
		return t.text, nil
	case "number":
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			p.pos--
			return nil, p.errorf("%q is not a number", t.text)
		}
		return f, nil
	case "ident":
		switch strings.ToLower(t.text) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	p.pos--
	return nil, p.errorf("expected a value ('text', a number, True or False), found %q", t.text)
}

func (p *filterParser) comparison() (node, error) {
	if p.pos >= len(p.toks) {
		return nil, p.errorf("a condition is missing")
	}
	t := p.toks[p.pos]
	if t.kind == "string" { // 'x' in field
		p.pos++
		if !p.peekWord("in") {
			return nil, p.errorf("expected in after %q", t.text)
		}
		p.pos++
		if p.pos >= len(p.toks) || p.toks[p.pos].kind != "ident" {
			return nil, p.errorf("expected a field after in")
		}
		f := p.toks[p.pos].text
		p.pos++
		return inNode{lit: t.text, field: f}, nil
	}
	if t.kind != "ident" {
		return nil, p.errorf("expected a field name, found %q", t.text)
	}
	p.pos++
	if p.pos >= len(p.toks) || p.toks[p.pos].kind != "op" {
		if strings.EqualFold(t.text, "true") {
			return trueNode{}, nil
		}
		return nil, p.errorf("expected an operator after %s", t.text)
	}
	op := p.toks[p.pos].text
	p.pos++
	lit, err := p.literal()
	if err != nil {
		return nil, err
	}
	return cmpNode{field: t.text, op: op, lit: lit}, nil
}
