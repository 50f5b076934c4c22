package sleep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/staging"
)

// Phase 5, ontology: entity records that name the same thing merge, and the
// relationships that name a merged entity are restated with its canonical name.
//
// Entities are the active records of the ontology area whose key starts with
// "entity:" (package ontology writes them: key entity:NAME, metadata kind,
// mentions and aliases). Two entities are one when
//
//   - they are equal after case, spacing and punctuation are dropped
//     ("Agent Zero", "agent-zero", "AgentZero");
//   - an alias of one is a name or alias of the other (so compared);
//   - their names are a small edit apart: one edit for names of five to nine
//     letters, two from ten (found through deletion neighbourhoods, not by
//     comparing all pairs), with the same digits ("python2" and "python3"
//     stay apart) and the same kind when both have one.
//
// A group elects the entity with the most mentions (then the most aliases, the
// oldest, the smallest id). An upsert gives it every alias and the summed
// mentions, a memory.merge archives the others with superseded_by. Pinned
// entities and entities restored by hand are left alone.
//
// relationships.jsonl is append-only: for every relationship that names a
// merged entity, the same relationship between the canonical names is appended
// (unless the file has it), and a "same_as" relationship links each merged name
// to its canonical one. This is derived from the store's state every run, so a
// run killed between the merge and the append completes it next time.

// entityPrefix starts an entity record's key.
const entityPrefix = "entity:"

type entity struct {
	rec      *memory.Record
	name     string // the key without its prefix
	aliases  []string
	kind     string
	mentions int
	forms    []string // normalised name and aliases
}

func entityOf(rec *memory.Record) *entity {
	if rec.Area != memory.AreaOntology || !strings.HasPrefix(rec.Key, entityPrefix) {
		return nil
	}
	e := &entity{rec: rec, name: strings.TrimPrefix(rec.Key, entityPrefix)}
	for _, a := range asList(rec.Metadata["aliases"]) {
		if s, ok := a.(string); ok && strings.TrimSpace(s) != "" {
			e.aliases = append(e.aliases, s)
		}
	}
	e.kind, _ = rec.Metadata["kind"].(string)
	if m, ok := rec.Metadata["mentions"].(float64); ok {
		e.mentions = int(m)
	}
	seen := map[string]bool{}
	for _, s := range append([]string{e.name}, e.aliases...) {
		if f := normForm(s); f != "" && !seen[f] {
			seen[f] = true
			e.forms = append(e.forms, f)
		}
	}
	return e
}

