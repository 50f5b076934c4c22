// Package textfacts pulls the facts the built-in extensions reason about out of
// plain text, with fixed, readable rules and no model: the entities of a message
// (for working memory and the ontology), the salient values of a tool output (for
// the evidence ledger and the claim check), sentences and words.
//
// Entity rules, applied in this order; a span claimed by an earlier rule is not
// looked at again:
//
//	url         http:// or https:// up to whitespace, trailing punctuation cut
//	path        starts with /, ./, ../ or ~/ and has a further /; or has a / and
//	            ends in a file extension; or is a file name with a known extension
//	            (main.go, README.md, config.yaml)
//	identifier  a `code span` of at most 60 characters without spaces; dotted
//	            names (pkg.Func, os.path.join); CamelCase or lowerCamel; snake_case
//	name        runs of Capitalised words ("Agent Zero", "Berlin"), an all-caps
//	            acronym of 2 to 6 letters (API, HTTP); a single capitalised word
//	            at the start of a sentence is not a name, nor are common words
//	            (I, The, This, ...)
//
// Value rules (Values): numbers (with a decimal part, a sign, a percent sign),
// paths and URLs as above, code spans, "quoted" and 'quoted' strings of 2 to 80
// characters, the values of key=value and key: value pairs. Values are lower-cased
// for matching.
//
// The text is split into tokens once (at white space, brackets, quotes, commas
// and the like) and each token is classified with cheap checks; only the first
// MaxScan bytes of a text are read.
package textfacts

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Entity kinds.
const (
	KindURL        = "url"
	KindPath       = "path"
	KindIdentifier = "identifier"
	KindName       = "name"
)

// Entity is one entity found in a text.
type Entity struct {
	Text string
	Kind string
}

// MaxEntities bounds what Entities returns for one text.
const MaxEntities = 50

// MaxScan bounds the text scanned: Entities and Values look at its first MaxScan
// bytes (a long tool output names its entities early, and the cost stays bounded).
const MaxScan = 16 << 10

// The patterns, applied to single tokens (the text is split once; running
// unanchored patterns over the whole text is an order of magnitude slower).
// Immutable after compilation, which is why they may be package variables.
var (
	codeRE      = regexp.MustCompile("`([^`\n]{1,60})`")
	dottedRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$`)
	snakeRE     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+$`)
	fileStem    = regexp.MustCompile(`^[\w-]+(?:\.[\w-]+)*$`)
	pathChars   = regexp.MustCompile(`^(?:~|\.{1,2})?/?[\w.@%+~-]+(?:/[\w.@%+~-]*)*$`)
	numberRE    = regexp.MustCompile(`[-+]?\d+(?:[.,]\d+)*%?`)
	extensionRE = regexp.MustCompile(`\.[A-Za-z0-9]{1,6}$`)
)

// fileExts are the extensions that make a bare name a file name.
var fileExts = set("go", "py", "js", "ts", "tsx", "jsx", "md", "json", "yaml", "yml", "toml", "txt", "csv", "tsv", "sh", "bash",
	"rs", "c", "h", "cc", "cpp", "hpp", "java", "kt", "rb", "php", "html", "css", "sql", "proto", "mod", "sum", "lock", "cfg", "ini",
	"conf", "xml", "log", "jsonl", "ipynb", "pdf", "png", "jpg", "svg")

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// stopNames are capitalised words that are not names on their own.
var stopNames = set("I", "The", "This", "That", "These", "Those", "A", "An",
	"It", "Its", "We", "You", "He", "She", "They", "My", "Our", "Your", "If", "When", "Then", "But", "And", "Or",
	"So", "Yes", "No", "Ok", "OK", "Please", "Thanks", "Hi", "Hello", "What", "Why", "How", "Where", "Which", "Who",
	"Let", "Now", "Next", "First", "Also", "Note", "Error", "Result", "Here", "There", "Done", "To", "In", "On", "For",
	"With", "Of", "At", "By", "From", "As", "Is", "Are", "Do", "Does", "Can", "Could", "Should", "Would", "Will",
	"Use", "Run", "Try", "Check", "See", "After", "Before", "Some", "All", "Any", "Each", "Every", "None", "Not",
	// Imperatives that open requests ("Ask Agent Zero" names Agent Zero).
	"Ask", "Tell", "Show", "Give", "Find", "Make", "Write", "Read", "Open", "List", "Explain", "Describe", "Create", "Add", "Remove",
	"Delete", "Fix", "Update", "Get", "Set", "Send", "Call", "Search", "Look", "Compare", "Summarise", "Summarize", "Install", "Build", "Test",
	// Months and days start sentences of logs and dates, not names of things.
	"Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec",
	"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")

