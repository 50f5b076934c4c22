package sleep

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	porterstemmer "github.com/blevesearch/go-porterstemmer"
)

// The lexical checks. A vector says two texts are about the same thing; only the
// words say whether they state the same fact. Three checks use them:
//
//   - dup: the two texts restate one memory (dedup merges them);
//   - corroborates: one text supports the other (loop adjudication);
//   - words for summaries and the report.
//
// A text is read as tokens. A token is a value when it carries a fact that a
// paraphrase keeps verbatim: it has a digit ("8080", "v1.2"), an identifier's
// punctuation inside it ("db/migrations", "api.log", "a@b"), it is an acronym
// ("API"), or it is capitalised away from the start of a sentence (a name:
// "Chiara", "PostgreSQL"). Values, negations and contrast words (lexicon.go)
// must agree; the remaining content words, compared by stem, may differ only by
// synonyms, typos and a few insertions.

// word is one content word of a text.
type word struct {
	stem    string
	lower   string
	initial bool // capitalised at the start of a sentence (maybe a name)
}

// textInfo is what the checks need of one text, computed once per record
// (slices, not maps: a run keeps one per record).
type textInfo struct {
	values   []string // values, lower-cased, sorted, unique
	capInner []string // words capitalised inside a sentence, lower-cased, sorted
	contrast []choice // contrast choices, by set
	neg      int      // negations
	content  []word   // content words in order
}

// choice is the choice a text makes in a contrast set (-1: several).
type choice struct{ set, pick int }

func has(sorted []string, x string) bool {
	i := sort.SearchStrings(sorted, x)
	return i < len(sorted) && sorted[i] == x
}

func sortUnique(xs []string) []string {
	sort.Strings(xs)
	return slices.Compact(xs)
}

// tokenize splits text into tokens, reporting for each whether it starts a
// sentence.
func tokenize(text string, fn func(tok string, initial bool)) {
	initial := true
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if strings.ContainsRune(".!?:;\n", r) {
				initial = true
			}
			i += size
			continue
		}
		j := i
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				j += size
				continue
			}
			// A connector joins two alphanumerics: paths, versions, contractions.
			if strings.ContainsRune("._/:@#'’-+", r) && j+size < len(text) {
				next, _ := utf8.DecodeRuneInString(text[j+size:])
				if unicode.IsLetter(next) || unicode.IsDigit(next) {
					j += size
					continue
				}
			}
			break
		}
		fn(text[i:j], initial)
		initial = false
		i = j
	}
}

// isValueToken reports whether tok is a value whatever its position.
func isValueToken(tok string) bool {
	upper, letters := 0, 0
	for _, r := range tok {
		switch {
		case unicode.IsDigit(r):
			return true
		case strings.ContainsRune("._/:@#+", r):
			return true
		case unicode.IsLetter(r):
			letters++
			if unicode.IsUpper(r) {
				upper++
			}
		}
	}
	return letters >= 2 && upper == letters // an acronym
}

func isCapitalised(tok string) bool {
	r, _ := utf8.DecodeRuneInString(tok)
	return unicode.IsUpper(r)
}

// normWord lower-cases a token and drops apostrophes ("don't" -> "dont").
func normWord(tok string) string {
	tok = strings.ToLower(tok)
	if strings.ContainsAny(tok, "'’") {
		tok = strings.NewReplacer("'", "", "’", "").Replace(tok)
	}
	return tok
}

// analyse reads a text.
func (lx *lexicon) analyse(text string) *textInfo {
	ti := &textInfo{}
	tokenize(text, func(tok string, initial bool) {
		lower := normWord(tok)
		switch {
		case isValueToken(tok):
			ti.values = append(ti.values, lower)
			return
		case negations[lower]:
			ti.neg++
			return
		}
		if c, ok := lx.contrast[lower]; ok {
			for i := range ti.contrast {
				if ti.contrast[i].set == c[0] {
					if ti.contrast[i].pick != c[1] {
						ti.contrast[i].pick = -1
					}
					return
				}
			}
			ti.contrast = append(ti.contrast, choice{c[0], c[1]})
			return
		}
		if isCapitalised(tok) && !initial {
			ti.capInner = append(ti.capInner, lower)
			ti.values = append(ti.values, lower)
			return
		}
		if stopWords[lower] {
			return
		}
		ti.content = append(ti.content, word{stem: stem(lower), lower: lower, initial: isCapitalised(tok)})
	})
	ti.values = sortUnique(ti.values)
	ti.capInner = sortUnique(ti.capInner)
	sort.Slice(ti.contrast, func(i, j int) bool { return ti.contrast[i].set < ti.contrast[j].set })
	return ti
}