// normForm keeps letters and digits, lower-cased.
func normForm(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func digitsOf(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// deletions returns s and every string made by deleting up to d bytes.
func deletions(s string, d int) []string {
	out := []string{s}
	level := []string{s}
	seen := map[string]bool{s: true}
	for ; d > 0; d-- {
		var next []string
		for _, x := range level {
			for i := range len(x) {
				y := x[:i] + x[i+1:]
				if !seen[y] {
					seen[y] = true
					next = append(next, y)
				}
			}
		}
		out = append(out, next...)
		level = next
	}
	return out
}

func editLimit(n int) int {
	switch {
	case n >= 10:
		return 2
	case n >= 5:
		return 1
	}
	return 0
}

func (r *runner) planOntology(ctx context.Context) (PhaseSummary, []plannedEvent, error) {
	sum := PhaseSummary{Phase: Ontology}
	var ents []*entity
	byID := map[string]*entity{}
	for _, rec := range r.recs {
		if !rec.Active() {
			continue
		}
		if e := entityOf(rec); e != nil {
			ents = append(ents, e)
			byID[rec.ID] = e
		}
	}
	sum.Examined = len(ents)
	uf := newUnionFind()
	how := map[[2]string]string{}
	link := func(a, b *entity, why string) {
		if a.rec.ID == b.rec.ID {
			return
		}
		k := [2]string{min(a.rec.ID, b.rec.ID), max(a.rec.ID, b.rec.ID)}
		if _, ok := how[k]; !ok {
			how[k] = why
		}
		uf.union(a.rec.ID, b.rec.ID)
	}
	// Same form: case, spacing, punctuation, or an alias.
	byForm := map[string][]*entity{}
	for _, e := range ents {
		for _, f := range e.forms {
			byForm[f] = append(byForm[f], e)
		}
	}
	for _, f := range sortedKeys(byForm) {
		es := byForm[f]
		for _, e := range es[1:] {
			why := "the same name up to case and punctuation"
			if normForm(e.name) != normForm(es[0].name) {
				why = "an alias of one names the other"
			}
			link(es[0], e, why)
		}
	}
	// Small edits, through deletion neighbourhoods of the names.
	byDel := map[string][]*entity{}
	for _, e := range ents {
		f := normForm(e.name)
		if d := editLimit(len(f)); d > 0 {
			for _, x := range deletions(f, d) {
				byDel[x] = append(byDel[x], e)
			}
		}
	}
	for _, x := range sortedKeys(byDel) {
		es := byDel[x]
		for i := 0; i < len(es); i++ {
			for j := i + 1; j < len(es); j++ {
				a, b := es[i], es[j]
				fa, fb := normForm(a.name), normForm(b.name)
				if fa == fb || digitsOf(fa) != digitsOf(fb) || (a.kind != "" && b.kind != "" && a.kind != b.kind) {
					continue
				}
				limit := editLimit(min(len(fa), len(fb)))
				if d := osa(fa, fb, limit); d <= limit {
					link(a, b, fmt.Sprintf("names %d edit%s apart", d, map[bool]string{true: "s", false: ""}[d > 1]))
				}
			}
		}
	}
	var events []plannedEvent
	for _, g := range uf.groups() {
		members := make([]*entity, len(g))
		for i, id := range g {
			members[i] = byID[id]
		}
		sort.SliceStable(members, func(i, j int) bool {
			a, b := members[i], members[j]
			if a.mentions != b.mentions {
				return a.mentions > b.mentions
			}
			if len(a.aliases) != len(b.aliases) {
				return len(a.aliases) > len(b.aliases)
			}
			if !a.rec.Created.Equal(b.rec.Created) {
				return a.rec.Created.Before(b.rec.Created)
			}
			return a.rec.ID < b.rec.ID
		})
		canon := members[0]
		var from []*entity
		for _, m := range members[1:] {
			switch {
			case isPinned(m.rec):
				sum.count("exempt_pinned", 1)
			case r.jv.restored[m.rec.ID]:
				sum.count("exempt_restored", 1)
			default:
				from = append(from, m)
			}
		}
		if len(from) == 0 {
			continue
		}
		aliasSet := map[string]bool{}
		mentions := canon.mentions
		kind := canon.kind
		resolved := map[string]bool{}
		for _, k := range idsOf(canon.rec.Metadata[MetaResolvedFrom]) {
			resolved[k] = true
		}
		for _, e := range append([]*entity{canon}, from...) {
			for _, a := range e.aliases {
				aliasSet[a] = true
			}
			if len(e.aliases) == 0 {
				aliasSet[e.name] = true
			}
			if kind == "" {
				kind = e.kind
			}
		}
		ex := Example{Action: "resolve", ID: canon.rec.ID, Text: canon.name}
		var ids []string
		for _, m := range from {
			mentions += m.mentions
			resolved[m.rec.Key] = true
			ids = append(ids, m.rec.ID)
			k := [2]string{min(canon.rec.ID, m.rec.ID), max(canon.rec.ID, m.rec.ID)}
			why := how[k]
			if why == "" {
				why = "linked through another name of the group"
			}
			ex.Others = append(ex.Others, ExampleRecord{ID: m.rec.ID, Text: m.name + " — " + why})
		}
		aliases := sortedKeys(aliasSet)
		up := restate(canon.rec)
		up.Metadata["aliases"] = aliases
		up.Metadata["mentions"] = mentions
		if kind != "" {
			up.Metadata["kind"] = kind
		}
		up.Metadata[MetaResolvedFrom] = sortedKeys(resolved)
		up.Text = fmt.Sprintf("%s (%s), also written %s", aliases[0], kind, strings.Join(aliases, ", "))
		up.Source = source(Ontology)
		up.Reason = fmt.Sprintf("sleep ontology: %d other names of this entity merged into it", len(from))
		reason := "sleep ontology: the same entity as " + canon.rec.Key
		ex.Reason = reason
		events = append(events, event(memory.KindUpsert, up),
			event(memory.KindMerge, memory.MergeEvent{Into: canon.rec.ID, From: ids, Reason: reason, Source: source(Ontology)}))
		sum.count("groups", 1)
		sum.count("merged", len(from))
		sum.example(ex)
	}
	return sum, events, ctx.Err()
}

// relationship is a record of relationships.jsonl (package ontology's shape).
type relationship struct {
	From       string `json:"from"`
	Rel        string `json:"rel"`
	To         string `json:"to"`
	Session    string `json:"session,omitempty"`
	RequestID  string `json:"request_id,omitempty"`
	Evidence   string `json:"evidence,omitempty"`
	ResolvedBy string `json:"resolved_by,omitempty"`
}

// relKey is how package ontology tells relationships apart.
func entityKey(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

func (rl relationship) key() string {
	return entityKey(rl.From) + "\x00" + rl.Rel + "\x00" + entityKey(rl.To)
}

// KindRelationship is the staging kind of a relationships.jsonl record.
const KindRelationship = "relationship"

// displayName is how an entity is written: its first alias, else its name.
func displayName(rec *memory.Record) string {
	if e := entityOf(rec); e != nil {
		if len(e.aliases) > 0 {
			as := append([]string(nil), e.aliases...)
			sort.Strings(as)
			return as[0]
		}
		return e.name
	}
	return strings.TrimPrefix(rec.Key, entityPrefix)
}

// syncRelationships appends to relationships.jsonl what the merged entities
// imply and the file lacks. It is derived from the state, so it runs every
// time the ontology phase does.
func (r *runner) syncRelationships(ctx context.Context, sum *PhaseSummary) {
	path := r.cfg.RelationshipsPath
	if path == "" {
		return
	}
	recs, err := r.store.Records(ctx)
	if err != nil {
		sum.Notes = append(sum.Notes, fmt.Sprintf("the records could not be read (%v): the relationships are updated by the next run", err))
		return
	}
	byID := make(map[string]*memory.Record, len(recs))
	for _, rec := range recs {
		byID[rec.ID] = rec
	}
	// Each merged entity's names resolve to its canonical entity's name.
	resolve := map[string]string{}
	var variants []string
	variantName := map[string]string{}
	for _, rec := range recs {
		if rec.Active() || rec.SupersededBy == "" || entityOf(rec) == nil {
			continue
		}
		to := byID[rec.SupersededBy]
		for hops := 0; to != nil && !to.Active() && to.SupersededBy != "" && hops < 16; hops++ {
			to = byID[to.SupersededBy]
		}
		if to == nil || !to.Active() || entityOf(to) == nil {
			continue
		}
		canon := displayName(to)
		e := entityOf(rec)
		for _, n := range append([]string{e.name}, e.aliases...) {
			if entityKey(n) != entityKey(canon) {
				resolve[entityKey(n)] = canon
			}
		}
		name := displayName(rec)
		if entityKey(name) != entityKey(canon) {
			variants = append(variants, name)
			variantName[name] = canon
		}
	}
	if len(resolve) == 0 {
		return
	}
	var existing []relationship
	have := map[string]bool{}
	bad, err := staging.Scan(ctx, path, 0, func(rec staging.Record) error {
		var rl relationship
		if rec.Decode(&rl) == nil && rl.From != "" && rl.To != "" {
			existing = append(existing, rl)
			have[rl.key()] = true
		}
		return nil
	})
	if err != nil {
		sum.Notes = append(sum.Notes, fmt.Sprintf("%s could not be read (%v): the relationships are updated by the next run", path, err))
		return
	}
	if len(bad) > 0 {
		sum.Notes = append(sum.Notes, fmt.Sprintf("%d lines of %s could not be read and were skipped", len(bad), path))
	}
	var add []staging.Entry
	appended, sameAs := 0, 0
	for _, rl := range existing {
		f, t := rl.From, rl.To
		if c, ok := resolve[entityKey(f)]; ok {
			f = c
		}
		if c, ok := resolve[entityKey(t)]; ok {
			t = c
		}
		if f == rl.From && t == rl.To {
			continue
		}
		nr := relationship{From: f, Rel: rl.Rel, To: t, Session: runSession(r.run), Evidence: rl.Evidence, ResolvedBy: "sleep " + r.run}
		if entityKey(f) == entityKey(t) || have[nr.key()] {
			continue
		}
		have[nr.key()] = true
		add = append(add, staging.Entry{Kind: KindRelationship, Session: runSession(r.run), Payload: nr})
		appended++
	}
	sort.Strings(variants)
	for _, v := range variants {
		nr := relationship{From: v, Rel: "same_as", To: variantName[v], Session: runSession(r.run), ResolvedBy: "sleep " + r.run}
		if have[nr.key()] {
			continue
		}
		have[nr.key()] = true
		add = append(add, staging.Entry{Kind: KindRelationship, Session: runSession(r.run), Payload: nr})
		sameAs++
	}
	if len(add) == 0 {
		return
	}
	if err := r.appendLog(ctx, path, add); err != nil {
		sum.Notes = append(sum.Notes, fmt.Sprintf("%s could not be updated (%v): the next run appends the %d resolved relationships", path, err, len(add)))
		return
	}
	sum.count("relationships_appended", appended)
	sum.count("same_as_appended", sameAs)
}

// appendLog appends entries to a staging log that other processes also write:
// open, append in one write, close; waiting a little while another holds it.
func (r *runner) appendLog(ctx context.Context, path string, entries []staging.Entry) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	pause := 50 * time.Millisecond
	for {
		l, err := staging.Open(ctx, path, staging.Options{Sync: staging.SyncEveryAppend, Now: r.clock.now, Logger: r.cfg.Logger})
		if err == nil {
			_, aerr := l.AppendBatch(ctx, entries)
			cerr := l.Close()
			return errors.Join(aerr, cerr)
		}
		var le *staging.LockedError
		if !errors.As(err, &le) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}