// stopAcronyms are all-caps words that carry no entity.
var stopAcronyms = set("OK", "I", "A", "AM", "PM", "TODO", "NOTE")

// token is a piece of text between separators, with its offsets.
type token struct {
	s, e int
	text string
}

// isSep separates tokens: white space and brackets, quotes and commas that
// never belong to a path or an identifier.
func isSep(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '(', ')', '[', ']', '{', '}', '<', '>', '"', '\'', ',', ';', '|', '*', '`':
		return true
	}
	return false
}

// tokens splits text; each token has trailing . : ! ? cut off.
func tokens(text string) []token {
	var out []token
	for i := 0; i < len(text); {
		for i < len(text) && isSep(text[i]) {
			i++
		}
		j := i
		for j < len(text) && !isSep(text[j]) {
			j++
		}
		e := j
		for e > i && strings.IndexByte(".:!?", text[e-1]) >= 0 {
			e--
		}
		if e > i {
			out = append(out, token{i, e, text[i:e]})
		}
		i = j
	}
	return out
}

func isCapWord(w string) bool {
	if len(w) < 2 || w[0] < 'A' || w[0] > 'Z' {
		return false
	}
	for i := 1; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

func isCamel(w string) bool {
	if len(w) < 3 || !isAlnum(w) {
		return false
	}
	lower, upperAfterLower := false, false
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			lower = true
		case c >= 'A' && c <= 'Z':
			if lower && i > 0 {
				upperAfterLower = true
			}
		}
	}
	// CamelCase needs a lower-case run before an inner capital; ALLCAPS is not.
	return upperAfterLower && (w[0] >= 'a' && w[0] <= 'z' || w[1] >= 'a' && w[1] <= 'z')
}

