package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// ToolRequest is the one tool call a reply asks for: the Agent Zero reply
// format
//
//	{"thoughts": ["..."], "headline": "...", "tool_name": "...", "tool_args": {...}}
//
// or a native tool call.
type ToolRequest struct {
	// Thoughts are the model's reasoning steps, as it wrote them.
	Thoughts []string
	// Headline is a short status line for the step ("" if none).
	Headline string
	// ToolName is the tool to run, trimmed; never "".
	ToolName string
	// ToolArgs is a compact JSON object, "{}" when the reply gave none.
	ToolArgs json.RawMessage
	// Native is true when the request came from a native tool call.
	Native bool
	// CallID is the native tool call's identifier, "" otherwise.
	CallID string
	// Repairs lists what the lenient parser had to fix or ignore, e.g.
	// "removed a trailing comma"; empty for a well-formed reply. Worth logging:
	// a model that needs many repairs is a model near its limit.
	Repairs []string
}

// Fault names why a reply is unusable.
type Fault string

// The faults ParseReply reports.
const (
	// FaultEmpty: no text at all (or only a thinking block).
	FaultEmpty Fault = "empty"
	// FaultNoObject: text, but no '{' where a JSON object could start.
	FaultNoObject Fault = "no_json_object"
	// FaultInvalidJSON: an object that no repair made valid; Offset points at
	// the first bad byte.
	FaultInvalidJSON Fault = "invalid_json"
	// FaultTruncated: the reply ends inside an unfinished object, usually
	// because generation hit num_predict or the context window.
	FaultTruncated Fault = "truncated"
	// FaultMissingToolName: a valid object without tool_name (or tool).
	FaultMissingToolName Fault = "missing_tool_name"
	// FaultBadToolArgs: tool_args is present but not an object.
	FaultBadToolArgs Fault = "bad_tool_args"
)

var faultTitle = map[Fault]string{
	FaultEmpty:           "empty reply",
	FaultNoObject:        "no JSON object",
	FaultInvalidJSON:     "invalid JSON",
	FaultTruncated:       "truncated reply",
	FaultMissingToolName: "missing tool_name",
	FaultBadToolArgs:     "bad tool_args",
}

// ParseError says exactly why a reply is unusable. Its message is written for
// the operator and for the model alike (the loop may put it in the correction
// message), and names the place in the reply.
type ParseError struct {
	Fault Fault
	// Offset is the byte offset in the reply's content where the problem
	// was found, -1 when it has no place (an empty reply).
	Offset int
	// Line and Column locate Offset (1-based; Column counts characters);
	// both 0 when Offset is -1.
	Line, Column int
	// Detail describes what was found.
	Detail string
}

func (e *ParseError) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("%s: %s", faultTitle[e.Fault], e.Detail)
	}
	return fmt.Sprintf("%s at offset %d (line %d, column %d): %s", faultTitle[e.Fault], e.Offset, e.Line, e.Column, e.Detail)
}

func newParseError(text string, fault Fault, offset int, format string, args ...any) *ParseError {
	e := &ParseError{Fault: fault, Offset: offset, Detail: fmt.Sprintf(format, args...)}
	if offset >= 0 {
		offset = min(offset, len(text))
		e.Offset = offset
		before := text[:offset]
		e.Line = strings.Count(before, "\n") + 1
		e.Column = utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:]) + 1
	}
	return e
}

// ParseReply returns the tool request in r. Native tool calls take precedence:
// when the model made any, the first is the request (Reply.ToolCalls keeps
// them all) and the content, if any, becomes its thoughts. Otherwise the
// content is parsed with ParseText. Errors are always a *ParseError.
func ParseReply(r Reply) (ToolRequest, error) {
	if len(r.ToolCalls) > 0 {
		return fromNative(r)
	}
	if strings.TrimSpace(r.Content) == "" && strings.TrimSpace(r.Thinking) != "" {
		if r.Truncated() {
			return ToolRequest{}, newParseError(r.Content, FaultTruncated, 0,
				"the reply is %d bytes of thinking cut off before any answer%s", len(r.Thinking), limitHint(true))
		}
		return ToolRequest{}, newParseError(r.Content, FaultEmpty, -1,
			"the reply has %d bytes of thinking but no answer after it", len(r.Thinking))
	}
	return parseText(r.Content, r.Truncated())
}

