package sleep

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"time"
	"unicode"

	"github.com/exocortex/exocortex/memory"
)

// The test stores come from a deterministic generator: facts from templates
// with slots, and around them the cases the phases must tell apart —
//
//   - duplicates of a fact (labelled with its group): the same text, the text
//     with its clauses reordered, with synonyms, with a typo, or a mix;
//   - hard negatives: the same template with one slot changed (a name, a
//     number, a day, a colour, a lower-case noun such as a service name), or
//     the statement negated: the same topic, a different fact;
//   - stale records (old, unimportant, never used), pinned ones among them;
//   - loop-period records, some stated again from outside the loop;
//   - fillers: other facts from the templates.
//
// The synonyms the generator uses are its own choice of everyday pairs, most
// of which the run's lexicon knows and a few ("looks over", "from home") it does
// not: those duplicates are expected to be missed, and count against recall.

// testEmbedder is a deterministic bag-of-words embedder (as memory's tests
// use): each word, lower-cased with a crude plural strip, adds one to a hashed
// dimension. It needs no model file.
type testEmbedder struct{ dims int }

func (e testEmbedder) Dimensions() int { return e.dims }
func (e testEmbedder) ModelID() string { return fmt.Sprintf("test-hash-%d", e.dims) }
func (e testEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, e.dims)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			w = strings.TrimSuffix(w, "s")
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%uint32(e.dims)]++
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		if n > 0 {
			for j := range v {
				v[j] /= float32(math.Sqrt(n))
			}
		}
		out[i] = v
	}
	return out, nil
}

// template is a fact's shape: two orderings of its clauses, slots written
// {name}, and synonym slots written {~name}.
type template struct {
	a, b string
}

var templates = []template{
	{"{P} {~prefers} {T} for {X} because it is {~fast}.", "For {X}, {P} {~prefers} {T} because it is {~fast}."},
	{"The {S} service {~listens} on port {N} in {E}.", "In {E}, the {S} service {~listens} on port {N}."},
	{"{P} {~moved} to {C} in {M} and works {~remotely} on {D}s.", "{P} works {~remotely} on {D}s and {~moved} to {C} in {M}."},
	{"Backups of the {S} database {~run} every {D} at {H}:00 and {~keep} {N2} {~copies}.", "Every {D} at {H}:00 the backups of the {S} database {~run} and {~keep} {N2} {~copies}."},
	{"The {S} team {~decided} to use {T} instead of {T2} for {X}.", "For {X}, the {S} team {~decided} to use {T} instead of {T2}."},
	{"To {~deploy} {S}, run make release and {~restart} the {U} unit.", "Run make release and {~restart} the {U} unit to {~deploy} {S}."},
	{"{P} {~wants} the {W} in a {K} theme with {Z} fonts.", "{P} {~wants} {Z} fonts and a {K} theme in the {W}."},
	{"The {S} cache {~lives} in {T} and {~expires} after {N2} minutes.", "The {S} cache {~expires} after {N2} minutes and {~lives} in {T}."},
	{"Error {N} from {S} {~means} the {R} quota is {~exhausted}.", "From {S}, error {N} {~means} the {R} quota is {~exhausted}."},
	{"{P} {~reviews} pull requests for {S} every {D} morning.", "Every {D} morning {P} {~reviews} pull requests for {S}."},
	{"The {S} job {~needs} {N2} GB of memory on the {U} host.", "On the {U} host, the {S} job {~needs} {N2} GB of memory."},
	{"Use {T} version {V} for the {S} build because newer versions {~break} it.", "For the {S} build, use {T} version {V} because newer versions {~break} it."},
}

// synonyms: the first word is the base fact's, the others its paraphrases'.
var genSynonyms = map[string][]string{
	"prefers":   {"prefers", "likes", "favours"},
	"fast":      {"fast", "quick"},
	"listens":   {"listens", "answers"},
	"moved":     {"moved", "relocated"},
	"remotely":  {"remotely", "from home"},
	"run":       {"run", "execute"},
	"keep":      {"keep", "retain"},
	"copies":    {"copies", "replicas"},
	"decided":   {"decided", "chose"},
	"deploy":    {"deploy", "release"},
	"restart":   {"restart", "reboot"},
	"wants":     {"wants", "prefers"},
	"lives":     {"lives", "resides"},
	"expires":   {"expires", "lapses"},
	"means":     {"means", "indicates"},
	"exhausted": {"exhausted", "depleted"},
	"reviews":   {"reviews", "checks", "looks over"},
	"needs":     {"needs", "requires"},
	"break":     {"break", "crash"},
}