func isAlnum(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func isAcronym(w string) bool {
	w = strings.TrimSuffix(w, "s")
	if len(w) < 2 || len(w) > 6 || stopAcronyms[w] {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'A' || w[i] > 'Z' {
			return false
		}
	}
	return true
}

func isFileName(w string) bool {
	dot := strings.LastIndexByte(w, '.')
	return dot > 0 && fileExts[strings.ToLower(w[dot+1:])] && fileStem.MatchString(w)
}

// Entities returns the entities of text (its first MaxScan bytes) in order of
// first appearance, each text once (the first kind found wins), at most
// MaxEntities.
func Entities(text string) []Entity {
	if len(text) > MaxScan {
		text = text[:MaxScan]
	}
	type hit struct {
		s    int
		text string
		kind string
	}
	var hits []hit
	seen := map[string]bool{}
	add := func(s int, t, kind string) {
		if len(t) < 2 || seen[t] {
			return
		}
		seen[t] = true
		hits = append(hits, hit{s, t, kind})
	}
	// Code spans first: what is quoted as code is an identifier as written.
	inCode := make([]bool, len(text))
	for _, m := range codeRE.FindAllStringSubmatchIndex(text, -1) {
		for k := m[0]; k < m[1]; k++ {
			inCode[k] = true
		}
		if inner := text[m[2]:m[3]]; !strings.ContainsAny(inner, " \t") {
			add(m[2], strings.TrimRight(inner, ".,;:!?"), KindIdentifier)
		}
	}
	toks := tokens(text)
	var names []token
	for _, tk := range toks {
		if inCode[tk.s] {
			continue
		}
		w := strings.TrimLeft(tk.text, "([")
		switch {
		case strings.HasPrefix(w, "http://") || strings.HasPrefix(w, "https://"):
			add(tk.s, w, KindURL)
		case strings.Contains(w, "/") && pathChars.MatchString(w) && isPath(w):
			add(tk.s, w, KindPath)
		case isFileName(w):
			add(tk.s, w, KindPath)
		case strings.Contains(w, ".") && dottedRE.MatchString(w) && isDotted(w):
			add(tk.s, w, KindIdentifier)
		case isCamel(w):
			add(tk.s, w, KindIdentifier)
		case strings.Contains(w, "_") && snakeRE.MatchString(w):
			add(tk.s, w, KindIdentifier)
		case isCapWord(w):
			names = append(names, tk)
		case isAcronym(w):
			add(tk.s, w, KindName)
		}
	}
	// Runs of capitalised words separated by one space or hyphen, without
	// punctuation in between, are one name.
	for i := 0; i < len(names); {
		j := i
		for j+1 < len(names) && names[j].e+1 == names[j+1].s && (text[names[j].e] == ' ' || text[names[j].e] == '-') && names[j].e-names[j].s == len(names[j].text) {
			j++
		}
		run := names[i : j+1]
		for len(run) > 0 && stopNames[run[0].text] {
			run = run[1:]
		}
		for len(run) > 0 && stopNames[run[len(run)-1].text] && len(run) > 1 {
			run = run[:len(run)-1]
		}
		switch {
		case len(run) == 0:
		case len(run) == 1 && (sentenceStart(text, run[0].s) || stopNames[run[0].text]):
		default:
			add(run[0].s, text[run[0].s:run[len(run)-1].e], KindName)
		}
		i = j + 1
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].s < hits[j].s })
	out := make([]Entity, 0, min(len(hits), MaxEntities))
	for _, h := range hits {
		if len(out) == MaxEntities {
			break
		}
		out = append(out, Entity{Text: h.text, Kind: h.kind})
	}
	return out
}

func isPath(s string) bool {
	if strings.Count(s, "/") == 0 {
		return false
	}
	switch {
	case strings.HasPrefix(s, "/"), strings.HasPrefix(s, "./"), strings.HasPrefix(s, "../"), strings.HasPrefix(s, "~/"):
		// "/" alone, or a fraction like 1/2, is not a path.
		return len(strings.Trim(s, "/.~")) > 0 && strings.IndexFunc(s, unicode.IsLetter) >= 0
	}
	// a/b/c.go, but not "and/or" or "1/2".
	return extensionRE.MatchString(s) || strings.Count(s, "/") >= 2 && strings.IndexFunc(s, unicode.IsLetter) >= 0
}

func isDotted(s string) bool {
	// "e.g" and "i.e" are not identifiers.
	low := strings.ToLower(s)
	return low != "e.g" && low != "i.e" && low != "etc" && len(s) >= 4
}

// sentenceStart reports whether position i begins a sentence: only spaces and
// quotes separate it from the start of the text or from . ! ? : or a newline.
func sentenceStart(text string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch c := text[j]; c {
		case ' ', '\t', '"', '\'', '(', '*', '-', '#', '>':
			continue
		case '.', '!', '?', '\n', ':':
			return true
		default:
			return false
		}
	}
	return true
}

