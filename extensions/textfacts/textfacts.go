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

// The patterns. Built per call would be wasteful; these are immutable after
// compilation, which is why they may be package variables.
var (
	urlRE       = regexp.MustCompile(`https?://[^\s<>"'\x60)\]]+`)
	pathRE      = regexp.MustCompile(`(?:~|\.{1,2})?/[\w.@%+~-]+(?:/[\w.@%+~-]*)*|[\w.@%+~-]+(?:/[\w.@%+~-]+)+`)
	fileRE      = regexp.MustCompile(`\b[\w-]+(?:\.[\w-]+)*\.(?:go|py|js|ts|tsx|jsx|md|json|yaml|yml|toml|txt|csv|tsv|sh|bash|rs|c|h|cc|cpp|hpp|java|kt|rb|php|html|css|sql|proto|mod|sum|lock|cfg|ini|conf|xml|log|jsonl|ipynb|pdf|png|jpg|svg)\b`)
	codeRE      = regexp.MustCompile("`([^`\n]{1,60})`")
	camelRE     = regexp.MustCompile(`\b(?:[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*)\b`)
	snakeRE     = regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b`)
	dottedRE    = regexp.MustCompile(`\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\b`)
	capsRunRE   = regexp.MustCompile(`\b[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*\b`)
	acronymRE   = regexp.MustCompile(`\b[A-Z]{2,6}s?\b`)
	numberRE    = regexp.MustCompile(`[-+]?\d+(?:[.,]\d+)*%?`)
	quotedRE    = regexp.MustCompile(`"([^"\n]{2,80})"|'([^'\n]{2,80})'`)
	keyValueRE  = regexp.MustCompile(`\b[\w.-]+\s*(?:=|:)\s*([^\s,;]+)`)
	extensionRE = regexp.MustCompile(`\.[A-Za-z0-9]{1,6}$`)
)

// stopNames are capitalised words that are not names on their own.
var stopNames = map[string]bool{
	"I": true, "The": true, "This": true, "That": true, "These": true, "Those": true, "A": true, "An": true,
	"It": true, "Its": true, "We": true, "You": true, "He": true, "She": true, "They": true, "My": true,
	"Our": true, "Your": true, "If": true, "When": true, "Then": true, "But": true, "And": true, "Or": true,
	"So": true, "Yes": true, "No": true, "Ok": true, "OK": true, "Please": true, "Thanks": true, "Hi": true,
	"Hello": true, "What": true, "Why": true, "How": true, "Where": true, "Which": true, "Who": true,
	"Let": true, "Now": true, "Next": true, "First": true, "Also": true, "Note": true, "Error": true,
	"Result": true, "Here": true, "There": true, "Done": true, "To": true, "In": true, "On": true, "For": true,
	"With": true, "Of": true, "At": true, "By": true, "From": true, "As": true, "Is": true, "Are": true,
	"Do": true, "Does": true, "Can": true, "Could": true, "Should": true, "Would": true, "Will": true,
	"Use": true, "Run": true, "Try": true, "Check": true, "See": true, "After": true, "Before": true,
	"Some": true, "All": true, "Any": true, "Each": true, "Every": true, "None": true, "Not": true,
	// Imperatives that open requests ("Ask Agent Zero" names Agent Zero).
	"Ask": true, "Tell": true, "Show": true, "Give": true, "Find": true, "Make": true, "Write": true, "Read": true,
	"Open": true, "List": true, "Explain": true, "Describe": true, "Create": true, "Add": true, "Remove": true,
	"Delete": true, "Fix": true, "Update": true, "Get": true, "Set": true, "Send": true, "Call": true, "Search": true,
	"Look": true, "Compare": true, "Summarise": true, "Summarize": true, "Install": true, "Build": true, "Test": true,
}

// stopAcronyms are all-caps words that carry no entity.
var stopAcronyms = map[string]bool{"OK": true, "I": true, "A": true, "AM": true, "PM": true, "TODO": true, "NOTE": true}

type span struct{ start, end int }

type claimed []span

func (c claimed) overlaps(s, e int) bool {
	for _, sp := range c {
		if s < sp.end && e > sp.start {
			return true
		}
	}
	return false
}