// baseValues are the slot values; slotValues extends the name, service, port
// and version pools by combination, so that large stores still have distinct
// facts.
var baseValues = map[string][]string{
	"P": {"Chiara Brandt", "Bruno Okafor", "Mei Lindqvist", "Tomas Varga", "Anika Rao", "Jonas Weber", "Lucia Moreno", "Kofi Mensah",
		"Ingrid Holm", "Ravi Iyer", "Sofia Marchetti", "Hugo Lefevre", "Yara Haddad", "Emil Novak", "Nadia Petrova", "Omar Farouk"},
	"T": {"Vim", "Emacs", "PostgreSQL", "Redis", "Kafka", "Nginx", "Docker", "Terraform", "Grafana", "Prometheus", "Memcached", "SQLite",
		"RabbitMQ", "Ansible", "Jenkins", "Helix"},
	"T2": {"MySQL", "Consul", "Puppet", "Zabbix", "Traefik", "Podman", "Nomad", "Vault"},
	"X":  {"editing", "code review", "note taking", "debugging", "writing docs", "reporting", "tracing", "load testing"},
	"S": {"billing", "ledger", "search", "auth", "notifier", "inventory", "payments", "catalog", "reports", "gateway", "scheduler",
		"analytics", "checkout", "mailer", "uploads", "profiles"},
	"E":  {"production", "staging", "development"},
	"C":  {"Lisbon", "Oslo", "Nairobi", "Osaka", "Montreal", "Tallinn", "Porto", "Kraków", "Valencia", "Adelaide"},
	"M":  {"January", "February", "March", "April", "June", "July", "September", "October", "November", "December"},
	"D":  {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"},
	"H":  {"1", "2", "3", "4", "5", "22", "23"},
	"N":  {"8080", "9090", "5432", "6379", "3000", "8443", "7000", "4317", "429", "503", "507", "413"},
	"N2": {"3", "5", "7", "10", "14", "30", "45", "90"},
	"U":  {"nginx", "worker", "cron", "scheduler", "proxy", "queue"},
	"W":  {"editor", "terminal", "dashboard", "browser"},
	"K":  {"dark", "light", "blue", "green"},
	"Z":  {"large", "small", "medium"},
	"R":  {"storage", "compute", "bandwidth", "request"},
	"V":  {"1.4", "2.0", "2.7", "3.1", "11.2", "0.9"},
}

// slotPool returns the values of a slot for a store of about n records: the
// base values for small stores, and for large ones also combinations (more
// people, services with a number, more ports and versions).
func slotPool(slot string, n int) []string {
	base := baseValues[slot]
	if n < 5000 {
		return base
	}
	out := append([]string(nil), base...)
	switch slot {
	case "P":
		first := []string{"Ada", "Basil", "Carmen", "Dario", "Elif", "Farid", "Greta", "Hana", "Ivo", "Jun", "Kira", "Leon"}
		last := []string{"Abe", "Berg", "Costa", "Dahl", "Evans", "Fischer", "Gomez", "Haas", "Ito", "Jansen", "Kowal", "Lund"}
		for _, f := range first {
			for _, l := range last {
				out = append(out, f+" "+l)
			}
		}
	case "S":
		for _, b := range base {
			for i := 2; i <= 9; i++ {
				out = append(out, fmt.Sprintf("%s%d", b, i))
			}
		}
	case "N":
		for p := 1024; p < 9000; p += 37 {
			out = append(out, fmt.Sprint(p))
		}
	case "V":
		for maj := 1; maj < 12; maj++ {
			for mnr := 0; mnr < 10; mnr++ {
				out = append(out, fmt.Sprintf("%d.%d", maj, mnr))
			}
		}
	}
	return out
}

// fact is one filled template.
type fact struct {
	tmpl   int
	values map[string]string
}

func (f fact) key() string {
	var parts []string
	for _, k := range sortedKeys(f.values) {
		parts = append(parts, k+"="+f.values[k])
	}
	return fmt.Sprint(f.tmpl) + "|" + strings.Join(parts, "|")
}

// render writes a fact in ordering b (or a), with synonym choice syn (0: the
// base words) for the synonym slots in pick (all when nil).
func (f fact) render(b bool, syn int, pick map[string]bool) string {
	t := templates[f.tmpl].a
	if b {
		t = templates[f.tmpl].b
	}
	var out strings.Builder
	for len(t) > 0 {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			out.WriteString(t)
			break
		}
		out.WriteString(t[:i])
		j := strings.IndexByte(t, '}')
		name := t[i+1 : j]
		t = t[j+1:]
		if s, ok := strings.CutPrefix(name, "~"); ok {
			alts := genSynonyms[s]
			w := alts[0]
			if syn > 0 && (pick == nil || pick[s]) {
				w = alts[1+(syn-1)%(len(alts)-1)]
			}
			out.WriteString(w)
			continue
		}
		out.WriteString(f.values[name])
	}
	s := out.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

func slotsOf(t string) []string {
	var out []string
	seen := map[string]bool{}
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(t, '}')
		name := t[i+1 : j]
		t = t[j+1:]
		if !strings.HasPrefix(name, "~") && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
}

func synSlotsOf(t string) []string {
	var out []string
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(t, '}')
		if s, ok := strings.CutPrefix(t[i+1:j], "~"); ok {
			out = append(out, s)
		}
		t = t[j+1:]
	}
}