// Values returns the salient values of text (its first MaxScan bytes),
// lower-cased, each once, in order of first appearance, at most limit (0: no
// limit).
func Values(text string, limit int) []string {
	if len(text) > MaxScan {
		text = text[:MaxScan]
	}
	var out []string
	seen := map[string]bool{}
	add := func(v string) {
		v = strings.ToLower(strings.TrimSpace(strings.TrimRight(v, ".,;:!?")))
		if v == "" || seen[v] || (limit > 0 && len(out) >= limit) {
			return
		}
		seen[v] = true
		out = append(out, v)
	}
	for _, e := range Entities(text) {
		if e.Kind != KindName {
			add(e.Text)
		}
	}
	// Quoted strings of 2 to 80 characters on one line.
	for i := 0; i < len(text); i++ {
		q := text[i]
		if q != '"' && q != '\'' {
			continue
		}
		end := strings.IndexByte(text[i+1:min(len(text), i+82)], q)
		if end >= 2 && !strings.ContainsRune(text[i+1:i+1+end], '\n') {
			add(text[i+1 : i+1+end])
			i += end + 1
		}
	}
	// key=value and key: value.
	fields := strings.Fields(text)
	for i, f := range fields {
		if k := strings.IndexByte(f, '='); k > 0 && k < len(f)-1 && !strings.Contains(f, "//") {
			add(strings.Trim(f[k+1:], `"',;`))
		} else if strings.HasSuffix(f, ":") && len(f) > 1 && i+1 < len(fields) && !strings.Contains(fields[i+1], "//") {
			add(strings.Trim(fields[i+1], `"',;`))
		}
	}
	for _, f := range fields {
		if strings.IndexFunc(f, unicode.IsDigit) < 0 {
			continue
		}
		for _, m := range numberRE.FindAllString(f, -1) {
			add(NormalizeNumber(m))
		}
	}
	return out
}

// Sentences splits text into sentences at . ! ? followed by a space or newline,
// and at line breaks; list markers and surrounding space are trimmed. A dot inside
// a number, a path or a file name, or after a list number ("1. "), does not split.
func Sentences(text string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		s := strings.TrimSpace(b.String())
		s = strings.TrimLeft(s, "-*•> ")
		s = strings.TrimSpace(s)
		if s != "" {
			out = append(out, s)
		}
		b.Reset()
	}
	rs := []rune(text)
	for i, r := range rs {
		if r == '\n' {
			flush()
			continue
		}
		b.WriteRune(r)
		if (r == '.' || r == '!' || r == '?') && (i+1 == len(rs) || rs[i+1] == ' ' || rs[i+1] == '\n') && !listNumber(b.String()) {
			flush()
		}
	}
	flush()
	return out
}

// listNumber reports whether s is a list marker like "1." or "12)".
func listNumber(s string) bool {
	s = strings.TrimSpace(s)
	s = strings.TrimRight(s, ".)")
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// Words returns the lower-cased words of text (letters and digits; _ and - join).
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-'
	})
}

// Jaccard is the word-set overlap of two texts, in [0, 1].
func Jaccard(a, b string) float64 {
	wa, wb := map[string]bool{}, map[string]bool{}
	for _, w := range Words(a) {
		wa[w] = true
	}
	for _, w := range Words(b) {
		wb[w] = true
	}
	if len(wa) == 0 && len(wb) == 0 {
		return 1
	}
	inter := 0
	for w := range wa {
		if wb[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(wa)+len(wb)-inter)
}

// Shorten cuts s to at most n runes on a word boundary, adding "…" when cut.
func Shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := string(r[:n])
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return cut + "…"
}

// NormalizeNumber writes a number the way Values does: no plus sign, no
// thousands commas ("1,024" is "1024"), so a claim and an output compare equal.
func NormalizeNumber(s string) string {
	s = strings.TrimPrefix(s, "+")
	if strings.Count(s, ",") >= 1 && !strings.Contains(s, ".") {
		parts := strings.Split(strings.TrimSuffix(s, "%"), ",")
		ok := len(parts) > 1
		for _, p := range parts[1:] {
			if len(p) != 3 {
				ok = false
			}
		}
		if ok {
			pct := ""
			if strings.HasSuffix(s, "%") {
				pct = "%"
			}
			return strings.Join(parts, "") + pct
		}
	}
	return s
}

// Numbers returns the numbers of text, normalised as Values writes them.
func Numbers(text string) []string {
	var out []string
	for _, f := range strings.Fields(text) {
		if strings.IndexFunc(f, unicode.IsDigit) < 0 {
			continue
		}
		for _, m := range numberRE.FindAllString(f, -1) {
			out = append(out, NormalizeNumber(m))
		}
	}
	return out
}
