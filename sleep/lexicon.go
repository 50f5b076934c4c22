package sleep

import "strings"

// The word lists behind the lexical checks (text.go). They are deliberately
// small and general: the checks must tell a restatement of a memory from a
// different fact on the same topic, and they err towards "different" — a
// paraphrase left unmerged costs a little recall, a wrong merge hides a fact.

// stopWords carry no fact: they are ignored when comparing content.
var stopWords = setOf(`a an the and or but if then else of to in on at by for with from into onto over under
about as is are was were be been being am do does did doing have has had having i me my we our us you your he him
his she her it its they them their this that these those there here what which who whom whose when where why how
all any both each few more most other some such only own same so than too very can will just should would could
may might must shall also again further once up out off down s t d ll m o re ve y let lets via per etc
really actually basically generally usually still already even now often because thus hence therefore`)

// negations flip a statement: two records must have the same number of them.
var negations = setOf(`not no never none nothing nobody nowhere neither nor without cannot cant dont doesnt didnt
isnt arent wasnt werent wont wouldnt shouldnt couldnt hasnt havent hadnt mustnt aint n't`)

// contrastSets are alternatives, each a "/"-separated list of choices whose
// words are separated by "|": two records that pick different choices of one
// set (or where one picks a choice and the other none) state different facts,
// however alike the rest is. Words of one choice are interchangeable.
var contrastSets = []string{
	"monday/tuesday/wednesday/thursday/friday/saturday/sunday/weekday|weekdays/weekend|weekends",
	"daily/weekly/monthly/yearly|annually/hourly/nightly",
	"january/february/march/april/june/july/august/september/october/november/december",
	"morning|mornings/afternoon|afternoons/evening|evenings/night|nights|nightly/noon/midnight",
	"red/orange/yellow/green/blue/purple|violet/pink/brown/black/white/grey|gray",
	"dark/light",
	"small|tiny/medium/large|big|huge",
	"enable|enabled|enables/disable|disabled|disables",
	"true/false",
	"before/after",
	"allow|allowed|allows|permit|permitted/deny|denied|denies|block|blocked|blocks|forbid|forbidden",
	"increase|increased|increases|raise|raised/decrease|decreased|decreases|reduce|reduced",
	"open|opened|opens/close|closed|closes",
	"min|minimum/max|maximum",
	"first/last",
	"old|older|oldest/new|newer|newest",
	"high|higher|highest/low|lower|lowest",
	"hot|warm/cold|cool",
	"succeed|succeeded|succeeds|success|successful/fail|failed|fails|failure|failing|break|breaks|broke|broken|crash|crashes|crashed",
	"accept|accepted|accepts/reject|rejected|rejects",
	"public/private",
	"production|prod/staging/development|dev",
	"linux/windows/macos/android/ios",
	"east/west/north/south",
	"add|added|adds/remove|removed|removes|delete|deleted|deletes",
	"sync|synchronous/async|asynchronous",
	"always/sometimes",
	"including|include|includes/excluding|exclude|excludes",
	"minute|minutes/hour|hours/day|days/week|weeks/month|months/year|years/second|seconds",
}

// synonymSets are words that say the same thing in memories of this kind: a
// pair from one set does not make two records different. Inflections are
// matched by stem, so one form of each word is enough.
var synonymSets = [][]string{
	{"prefer", "like", "favour", "favor", "want"},
	{"use", "utilise", "utilize", "employ", "rely"},
	{"run", "ran", "execute", "launch", "invoke"},
	{"begin", "began", "begun", "start", "commence", "initiate"},
	{"finish", "complete", "end", "conclude"},
	{"fix", "repair", "resolve", "patch", "correct"},
	{"make", "made", "create", "build", "built", "produce", "generate"},
	{"show", "display", "print", "render"},
	{"need", "require", "must"},
	{"get", "got", "obtain", "fetch", "retrieve", "receive"},
	{"send", "sent", "transmit", "deliver", "post"},
	{"keep", "kept", "retain", "preserve", "hold", "held", "store", "save"},
	{"move", "relocate", "migrate", "transfer"},
	{"check", "verify", "inspect", "review", "examine"},
	{"look", "search", "find", "found", "locate"},
	{"say", "said", "state", "mention", "note", "tell", "told"},
	{"help", "assist", "support"},
	{"try", "attempt"},
	{"change", "modify", "alter", "update", "edit", "adjust"},
	{"choose", "chose", "chosen", "pick", "select", "opt", "decide"},
	{"plan", "intend", "aim", "mean"},
	{"listen", "serve", "answer"},
	{"live", "reside", "stay", "dwell", "sit"},
	{"work", "operate", "function"},
	{"expire", "lapse"},
	{"talk", "speak", "chat"},
	{"quick", "fast", "rapid", "speedy", "swift"},
	{"slow", "sluggish"},
	{"easy", "simple", "straightforward"},
	{"hard", "difficult", "tough"},
	{"correct", "right", "accurate", "valid"},
	{"wrong", "incorrect", "invalid", "mistaken"},
	{"important", "crucial", "essential", "critical", "key", "vital"},
	{"main", "primary", "principal", "chief"},
	{"often", "frequently", "regularly", "usually"},
	{"error", "fault", "exception"},
	{"issue", "problem", "bug", "defect"},
	{"file", "document"},
	{"folder", "directory", "dir"},
	{"program", "application", "app", "tool", "utility"},
	{"machine", "host", "box", "computer"},
	{"setting", "option", "preference", "configuration", "config"},
	{"job", "task", "chore"},
	{"team", "group", "squad", "crew"},
	{"user", "operator"},
	{"car", "automobile", "vehicle"},
	{"buy", "purchase", "acquire"},
	{"home", "house"},
	{"every", "each"},
	{"around", "about", "approximately", "roughly"},
	{"because", "since", "as"},
	{"copy", "duplicate", "replica"},
	{"backup", "snapshot"},
	{"city", "town"},
	{"font", "typeface"},
	{"meeting", "call"},
	{"quota", "limit", "allowance"},
	{"exhaust", "deplete", "use"},
	{"mean", "indicate", "signal", "signify"},
	{"restart", "reboot", "relaunch"},
	{"deploy", "release", "ship", "roll"},
}

func setOf(words string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(words) {
		out[w] = true
	}
	return out
}

// lexicon indexes the lists: stems to synonym groups, words to contrast sets.
type lexicon struct {
	synonyms map[string][]int  // stem -> the synonym sets it belongs to
	contrast map[string][2]int // word -> (contrast set, choice)
}

func newLexicon() *lexicon {
	lx := &lexicon{synonyms: map[string][]int{}, contrast: map[string][2]int{}}
	for i, set := range synonymSets {
		for _, w := range set {
			st := stem(w)
			lx.synonyms[st] = append(lx.synonyms[st], i)
		}
	}
	for i, set := range contrastSets {
		for j, choice := range strings.Split(set, "/") {
			for _, w := range strings.Split(choice, "|") {
				lx.contrast[w] = [2]int{i, j}
			}
		}
	}
	return lx
}

// synonymous reports whether two stems share a synonym set.
func (lx *lexicon) synonymous(a, b string) bool {
	for _, i := range lx.synonyms[a] {
		for _, j := range lx.synonyms[b] {
			if i == j {
				return true
			}
		}
	}
	return false
}