// typoIn swaps two inner letters of the longest lower-case word of six letters
// or more (not a value), or returns s unchanged.
func typoIn(s string, rng *rand.Rand) string {
	words := strings.Fields(s)
	best := -1
	for i, w := range words {
		if len(w) >= 6 && strings.ToLower(w) == w && !strings.ContainsAny(w, "0123456789.:,") && (best < 0 || len(w) > len(words[best])) {
			best = i
		}
	}
	if best < 0 {
		return s
	}
	w := []byte(words[best])
	k := 1 + rng.IntN(len(w)-3)
	w[k], w[k+1] = w[k+1], w[k]
	words[best] = string(w)
	return strings.Join(words, " ")
}

// genRecord is a generated record with its label.
type genRecord struct {
	in    memory.Input
	group string // records of one group state one fact
	kind  string // base, exact, reorder, synonym, typo, mixed, negative, filler, stale, loop, corroborator
}

type genConfig struct {
	seed      uint64
	facts     int     // facts with labelled duplicates and negatives around them
	dupRate   float64 // share of those facts that get duplicates
	negRate   float64 // share that get a hard negative
	fillers   int
	stale     int
	loops     int // loop-period records; half of them corroborated
	now       time.Time
	areaSplit bool // spread facts over main and fragments
}

type generated struct {
	recs []genRecord
}