// ParseText finds the tool request in a reply's text, leniently: it skips
// <think> blocks, prose and code fences around the object, takes the object
// from its first '{' to the matching '}', and repairs trailing commas, single
// quotes, bare keys, Python literals, raw line breaks and stray quotes inside
// strings, and missing closing brackets at the very end. It accepts "tool" for
// tool_name and "args" for tool_args, a tool_args given as a JSON string, and
// no tool_args at all. It does not guess at a reply cut off in the middle of
// a value: running a tool with half its arguments is worse than asking again.
// Errors are always a *ParseError.
func ParseText(text string) (ToolRequest, error) { return parseText(text, false) }

func fromNative(r Reply) (ToolRequest, error) {
	tc := r.ToolCalls[0]
	req := ToolRequest{ToolName: strings.TrimSpace(tc.Name), Native: true, CallID: tc.ID}
	if req.ToolName == "" {
		return ToolRequest{}, newParseError(r.Content, FaultMissingToolName, -1, "the first native tool call has no name")
	}
	args := bytes.TrimSpace(tc.Arguments)
	switch {
	case len(args) == 0 || string(args) == "null":
		req.ToolArgs = json.RawMessage("{}")
	case args[0] == '{' && json.Valid(args):
		var b bytes.Buffer
		json.Compact(&b, args) //nolint:errcheck // valid, checked above
		req.ToolArgs = b.Bytes()
	default:
		return ToolRequest{}, newParseError(r.Content, FaultBadToolArgs, -1, "the arguments of native tool call %q are not a JSON object: %s", req.ToolName, clip(string(args), 60))
	}
	if len(r.ToolCalls) > 1 {
		req.Repairs = append(req.Repairs, fmt.Sprintf("used the first of %d native tool calls", len(r.ToolCalls)))
	}
	// Text next to a native call is the model thinking aloud; a JSON reply
	// there may carry proper thoughts and a headline.
	if content := strings.TrimSpace(r.Content); content != "" {
		if inner, err := parseText(content, false); err == nil {
			req.Thoughts, req.Headline = inner.Thoughts, inner.Headline
		} else {
			req.Thoughts = []string{content}
		}
	}
	return req, nil
}

// maxStarts bounds how many '{' positions are tried.
const maxStarts = 64

func parseText(text string, cutByLimit bool) (ToolRequest, error) {
	if strings.TrimSpace(text) == "" {
		return ToolRequest{}, newParseError(text, FaultEmpty, -1, "the model sent no text")
	}
	from := 0
	if i := strings.LastIndex(text, "</think>"); i >= 0 {
		from = i + len("</think>")
	} else if i := strings.Index(text, "<think>"); i >= 0 && strings.TrimSpace(text[:i]) == "" {
		return ToolRequest{}, newParseError(text, FaultTruncated, len(text), "the reply is a <think> block that never ends, with no answer after it%s", limitHint(cutByLimit))
	}
	if strings.TrimSpace(text[from:]) == "" {
		return ToolRequest{}, newParseError(text, FaultEmpty, -1, "the reply has a <think> block but no answer after it")
	}

	// Try each '{' that can open an object, left to right. After a failed
	// object the search resumes behind it: the objects inside one are its
	// arguments, or drafts in its thoughts, never the request.
	var first *ParseError
	starts := 0
	for i := from; i < len(text) && starts < maxStarts; i++ {
		if text[i] != '{' || !opensObject(text, i) {
			continue
		}
		starts++
		req, perr, next := tryObject(text, from, i, cutByLimit, first == nil)
		if perr == nil {
			return req, nil
		}
		if first == nil {
			first = perr
		}
		if next < 0 {
			break
		}
		i = next
	}
	if first == nil {
		return ToolRequest{}, newParseError(text, FaultNoObject, -1, "the reply is plain text, not a JSON object: %q", clip(strings.TrimSpace(text[from:]), 80))
	}
	return ToolRequest{}, first
}