// split returns a text's values and content words for comparison with another
// text: a capitalised sentence-initial word is a value when either text has it
// capitalised inside a sentence.
func (ti *textInfo) split(other *textInfo) ([]string, []word) {
	values := ti.values
	promoted := false
	var content []word
	for _, w := range ti.content {
		if w.initial && (has(ti.capInner, w.lower) || has(other.capInner, w.lower)) {
			if !promoted {
				values = append([]string(nil), ti.values...)
				promoted = true
			}
			values = append(values, w.lower)
			continue
		}
		content = append(content, w)
	}
	if promoted {
		values = sortUnique(values)
	}
	return values, content
}

// lexMatch is the outcome of a lexical check.
type lexMatch struct {
	ok      bool
	overlap float64 // Jaccard overlap of the content words after alignment
	why     string  // why not, when !ok
}

// contrastConflict names the first contrast set on which a and b differ. With
// both set, a set only one text uses is a conflict too.
func contrastConflict(a, b *textInfo, both bool) string {
	i, j := 0, 0
	for i < len(a.contrast) || j < len(b.contrast) {
		switch {
		case j == len(b.contrast) || i < len(a.contrast) && a.contrast[i].set < b.contrast[j].set:
			if both {
				return contrastName(a.contrast[i].set)
			}
			i++
		case i == len(a.contrast) || b.contrast[j].set < a.contrast[i].set:
			if both {
				return contrastName(b.contrast[j].set)
			}
			j++
		default:
			if a.contrast[i].pick != b.contrast[j].pick || a.contrast[i].pick < 0 {
				return contrastName(a.contrast[i].set)
			}
			i++
			j++
		}
	}
	return ""
}

func contrastName(set int) string { return strings.SplitN(contrastSets[set], "/", 3)[0] + "/…" }

// matchValues pairs the values of a with those of b (both sorted), forgiving a
// one-letter typo in a name of five letters or more. It returns the unmatched
// ones.
func matchValues(a, b []string) (onlyA, onlyB []string) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i] < b[j]:
			onlyA = append(onlyA, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			onlyB = append(onlyB, b[j])
			j++
		default:
			i++
			j++
		}
	}
	onlyA, onlyB = pairOff(onlyA, onlyB, func(x, y string) bool {
		return !hasDigit(x) && !hasDigit(y) && len(x) >= 5 && len(y) >= 5 && osa(x, y, 1) <= 1
	})
	return onlyA, onlyB
}

// alignContent returns the content words of a and b left unmatched after
// pairing equal stems, then synonyms, then typos, and how many were matched.
func (lx *lexicon) alignContent(ca, cb []word) (onlyA, onlyB []word, matched int) {
	count := map[string]int{}
	for _, w := range ca {
		count[w.stem]++
	}
	for _, w := range cb {
		if count[w.stem] > 0 {
			count[w.stem]--
			matched++
		} else {
			onlyB = append(onlyB, w)
		}
	}
	for _, w := range ca {
		if count[w.stem] > 0 {
			count[w.stem]--
			onlyA = append(onlyA, w)
		}
	}
	byStem := func(ws []word) {
		sort.Slice(ws, func(i, j int) bool {
			if ws[i].stem != ws[j].stem {
				return ws[i].stem < ws[j].stem
			}
			return ws[i].lower < ws[j].lower
		})
	}
	byStem(onlyA)
	byStem(onlyB)
	before := len(onlyA)
	onlyA, onlyB = pairOff(onlyA, onlyB, func(x, y word) bool { return lx.synonymous(x.stem, y.stem) })
	onlyA, onlyB = pairOff(onlyA, onlyB, func(x, y word) bool { return typo(x.lower, y.lower) || typo(x.stem, y.stem) })
	matched += before - len(onlyA)
	return onlyA, onlyB, matched
}

func lowers(ws []word) string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.lower
	}
	return strings.Join(out, " ")
}

// pairOff removes pairs (x from xs, y from ys) that same accepts, greedily in
// order (both lists sorted, so the result is deterministic).
func pairOff[T any](xs, ys []T, same func(x, y T) bool) ([]T, []T) {
	if len(xs) == 0 || len(ys) == 0 {
		return xs, ys
	}
	usedY := make([]bool, len(ys))
	var restX []T
	for _, x := range xs {
		found := false
		for j, y := range ys {
			if !usedY[j] && same(x, y) {
				usedY[j], found = true, true
				break
			}
		}
		if !found {
			restX = append(restX, x)
		}
	}
	var restY []T
	for j, y := range ys {
		if !usedY[j] {
			restY = append(restY, y)
		}
	}
	return restX, restY
}