// generate builds the labelled records.
func generate(cfg genConfig) *generated {
	rng := rand.New(rand.NewPCG(cfg.seed, 11))
	size := cfg.facts*2 + cfg.fillers + cfg.stale + cfg.loops
	pools := map[string][]string{}
	for slot := range baseValues {
		pools[slot] = slotPool(slot, size)
	}
	used := map[string]bool{}
	newFact := func() fact {
		for {
			f := fact{tmpl: rng.IntN(len(templates)), values: map[string]string{}}
			for _, s := range slotsOf(templates[f.tmpl].a) {
				pool := pools[s]
				f.values[s] = pool[rng.IntN(len(pool))]
			}
			if f.values["T"] == f.values["T2"] {
				continue
			}
			if !used[f.key()] {
				used[f.key()] = true
				return f
			}
		}
	}
	g := &generated{}
	n := 0
	id := func(kind string) string {
		n++
		return fmt.Sprintf("%s%05d", kind[:1], n)
	}
	area := func() string {
		if cfg.areaSplit && rng.IntN(3) == 0 {
			return memory.AreaFragments
		}
		return memory.AreaMain
	}
	created := func(maxDays int) *time.Time {
		t := cfg.now.Add(-time.Duration(rng.IntN(maxDays*24)) * time.Hour).Add(-time.Hour)
		return &t
	}
	imp := func(x float64) *float64 { return &x }
	add := func(kind, group, ar, text string, c *time.Time, importance float64, tags ...string) {
		g.recs = append(g.recs, genRecord{kind: kind, group: group, in: memory.Input{ID: id(kind), Area: ar, Text: text, Created: c,
			Importance: imp(importance), Tags: tags}})
	}
	for i := range cfg.facts {
		f := newFact()
		group := fmt.Sprintf("g%05d", i)
		ar := area()
		add("base", group, ar, f.render(false, 0, nil), created(120), 0.5)
		if rng.Float64() < cfg.dupRate {
			syns := synSlotsOf(templates[f.tmpl].a)
			for k := 0; k < 1+rng.IntN(3); k++ {
				var text, kind string
				switch rng.IntN(6) {
				case 0:
					kind, text = "exact", f.render(false, 0, nil)
					if rng.IntN(2) == 0 {
						text = strings.TrimSuffix(text, ".")
					}
				case 1:
					kind, text = "reorder", f.render(true, 0, nil)
				case 2, 3:
					pick := map[string]bool{syns[rng.IntN(len(syns))]: true}
					kind, text = "synonym", f.render(false, 1+rng.IntN(2), pick)
				case 4:
					kind, text = "typo", typoIn(f.render(false, 0, nil), rng)
				case 5:
					pick := map[string]bool{syns[rng.IntN(len(syns))]: true}
					kind, text = "mixed", f.render(true, 1, pick)
				}
				add(kind, group, ar, text, created(120), 0.3+0.1*float64(rng.IntN(5)))
			}
		}
		if rng.Float64() < cfg.negRate {
			neg := fact{tmpl: f.tmpl, values: map[string]string{}}
			for k, v := range f.values {
				neg.values[k] = v
			}
			slots := slotsOf(templates[f.tmpl].a)
			text := ""
			if rng.IntN(5) == 0 {
				// Negated: the same words and "not".
				text = strings.Replace(f.render(false, 0, nil), " is ", " is not ", 1)
				if !strings.Contains(text, " not ") {
					text = strings.Replace(f.render(false, 0, nil), " and ", " and never ", 1)
				}
			} else {
				s := slots[rng.IntN(len(slots))]
				pool := pools[s]
				for neg.values[s] == f.values[s] || neg.values["T"] == neg.values["T2"] {
					neg.values[s] = pool[rng.IntN(len(pool))]
				}
				if used[neg.key()] {
					continue
				}
				used[neg.key()] = true
				text = neg.render(false, 0, nil)
			}
			if text != f.render(false, 0, nil) {
				add("negative", group+"n", ar, text, created(120), 0.5)
			}
		}
	}
	for i := range cfg.fillers {
		f := newFact()
		add("filler", fmt.Sprintf("f%05d", i), area(), f.render(rng.IntN(2) == 0, 0, nil), created(120), 0.5)
	}
	for i := range cfg.stale {
		f := newFact()
		tags := []string{"old"}
		if i%5 == 0 {
			tags = append(tags, TagPinned)
		}
		t := cfg.now.Add(-time.Duration(400+rng.IntN(300)) * 24 * time.Hour)
		add("stale", fmt.Sprintf("s%05d", i), memory.AreaFragments, f.render(false, 0, nil), &t, 0.2, tags...)
	}
	for i := range cfg.loops {
		f := newFact()
		group := fmt.Sprintf("l%05d", i)
		add("loop", group, memory.AreaMain, f.render(false, 0, nil), created(3), 0.25, TagLoopPeriod)
		if i%2 == 0 {
			// Stated again outside the loop, with more besides.
			add("corroborator", group, memory.AreaMain, "The operator confirmed it: "+f.render(false, 0, nil), created(60), 0.6)
		}
	}
	return g
}

func (g *generated) inputs() []memory.Input {
	out := make([]memory.Input, len(g.recs))
	for i, r := range g.recs {
		out[i] = r.in
	}
	return out
}
