package sleep

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/exocortex/exocortex/memory"
)

// Phase is one step of a run, in the order they run.
type Phase int

// The phases.
const (
	Ingest Phase = iota
	Dedup
	Consolidate
	Decay
	Loop
	Ontology
	numPhases
)

var phaseNames = [...]string{"ingest", "dedup", "consolidate", "decay", "loop", "ontology"}

// AllPhases lists every phase in order.
func AllPhases() []Phase { return []Phase{Ingest, Dedup, Consolidate, Decay, Loop, Ontology} }

func (p Phase) String() string {
	if p >= 0 && p < numPhases {
		return phaseNames[p]
	}
	return "phase" + strconv.Itoa(int(p))
}

// MarshalJSON writes the phase's name.
func (p Phase) MarshalJSON() ([]byte, error) { return json.Marshal(p.String()) }

// UnmarshalJSON reads a name or a number.
func (p *Phase) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("sleep: a phase is a name or a number, not %s", b)
		}
		s = strconv.Itoa(n)
	}
	ps, err := ParsePhases(s)
	if err != nil || len(ps) != 1 {
		return fmt.Errorf("sleep: unknown phase %q", s)
	}
	*p = ps[0]
	return nil
}

// ParsePhases reads a phase list: numbers, names and ranges separated by commas,
// e.g. "0,1,2", "ingest,dedup", "1-3", "dedup-decay" or "all". The result is
// sorted and without repeats: phases always run in their own order.
func ParsePhases(s string) ([]Phase, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		return AllPhases(), nil
	}
	one := func(x string) (Phase, error) {
		x = strings.TrimSpace(strings.ToLower(x))
		if n, err := strconv.Atoi(x); err == nil {
			if n < 0 || n >= int(numPhases) {
				return 0, fmt.Errorf("phase %d does not exist (0 to %d)", n, numPhases-1)
			}
			return Phase(n), nil
		}
		for i, name := range phaseNames {
			if x == name {
				return Phase(i), nil
			}
		}
		return 0, fmt.Errorf("unknown phase %q: use 0-%d or %s", x, numPhases-1, strings.Join(phaseNames[:], ", "))
	}
	seen := map[Phase]bool{}
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := one(lo)
		if err != nil {
			return nil, fmt.Errorf("--phases %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = one(hi); err != nil {
				return nil, fmt.Errorf("--phases %q: %w", s, err)
			}
		}
		if b < a {
			return nil, fmt.Errorf("--phases %q: the range %s runs backwards", s, part)
		}
		for p := a; p <= b; p++ {
			seen[p] = true
		}
	}
	out := make([]Phase, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("--phases %q names no phase", s)
	}
	return out, nil
}

// Params are the rules' thresholds. A zero field takes its default when a run
// starts (Defaults), and the filled-in values are recorded with the run, so a
// resumed run decides with the same ones. docs/sleep.md explains each.
type Params struct {
	// Areas are the areas dedup, consolidate and loop adjudication work in;
	// empty means every area but library and ontology.
	Areas []string `json:"areas,omitempty"`
	// ConsolidateAreas are the areas whose related records gain summaries.
	ConsolidateAreas []string `json:"consolidate_areas,omitempty"`

	// DedupSimilarity is the cosine similarity at or above which two records
	// are duplicate candidates; the lexical check decides.
	DedupSimilarity float64 `json:"dedup_similarity"`
	// RelatedSimilarity is the similarity at or above which two records are
	// related (for consolidation clusters).
	RelatedSimilarity float64 `json:"related_similarity"`
	// CorroborateSimilarity is the similarity at or above which a record from
	// outside a loop can corroborate a loop-period record.
	CorroborateSimilarity float64 `json:"corroborate_similarity"`
	// Neighbours is how many nearest neighbours each record asks the vector
	// index for.
	Neighbours int `json:"neighbours"`
	// MinCluster and MaxCluster bound a consolidation cluster's size.
	MinCluster int `json:"min_cluster"`
	MaxCluster int `json:"max_cluster"`

	// DecayThreshold is the strength below which a record is archived.
	DecayThreshold float64 `json:"decay_threshold"`
	// HalfLifeDays is the half-life of strength per area, in days; an area
	// set to 0 never decays. Areas not listed take DefaultHalfLifeDays.
	HalfLifeDays map[string]float64 `json:"half_life_days"`
	// DefaultHalfLifeDays is the half-life of areas not in HalfLifeDays.
	DefaultHalfLifeDays float64 `json:"default_half_life_days"`
}