// opensObject reports whether the '{' at text[i] can start a reply object:
// what follows is a key (quoted, or a bare word before a colon) or '}'. This
// keeps braces in prose ("the {tool} syntax") from being taken for JSON.
func opensObject(text string, i int) bool {
	j := skipSpace(text, i+1)
	if j >= len(text) {
		return true // cut off right after the brace
	}
	switch c := text[j]; {
	case c == '"' || c == '\'' || c == '}' || c == '/': // '/' starts a comment
		return true
	case isIdentStart(c):
		k := j
		for k < len(text) && isIdent(text[k]) {
			k++
		}
		k = skipSpace(text, k)
		return k < len(text) && text[k] == ':'
	}
	return false
}

// tryObject parses the object starting at text[start], trying the matching
// '}' and then, when widen is set, the last '}' of the text (for a matcher
// misled by a stray quote). On failure, next is where the search for another
// object may resume, -1 when the object runs to the end of the text.
func tryObject(text string, from, start int, cutByLimit, widen bool) (_ ToolRequest, _ *ParseError, next int) {
	m := match(text, start)
	var repairs repairs
	if !m.closed {
		if m.inString || cutByLimit {
			return ToolRequest{}, newParseError(text, FaultTruncated, len(text),
				"the reply ends inside an unfinished JSON object that opened at offset %d%s", start, limitHint(cutByLimit)), -1
		}
		// The model stopped by itself after a complete value and forgot
		// closing brackets: close them.
		closers := make([]byte, 0, len(m.stack))
		for i := len(m.stack) - 1; i >= 0; i-- {
			closers = append(closers, m.stack[i]+2) // '{'+2 == '}', '['+2 == ']'
		}
		repairs.add(fmt.Sprintf("added %d missing closing bracket(s) at the end", len(closers)))
		req, perr := parseObject(text, start, text[start:]+string(closers), repairs)
		if perr != nil {
			perr.Fault = FaultTruncated
			perr.Detail = "the reply ends inside an unfinished JSON object; " + perr.Detail
			return ToolRequest{}, perr, -1
		}
		return req, nil, 0
	}
	end := m.end
	req, perr := parseObject(text, start, text[start:end+1], repairs)
	if perr != nil {
		last := strings.LastIndexByte(text, '}')
		if !widen || last <= end {
			return ToolRequest{}, perr, end
		}
		alt, altErr := parseObject(text, start, text[start:last+1], repairs)
		if altErr != nil {
			return ToolRequest{}, perr, end
		}
		req, end = alt, last
	}
	before, after := strings.TrimSpace(text[from:start]), strings.TrimSpace(text[end+1:])
	if strings.HasPrefix(after, "```") && strings.HasSuffix(strings.TrimRight(before, "jsonJSON"), "```") {
		req.Repairs = append(req.Repairs, "removed a Markdown code fence")
		before = strings.TrimSpace(strings.TrimSuffix(strings.TrimRight(before, "jsonJSON"), "```"))
		after = strings.TrimSpace(strings.TrimPrefix(after, "```"))
	}
	if before != "" {
		req.Repairs = append(req.Repairs, "ignored text before the JSON object")
	}
	if after != "" {
		req.Repairs = append(req.Repairs, "ignored text after the JSON object")
	}
	return req, nil, 0
}

