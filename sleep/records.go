package sleep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"

	"github.com/exocortex/exocortex/memory"
)

// Names the run shares with the extensions that write memories (package
// memorize tags loop-period memories, package recall leaves out the ones not
// yet adjudicated). A test holds them equal to the extensions' own strings.
const (
	// TagLoopPeriod marks a memory written while the supervisor's loop_active
	// was set.
	TagLoopPeriod = "loop_period"
	// TagAdjudicated marks a loop-period memory the loop phase found
	// corroborated: recall uses it again.
	TagAdjudicated = "adjudicated"
	// TagPinned exempts a memory from every archiving rule of the run; the
	// metadata field "pinned": true does the same.
	TagPinned = "pinned"
	// TagSummary marks the summary records the consolidate phase writes.
	TagSummary = "summary"
)

// Metadata fields the run writes.
const (
	// MetaSummaryOf lists the ids a summary record summarises.
	MetaSummaryOf = "summary_of"
	// MetaSummaryMethod says how a summary was written.
	MetaSummaryMethod = "summary_method"
	// MetaSources lists the provenance of the records merged into a canonical
	// record: id, session, source, journal seq and creation time of each.
	MetaSources = "sources"
	// MetaAdjudicated says why a loop-period record is trusted.
	MetaAdjudicated = "adjudicated"
	// MetaResolvedFrom lists the entity keys merged into an ontology record.
	MetaResolvedFrom = "resolved_from"
)

func isPinned(r *memory.Record) bool {
	if r.HasTag(TagPinned) {
		return true
	}
	p, _ := r.Metadata["pinned"].(bool)
	return p
}

func isSummary(r *memory.Record) bool {
	_, ok := r.Metadata[MetaSummaryOf]
	return ok
}

// inLoop reports whether r was written during a loop and not yet adjudicated.
func inLoop(r *memory.Record) bool { return r.HasTag(TagLoopPeriod) && !r.HasTag(TagAdjudicated) }

// restate returns an upsert that writes r as it is (an upsert states the whole
// content), for a change of tags or metadata.
func restate(r *memory.Record) memory.UpsertEvent {
	imp := r.Importance
	meta := map[string]any{}
	for k, v := range r.Metadata {
		meta[k] = v
	}
	return memory.UpsertEvent{ID: r.ID, Area: r.Area, Text: r.Text, Key: r.Key, Tags: append([]string(nil), r.Tags...),
		Metadata: meta, Importance: &imp}
}

// event encodes a memory event for a plan.
func event(kind string, payload any) plannedEvent {
	b, err := json.Marshal(payload)
	if err != nil {
		panic("sleep: encoding a " + kind + " event: " + err.Error()) // our own structs always encode
	}
	return plannedEvent{Kind: kind, Payload: b}
}

// source marks what a phase writes.
func source(p Phase) memory.Source { return memory.Source{Source: "sleep:" + p.String()} }

// contentID derives a record id from content, so that the same content always
// gets the same id: a run that is repeated or resumed writes the same events.
func contentID(prefix string, parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return prefix + hex.EncodeToString(h[:8])
}

// addTag returns tags with tag added (sorted, no repeats).
func addTag(tags []string, tag string) []string {
	for _, t := range tags {
		if t == tag {
			return tags
		}
	}
	out := append(append([]string(nil), tags...), tag)
	sort.Strings(out)
	return out
}

// idsOf reads a metadata list of ids.
func idsOf(v any) []string {
	xs, _ := v.([]any)
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// unionFind groups ids.
type unionFind struct{ parent map[string]string }

func newUnionFind() *unionFind { return &unionFind{parent: map[string]string{}} }

func (u *unionFind) find(x string) string {
	p, ok := u.parent[x]
	if !ok {
		u.parent[x] = x
		return x
	}
	if p == x {
		return x
	}
	root := u.find(p)
	u.parent[x] = root
	return root
}

// union joins the sets of a and b; the smaller id becomes the root, so the
// result does not depend on the order of the unions.
func (u *unionFind) union(a, b string) {
	ra, rb := u.find(a), u.find(b)
	if ra == rb {
		return
	}
	if rb < ra {
		ra, rb = rb, ra
	}
	u.parent[rb] = ra
}

// groups returns the sets with at least two members, each sorted, ordered by
// their first id.
func (u *unionFind) groups() [][]string {
	by := map[string][]string{}
	for x := range u.parent {
		r := u.find(x)
		by[r] = append(by[r], x)
	}
	var out [][]string
	for _, g := range by {
		if len(g) < 2 {
			continue
		}
		sort.Strings(g)
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}