// dup decides whether a and b restate one memory: the same negations, contrast
// choices and values; content words that differ only by synonyms and typos,
// plus at most a few words inserted on one side (1 + n/12 for n content words;
// for texts of 40 content words or more, n/20 on either side); and a content
// overlap of at least one half.
func (lx *lexicon) dup(a, b *textInfo) lexMatch {
	if a.neg != b.neg {
		return lexMatch{why: "one of them is negated"}
	}
	if c := contrastConflict(a, b, true); c != "" {
		return lexMatch{why: "they choose differently in " + c}
	}
	va, ca := a.split(b)
	vb, cb := b.split(a)
	if oa, ob := matchValues(va, vb); len(oa)+len(ob) > 0 {
		return lexMatch{why: fmt.Sprintf("different values (%s | %s)", strings.Join(oa, " "), strings.Join(ob, " "))}
	}
	if len(ca) == 0 && len(cb) == 0 {
		if len(va) == 0 {
			return lexMatch{why: "no words to compare"}
		}
		return lexMatch{ok: true, overlap: 1}
	}
	oa, ob, matched := lx.alignContent(ca, cb)
	overlap := float64(matched) / float64(len(ca)+len(cb)-matched)
	m := lexMatch{overlap: overlap}
	n := min(len(ca), len(cb))
	left := len(oa) + len(ob)
	switch {
	case overlap < 0.5:
		m.why = fmt.Sprintf("word overlap %.2f below 0.50", overlap)
	case n >= 40 && left > n/20:
		m.why = fmt.Sprintf("%d words differ", left)
	case n < 40 && len(oa) > 0 && len(ob) > 0:
		m.why = fmt.Sprintf("different words (%s | %s)", lowers(oa), lowers(ob))
	case n < 40 && left > 1+n/12:
		m.why = fmt.Sprintf("%d words added", left)
	default:
		m.ok = true
	}
	return m
}

// corroborates decides whether b supports a: the same negations, no contrast
// choice that differs where both make one, every value of a in b, and every
// content word of a in b (after synonyms and typos) but for one in ten; b may
// say more.
func (lx *lexicon) corroborates(a, b *textInfo) lexMatch {
	if a.neg != b.neg {
		return lexMatch{why: "one of them is negated"}
	}
	if c := contrastConflict(a, b, false); c != "" {
		return lexMatch{why: "they choose differently in " + c}
	}
	va, ca := a.split(b)
	vb, cb := b.split(a)
	if oa, _ := matchValues(va, vb); len(oa) > 0 {
		return lexMatch{why: "values missing: " + strings.Join(oa, " ")}
	}
	if len(ca) == 0 {
		return lexMatch{ok: len(va) > 0, overlap: 1, why: "no words to compare"}
	}
	oa, _, matched := lx.alignContent(ca, cb)
	cover := float64(matched) / float64(len(ca))
	if len(oa) > len(ca)/10 {
		return lexMatch{overlap: cover, why: "words missing: " + lowers(oa)}
	}
	return lexMatch{ok: true, overlap: cover}
}

func hasDigit(s string) bool { return strings.IndexFunc(s, unicode.IsDigit) >= 0 }

// typo reports whether two content stems are one small edit apart: one edit for
// words of four letters or more, two for eight or more.
func typo(a, b string) bool {
	n := min(len(a), len(b))
	if n < 4 || hasDigit(a) || hasDigit(b) {
		return false
	}
	limit := 1
	if n >= 8 {
		limit = 2
	}
	d := len(a) - len(b)
	if d < -limit || d > limit {
		return false
	}
	return osa(a, b, limit) <= limit
}

// osa is the optimal string alignment distance (Levenshtein plus adjacent
// transpositions) between a and b, on bytes; it stops early and returns
// limit+1 once the distance must exceed limit.
func osa(a, b string, limit int) int {
	la, lb := len(a), len(b)
	if la == 0 || lb == 0 {
		return max(la, lb)
	}
	prev2 := make([]int, lb+1)
	prev := make([]int, lb+1)
	cur := make([]int, lb+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= la; i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= lb; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[lb]
}

// stem reduces an English word to the Porter stem its inflections share
// ("prefers", "preferred" and "preferring" all give "prefer").
func stem(w string) string {
	if len(w) <= 3 || strings.IndexFunc(w, func(r rune) bool { return r > unicode.MaxASCII || !unicode.IsLetter(r) }) >= 0 {
		return w
	}
	return porterstemmer.StemString(w)
}