func limitHint(cutByLimit bool) string {
	if cutByLimit {
		return ` (generation stopped at the length limit, done_reason "length": raise num_predict or num_ctx)`
	}
	return ""
}

// matched is the result of match.
type matched struct {
	end      int    // index of the closing '}' when closed
	closed   bool   // the object closes before the text ends
	stack    []byte // open '{' and '[' at the end of the text when not closed
	inString bool   // the text ends inside a string
}

// match finds the '}' closing the object that opens at text[start], aware of
// strings in either quote and of escapes. A quote that does not look like the
// end of its string (see closesString) is taken as part of it, as normalize
// does, so both agree on where strings end.
func match(text string, start int) matched {
	var stack []byte
	var quote byte
	for i := start; i < len(text); i++ {
		c := text[i]
		if quote != 0 {
			switch {
			case c == '\\':
				i++
			case c == quote && closesString(text, i, top(stack)):
				quote = 0
			}
			continue
		}
		switch c {
		case '"', '\'':
			quote = c
		case '{', '[':
			stack = append(stack, c)
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			if len(stack) == 0 {
				return matched{end: i, closed: true}
			}
		}
	}
	return matched{stack: stack, inString: quote != 0}
}

// closesString reports whether the quote at s[i] ends its string, given the
// innermost open bracket (top). It does when what follows, after spaces, can
// follow a string there: the end of the text; the bracket that closes top; a
// colon in an object; a comma followed by the start of a value or key; or,
// after a space, another quote (a missing comma or colon). Otherwise it is a
// quote the model forgot to escape, as in "code": "print("a", b)".
func closesString(s string, i int, top byte) bool {
	k := skipSpace(s, i+1)
	if k >= len(s) {
		return true
	}
	switch s[k] {
	case '}', ':':
		return top == '{'
	case ']':
		return top == '['
	case ',':
		return startsValue(s, skipSpace(s, k+1), top)
	case '"':
		return k > i+1
	}
	return false
}

// startsValue reports whether s[j] can begin what follows a comma inside top:
// a key in an object, a value in a list (or a closing bracket, for a trailing
// comma).
func startsValue(s string, j int, top byte) bool {
	if j >= len(s) {
		return true
	}
	c := s[j]
	switch {
	case c == '"' || c == '\'' || c == '{' || c == '[' || c == '}' || c == ']' || c == '-' || (c >= '0' && c <= '9'):
		return true
	case isIdentStart(c):
		k := j
		for k < len(s) && isIdent(s[k]) {
			k++
		}
		if top == '{' {
			return skipSpace(s, k) < len(s) && s[skipSpace(s, k)] == ':' // a bare key
		}
		switch s[j:k] {
		case "true", "false", "null", "True", "False", "None":
			return true
		}
	}
	return false
}

// top returns the innermost open bracket, 0 for none.
func top(stack []byte) byte {
	if len(stack) == 0 {
		return 0
	}
	return stack[len(stack)-1]
}