// Entities returns the entities of text in order of first appearance, each text
// once (the first kind found wins), at most MaxEntities.
func Entities(text string) []Entity {
	var out []Entity
	seen := map[string]bool{}
	var taken claimed
	add := func(s, e int, kind string) {
		if taken.overlaps(s, e) {
			return
		}
		t := strings.TrimRight(text[s:e], ".,;:!?")
		if len(t) < 2 || seen[t] {
			taken = append(taken, span{s, e})
			return
		}
		seen[t] = true
		taken = append(taken, span{s, e})
		out = append(out, Entity{Text: t, Kind: kind})
	}
	type hit struct {
		s, e int
		kind string
	}
	var hits []hit
	collect := func(re *regexp.Regexp, kind string, keep func(string) bool) {
		for _, m := range re.FindAllStringIndex(text, -1) {
			if keep == nil || keep(text[m[0]:m[1]]) {
				hits = append(hits, hit{m[0], m[1], kind})
			}
		}
	}
	// Rules in priority order; positions are sorted afterwards within a rule's
	// claims, but a span's kind is decided by the first rule that claims it.
	rules := []func(){
		func() { collect(urlRE, KindURL, nil) },
		func() { collect(pathRE, KindPath, isPath) },
		func() { collect(fileRE, KindPath, nil) },
		func() {
			for _, m := range codeRE.FindAllStringSubmatchIndex(text, -1) {
				if !strings.ContainsAny(text[m[2]:m[3]], " \t") {
					hits = append(hits, hit{m[2], m[3], KindIdentifier})
				}
			}
		},
		func() { collect(dottedRE, KindIdentifier, isDotted) },
		func() { collect(camelRE, KindIdentifier, nil) },
		func() { collect(snakeRE, KindIdentifier, nil) },
		func() {
			for _, m := range capsRunRE.FindAllStringIndex(text, -1) {
				s, e := m[0], m[1]
				words := strings.Fields(strings.ReplaceAll(text[s:e], "-", " "))
				// Drop leading common words ("The Berlin office" -> "Berlin").
				for len(words) > 0 && stopNames[words[0]] {
					s += strings.Index(text[s:], words[0]) + len(words[0])
					for s < e && (text[s] == ' ' || text[s] == '-') {
						s++
					}
					words = words[1:]
				}
				if len(words) == 0 {
					continue
				}
				if len(words) == 1 && sentenceStart(text, s) {
					continue
				}
				hits = append(hits, hit{s, e, KindName})
			}
		},
		func() {
			collect(acronymRE, KindName, func(s string) bool { return !stopAcronyms[strings.TrimSuffix(s, "s")] })
		},
	}
	for _, r := range rules {
		before := len(hits)
		r()
		batch := hits[before:]
		sort.SliceStable(batch, func(i, j int) bool { return batch[i].s < batch[j].s })
		for _, h := range batch {
			add(h.s, h.e, h.kind)
		}
	}
	// Report in order of appearance.
	pos := map[string]int{}
	for _, e := range out {
		pos[e.Text] = strings.Index(text, e.Text)
	}
	sort.SliceStable(out, func(i, j int) bool { return pos[out[i].Text] < pos[out[j].Text] })
	if len(out) > MaxEntities {
		out = out[:MaxEntities]
	}
	return out
}

func isPath(s string) bool {
	s = strings.TrimRight(s, ".,;:!?")
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
	// "e.g" and "i.e" are not identifiers; version-like or sentence joins are
	// excluded by requiring a letter after each dot.
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

// Values returns the salient values of text, lower-cased, each once, in order of
// first appearance, at most limit (0: no limit).
func Values(text string, limit int) []string {
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
	for _, m := range quotedRE.FindAllStringSubmatch(text, -1) {
		add(m[1] + m[2])
	}
	for _, m := range keyValueRE.FindAllStringSubmatch(text, -1) {
		if !strings.Contains(m[1], "//") {
			add(strings.Trim(m[1], `"'`))
		}
	}
	for _, m := range numberRE.FindAllString(text, -1) {
		add(NormalizeNumber(m))
	}
	return out
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
	for _, m := range numberRE.FindAllString(text, -1) {
		out = append(out, NormalizeNumber(m))
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