// Defaults returns the default thresholds. lexical selects the ones for the
// hashed bag-of-words vectors used when the store has no embedder, whose
// similarities run lower than a sentence embedder's for the same paraphrase.
func Defaults(lexical bool) Params {
	p := Params{
		ConsolidateAreas:      []string{memory.AreaMain, memory.AreaFragments},
		DedupSimilarity:       0.75,
		RelatedSimilarity:     0.75,
		CorroborateSimilarity: 0.65,
		Neighbours:            24,
		MinCluster:            3,
		MaxCluster:            8,
		DecayThreshold:        0.10,
		HalfLifeDays: map[string]float64{
			memory.AreaMain: 180, memory.AreaFragments: 30, memory.AreaSolutions: 365,
			memory.AreaLibrary: 0, memory.AreaOntology: 0,
		},
		DefaultHalfLifeDays: 90,
	}
	if lexical {
		p.DedupSimilarity, p.RelatedSimilarity, p.CorroborateSimilarity = 0.70, 0.50, 0.50
	}
	return p
}

// withDefaults fills the zero fields from Defaults(lexical).
func (p Params) withDefaults(lexical bool) Params {
	d := Defaults(lexical)
	if len(p.ConsolidateAreas) == 0 {
		p.ConsolidateAreas = d.ConsolidateAreas
	}
	if p.DedupSimilarity == 0 {
		p.DedupSimilarity = d.DedupSimilarity
	}
	if p.RelatedSimilarity == 0 {
		p.RelatedSimilarity = d.RelatedSimilarity
	}
	if p.CorroborateSimilarity == 0 {
		p.CorroborateSimilarity = d.CorroborateSimilarity
	}
	if p.Neighbours == 0 {
		p.Neighbours = d.Neighbours
	}
	if p.MinCluster == 0 {
		p.MinCluster = d.MinCluster
	}
	if p.MaxCluster == 0 {
		p.MaxCluster = d.MaxCluster
	}
	if p.DecayThreshold == 0 {
		p.DecayThreshold = d.DecayThreshold
	}
	hl := map[string]float64{}
	for k, v := range d.HalfLifeDays {
		hl[k] = v
	}
	for k, v := range p.HalfLifeDays {
		hl[k] = v
	}
	p.HalfLifeDays = hl
	if p.DefaultHalfLifeDays == 0 {
		p.DefaultHalfLifeDays = d.DefaultHalfLifeDays
	}
	return p
}

// check reports a threshold out of range, naming it.
func (p Params) check() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"dedup similarity", p.DedupSimilarity}, {"related similarity", p.RelatedSimilarity}, {"corroborate similarity", p.CorroborateSimilarity}} {
		if f.v <= 0 || f.v > 1 {
			return fmt.Errorf("sleep: the %s %g is not in (0, 1]", f.name, f.v)
		}
	}
	if p.Neighbours < 2 || p.Neighbours > 200 {
		return fmt.Errorf("sleep: neighbours %d is not in 2..200", p.Neighbours)
	}
	if p.MinCluster < 2 || p.MaxCluster < p.MinCluster {
		return fmt.Errorf("sleep: cluster sizes %d..%d: the minimum must be at least 2 and not above the maximum", p.MinCluster, p.MaxCluster)
	}
	if p.DecayThreshold < 0 || p.DecayThreshold >= 1 {
		return fmt.Errorf("sleep: the decay threshold %g is not in [0, 1)", p.DecayThreshold)
	}
	for a, d := range p.HalfLifeDays {
		if d < 0 {
			return fmt.Errorf("sleep: the half-life of area %s is negative (%g days)", a, d)
		}
	}
	for _, a := range append(append([]string{}, p.Areas...), p.ConsolidateAreas...) {
		if err := memory.ValidArea(a); err != nil {
			return fmt.Errorf("sleep: %w", err)
		}
	}
	return nil
}

// halfLife returns the half-life of area in days (0: never decays).
func (p Params) halfLife(area string) float64 {
	if d, ok := p.HalfLifeDays[area]; ok {
		return d
	}
	return p.DefaultHalfLifeDays
}

// workArea reports whether dedup, consolidation and loop adjudication look at
// area.
func (p Params) workArea(area string) bool {
	if len(p.Areas) == 0 {
		return area != memory.AreaLibrary && area != memory.AreaOntology
	}
	return slices.Contains(p.Areas, area)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