// parseObject normalises src (the object text, which starts at text[start])
// into strict JSON and reads the reply fields from it.
func parseObject(text string, start int, src string, rep repairs) (ToolRequest, *ParseError) {
	out, pos, fixes := normalize(src)
	rep = append(slices.Clone(rep), fixes...)
	at := func(i int) int { // output index -> offset in text
		if len(pos) == 0 {
			return start
		}
		return start + pos[min(max(i, 0), len(pos)-1)]
	}

	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		var syn *json.SyntaxError
		switch {
		case errors.As(err, &syn):
			off := at(int(syn.Offset) - 1)
			return ToolRequest{}, newParseError(text, FaultInvalidJSON, off, "%s, near `%s`", syn.Error(), near(text, off))
		case errors.Is(err, io.ErrUnexpectedEOF):
			return ToolRequest{}, newParseError(text, FaultTruncated, start+len(src), "the JSON object is not complete")
		default:
			return ToolRequest{}, newParseError(text, FaultInvalidJSON, start, "%v", err)
		}
	}

	var req ToolRequest
	nameRaw, nameKey := pick(obj, "tool_name", "tool")
	if nameKey == "tool" {
		rep.add(`read "tool" as tool_name`)
	}
	var name string
	if nameRaw != nil {
		if err := json.Unmarshal(nameRaw, &name); err != nil {
			return ToolRequest{}, newParseError(text, FaultMissingToolName, start, "%s is %s, not a string", nameKey, kind(nameRaw))
		}
	}
	req.ToolName = strings.TrimSpace(name)
	if req.ToolName == "" {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return ToolRequest{}, newParseError(text, FaultMissingToolName, start,
			"the JSON object has no tool_name naming the tool to call (keys found: %s)", strings.Join(keys, ", "))
	}

	argsRaw, argsKey := pick(obj, "tool_args", "args")
	if argsKey == "args" {
		rep.add(`read "args" as tool_args`)
	}
	switch k := kind(argsRaw); k {
	case "missing", "null":
		req.ToolArgs = json.RawMessage("{}")
	case "an object":
		var b bytes.Buffer
		json.Compact(&b, argsRaw) //nolint:errcheck // it decoded, so it is valid
		req.ToolArgs = b.Bytes()
	case "a string":
		var s string
		json.Unmarshal(argsRaw, &s) //nolint:errcheck // kind checked it
		inner, _, _ := normalize(strings.TrimSpace(s))
		var b bytes.Buffer
		if !strings.HasPrefix(strings.TrimSpace(s), "{") || json.Compact(&b, inner) != nil {
			return ToolRequest{}, newParseError(text, FaultBadToolArgs, start, "tool_args of %q is a string, not an object: %q", req.ToolName, clip(s, 60))
		}
		req.ToolArgs = b.Bytes()
		rep.add("parsed tool_args from a JSON string")
	default:
		return ToolRequest{}, newParseError(text, FaultBadToolArgs, start, "tool_args of %q is %s, not an object", req.ToolName, k)
	}

	if raw, _ := pick(obj, "thoughts"); raw != nil {
		var list []json.RawMessage
		var one string
		switch {
		case json.Unmarshal(raw, &list) == nil:
			for _, item := range list {
				req.Thoughts = append(req.Thoughts, textOf(item))
			}
		case json.Unmarshal(raw, &one) == nil:
			req.Thoughts = []string{one}
		default:
			req.Thoughts = []string{textOf(raw)}
		}
	}
	if raw, _ := pick(obj, "headline"); raw != nil {
		req.Headline = textOf(raw)
	}
	req.Repairs = rep
	return req, nil
}

// pick returns the value of the first key present, and that key.
func pick(obj map[string]json.RawMessage, keys ...string) (json.RawMessage, string) {
	for _, k := range keys {
		if v, ok := obj[k]; ok {
			return v, k
		}
	}
	return nil, ""
}

// kind names the JSON type of raw for error messages.
func kind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "missing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// textOf returns a JSON string's text, or any other value's JSON.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// near shows the text around offset off on one line.
func near(text string, off int) string {
	lo, hi := max(0, off-20), min(len(text), off+20)
	for lo > 0 && !utf8.RuneStart(text[lo]) {
		lo--
	}
	for hi < len(text) && !utf8.RuneStart(text[hi]) {
		hi++
	}
	return strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`, "`", "'").Replace(text[lo:hi])
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// repairs is an ordered set of repair notes.
type repairs []string

func (r *repairs) add(note string) {
	if !slices.Contains(*r, note) {
		*r = append(*r, note)
	}
}

// normalize rewrites the near-JSON a model wrote into strict JSON. pos maps
// each output byte to the input byte it came from, so a syntax error can be
// reported at its place in the reply. fixes lists the repairs made.
func normalize(src string) (out []byte, pos []int, fixes repairs) {
	out = make([]byte, 0, len(src)+16)
	pos = make([]int, 0, len(src)+16)
	emit := func(at int, bs ...byte) {
		for _, b := range bs {
			out = append(out, b)
			pos = append(pos, at)
		}
	}
	n := len(src)
	var stack []byte
	for i := 0; i < n; {
		c := src[i]
		switch {
		case c == '"' || c == '\'':
			if c == '\'' {
				fixes.add("turned single-quoted strings into double-quoted ones")
			}
			emit(i, '"')
			j := i + 1
			for ; j < n; j++ {
				d := src[j]
				if d == '\\' {
					if j+1 >= n {
						emit(j, '\\', '\\')
						continue
					}
					e := src[j+1]
					switch {
					case e == '\'':
						emit(j, '\'')
					case strings.IndexByte(`"\/bfnrtu`, e) >= 0:
						emit(j, '\\', e)
					default:
						fixes.add("escaped a stray backslash inside a string")
						emit(j, '\\', '\\', e)
					}
					j++
					continue
				}
				if d == c {
					if closesString(src, j, top(stack)) {
						break
					}
					fixes.add("escaped a quote inside a string")
					emit(j, '\\', '"')
					continue
				}
				switch {
				case d == '"': // inside a single-quoted string
					emit(j, '\\', '"')
				case d == '\n':
					fixes.add("escaped a line break inside a string")
					emit(j, '\\', 'n')
				case d == '\r':
					emit(j, '\\', 'r')
				case d == '\t':
					emit(j, '\\', 't')
				case d < 0x20:
					emit(j, []byte(fmt.Sprintf(`\u%04x`, d))...)
				default:
					emit(j, d)
				}
			}
			emit(min(j, n-1), '"')
			i = j + 1
		case c == ',':
			j := skipSpace(src, i+1)
			if j < n && (src[j] == '}' || src[j] == ']') {
				fixes.add("removed a trailing comma")
				i++
				continue
			}
			emit(i, c)
			i++
		case c == '/' && i+1 < n && (src[i+1] == '/' || src[i+1] == '*'):
			fixes.add("removed a comment")
			if src[i+1] == '/' {
				if k := strings.IndexByte(src[i:], '\n'); k >= 0 {
					i += k
				} else {
					i = n
				}
			} else if k := strings.Index(src[i+2:], "*/"); k >= 0 {
				i += k + 4
			} else {
				i = n
			}
		case isIdentStart(c):
			j := i
			for j < n && isIdent(src[j]) {
				j++
			}
			word := src[i:j]
			switch word {
			case "true", "false", "null":
				emit(i, []byte(word)...)
			case "True", "False", "None":
				fixes.add("turned Python literals into JSON ones")
				lit := map[string]string{"True": "true", "False": "false", "None": "null"}[word]
				emit(i, []byte(lit)...)
			default:
				if k := skipSpace(src, j); k < n && src[k] == ':' {
					fixes.add("quoted bare keys")
					emit(i, '"')
					emit(i, []byte(word)...)
					emit(j-1, '"')
				} else {
					emit(i, []byte(word)...) // invalid; the decoder reports it here
				}
			}
			i = j
		default:
			switch c {
			case '{', '[':
				stack = append(stack, c)
			case '}', ']':
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			}
			emit(i, c)
			i++
		}
	}
	return out, pos, fixes
}

// skipSpace returns the index of the first byte at or after i that is neither
// white space nor inside a // or /* */ comment.
func skipSpace(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r':
			i++
		case strings.HasPrefix(s[i:], "//"):
			k := strings.IndexByte(s[i:], '\n')
			if k < 0 {
				return len(s)
			}
			i += k + 1
		case strings.HasPrefix(s[i:], "/*"):
			k := strings.Index(s[i+2:], "*/")
			if k < 0 {
				return len(s)
			}
			i += k + 4
		default:
			return i
		}
	}
	return i
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdent(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }
