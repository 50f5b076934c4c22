// Package ontology keeps a small graph of the entities the conversations mention:
// entity records in the memory store's ontology area, and typed relationships
// between them in $EXOCORTEX_HOME/ontology/relationships.jsonl (a staging log:
// one JSON record per line, appended, never rewritten). Both are deterministic:
// entities and relationships come from fixed text rules (package textfacts and
// RelPatterns), no model.
//
// ontology_maintenance (monologue_end, order 59, as in the seed), over the
// monologue's messages (the operator's message and everything after it) and its
// answer:
//   - entity resolution: an entity's key is its text lower-cased with runs of
//     space collapsed, so "Agent Zero" and "agent zero" are one entity; its
//     record (area ontology, key entity:KEY) keeps the surface forms as aliases,
//     its kind, and how often it was mentioned; at most MaxEntities per monologue,
//     the most mentioned first;
//   - relationships: in each sentence, two entities joined by one of RelPatterns
//     ("X uses Y", "X depends on Y", "X calls Y", "X imports Y", "X contains Y",
//     "X is a Y", "X runs on Y", "X reads Y", "X writes Y") give a typed
//     relationship; other pairs of neighbouring entities in a sentence give
//     co_occurs. A relationship already in the file is not appended again.
//
// ontology_query (message_loop_prompts_after, order 58, as in the seed): for the
// MaxQuery most recent working-memory entities, looks up their relationships and
// their ontology records, and adds an ONTOLOGY block with what is known; nothing
// when nothing is. The relationships file is read once per change of its size or
// modification time.
package ontology

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/exocortex/exocortex/extensions/internal/entities"
	"github.com/exocortex/exocortex/extensions/internal/stagelog"
	"github.com/exocortex/exocortex/extensions/internal/textfacts"
	"github.com/exocortex/exocortex/extensions/internal/turn"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// AreaOntology is the memory area of the entity records (package memory's).
const AreaOntology = "ontology"

// WriteAreas are the memory areas ontology_maintenance writes, for the
// plugin's MemoryWriteAreas.
func WriteAreas() []string { return []string{AreaOntology} }

// Limits.
const (
	MaxEntities = 30
	MaxQuery    = 5
	MaxRelsShow = 6
)

// Relationship is one record of relationships.jsonl.
type Relationship struct {
	From      string `json:"from"`
	Rel       string `json:"rel"`
	To        string `json:"to"`
	Session   string `json:"session,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	Evidence  string `json:"evidence,omitempty"`
}

func (r Relationship) key() string { return Key(r.From) + "\x00" + r.Rel + "\x00" + Key(r.To) }

// RelPatterns are the typed relationships, each the words between two entities.
func RelPatterns() map[string]*regexp.Regexp {
	return map[string]*regexp.Regexp{
		"uses":       regexp.MustCompile(`(?i)^\s*(?:uses|use|is using|relies on)\s*$`),
		"depends_on": regexp.MustCompile(`(?i)^\s*(?:depends on|requires|needs)\s*$`),
		"calls":      regexp.MustCompile(`(?i)^\s*(?:calls|invokes)\s*$`),
		"imports":    regexp.MustCompile(`(?i)^\s*(?:imports|includes)\s*$`),
		"contains":   regexp.MustCompile(`(?i)^\s*(?:contains|holds|has)\s*$`),
		"is_a":       regexp.MustCompile(`(?i)^\s*(?:is an?|are)\s*$`),
		"runs_on":    regexp.MustCompile(`(?i)^\s*(?:runs on|is hosted on|is deployed to)\s*$`),
		"reads":      regexp.MustCompile(`(?i)^\s*(?:reads|loads|parses)\s*$`),
		"writes":     regexp.MustCompile(`(?i)^\s*(?:writes|writes to|saves to|creates)\s*$`),
	}
}

// Key is an entity's resolution key.
func Key(text string) string { return strings.ToLower(strings.Join(strings.Fields(text), " ")) }

// Relationships finds the relationships in a text.
func Relationships(text string) []Relationship {
	pats := RelPatterns()
	names := make([]string, 0, len(pats))
	for n := range pats {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Relationship
	for _, s := range textfacts.Sentences(text) {
		ents := textfacts.Entities(s)
		for i := 0; i+1 < len(ents) && i < 5; i++ {
			a, b := ents[i], ents[i+1]
			ia := strings.Index(s, a.Text)
			ib := strings.Index(s[ia+len(a.Text):], b.Text)
			if ia < 0 || ib < 0 {
				continue
			}
			between := s[ia+len(a.Text) : ia+len(a.Text)+ib]
			between = strings.TrimSpace(strings.Trim(strings.TrimSpace(between), "`\"'"))
			between = strings.TrimSuffix(between, " the")
			rel := "co_occurs"
			for _, n := range names {
				if pats[n].MatchString(between) {
					rel = n
					break
				}
			}
			out = append(out, Relationship{From: a.Text, Rel: rel, To: b.Text, Evidence: textfacts.Shorten(s, 200)})
		}
	}
	return out
}

// Files declares the relationships file and the ontology area.
func Files() []*exocortexv1.FileSpec {
	return []*exocortexv1.FileSpec{
		stagelog.File(stagelog.RelationshipsID, stagelog.RelationshipsFile, exocortexv1.Access_ACCESS_WRITE, "ontology_maintenance",
			`Typed relationships between entities: kind "relationship", payload {from, rel, to, session, request_id, evidence}.`),
		stagelog.File(stagelog.RelationshipsID, stagelog.RelationshipsFile, exocortexv1.Access_ACCESS_READ, "ontology_query", "Read to tell the model what is known about the entities in play."),
		{Id: "memory_store", Path: "$EXOCORTEX_HOME/memory", Access: exocortexv1.Access_ACCESS_READ_WRITE, User: "ontology_maintenance", Doc: "Entity records in the ontology area."},
		{Id: "memory_store", Path: "$EXOCORTEX_HOME/memory", Access: exocortexv1.Access_ACCESS_READ, User: "ontology_query", Doc: "Entity records in the ontology area."},
	}
}

// Maintenance is ontology_maintenance. Home gives the home directory the
// relationships file is in.
type Maintenance struct {
	Home func() (string, error)
}

// Spec declares it.
func (e Maintenance) Spec() sdk.Spec {
	return sdk.Spec{
		Name:        "ontology_maintenance",
		Hooks:       []sdk.Hook{sdk.MonologueEnd(e)},
		Order:       59,
		Description: "Resolves the monologue's entities into ontology records (one per lower-cased name, with aliases) and appends new typed relationships to ontology/relationships.jsonl.",
		// The monologue's messages, from the operator's message on.
		ReadsHistory: true,
	}
}

// MonologueEnd updates the graph.
func (m Maintenance) MonologueEnd(ctx context.Context, c *sdk.Call, req *exocortexv1.MonologueEndRequest) (*exocortexv1.MonologueEndResponse, error) {
	if m.Home == nil {
		return nil, nil
	}
	hist := req.GetHistory()
	start := 0
	for i := len(hist) - 1; i >= 0; i-- {
		if turn.IsOperator(hist[i]) {
			start = i
			break
		}
	}
	var texts []string
	for _, msg := range hist[start:] {
		if msg.GetSignal() == "" {
			texts = append(texts, msg.GetContent())
		}
	}
	texts = append(texts, req.GetFinalResponse())

	type agg struct {
		kind     string
		mentions int
		aliases  []string
	}
	ents := map[string]*agg{}
	var order []string
	var rels []Relationship
	for _, t := range texts {
		for _, e := range textfacts.Entities(t) {
			k := Key(e.Text)
			a, ok := ents[k]
			if !ok {
				a = &agg{kind: e.Kind}
				ents[k] = a
				order = append(order, k)
			}
			a.mentions++
			if !contains(a.aliases, e.Text) {
				a.aliases = append(a.aliases, e.Text)
			}
		}
		rels = append(rels, Relationships(t)...)
	}
	sort.SliceStable(order, func(i, j int) bool { return ents[order[i]].mentions > ents[order[j]].mentions })
	if len(order) > MaxEntities {
		order = order[:MaxEntities]
	}
	session := c.Context().GetSessionId()
	mem := c.Memory().As("extension:ontology_maintenance")
	var ins []*exocortexv1.MemoryInput
	for _, k := range order {
		a := ents[k]
		mentions, aliases := a.mentions, a.aliases
		r, ok, err := mem.GetByKey(ctx, AreaOntology, "entity:"+k)
		if err != nil {
			return nil, fmt.Errorf("ontology_maintenance: %w", err)
		}
		if ok {
			meta := r.GetMetadata().AsMap()
			if n, ok := meta["mentions"].(float64); ok {
				mentions += int(n)
			}
			if old, ok := meta["aliases"].([]any); ok {
				for _, o := range old {
					if alias, ok := o.(string); ok && !contains(aliases, alias) {
						aliases = append(aliases, alias)
					}
				}
			}
		}
		sort.Strings(aliases)
		meta, err := structpb.NewStruct(map[string]any{"kind": a.kind, "mentions": mentions, "aliases": anyList(aliases)})
		if err != nil {
			return nil, fmt.Errorf("ontology_maintenance: entity %s: %w", k, err)
		}
		ins = append(ins, &exocortexv1.MemoryInput{Area: AreaOntology, Key: "entity:" + k,
			Text:     fmt.Sprintf("%s (%s), also written %s", aliases[0], a.kind, strings.Join(aliases, ", ")),
			Tags:     []string{"entity", a.kind},
			Metadata: meta})
	}
	if _, err := mem.Save(ctx, ins...); err != nil {
		return nil, fmt.Errorf("ontology_maintenance: %w", err)
	}
	if len(rels) == 0 {
		return nil, nil
	}
	home, err := m.Home()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(home, stagelog.RelationshipsFile)
	seen := map[string]bool{}
	_ = stagelog.Read(ctx, path, 0, func(r stagelog.Record) error {
		var rel Relationship
		if r.Decode(&rel) == nil {
			seen[rel.key()] = true
		}
		return nil
	})
	var entries []stagelog.Entry
	for _, r := range rels {
		if seen[r.key()] || Key(r.From) == Key(r.To) {
			continue
		}
		seen[r.key()] = true
		r.Session, r.RequestID = session, c.Context().GetRequestId()
		entries = append(entries, stagelog.Entry{Kind: stagelog.KindRelationship, Session: session, Payload: r})
	}
	if _, err := stagelog.Append(ctx, path, entries, nil); err != nil {
		return nil, fmt.Errorf("ontology_maintenance: %w", err)
	}
	return nil, nil
}

// anyList is xs as the []any a structpb.Struct holds.
func anyList(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Query is ontology_query. Home gives the home directory the relationships
// file is in.
type Query struct {
	Home  func() (string, error)
	cache *relCache
}

// relCache holds the relationships by entity key for one version of the file
// (path, size, modification time). It holds no session data.
type relCache struct {
	mu      sync.Mutex
	version string
	byKey   map[string][]Relationship
}

// NewQuery returns ontology_query.
func NewQuery(home func() (string, error)) Query { return Query{Home: home, cache: &relCache{}} }

// Spec declares it.
func (e Query) Spec() sdk.Spec {
	return sdk.Spec{
		Name:          "ontology_query",
		Hooks:         []sdk.Hook{sdk.MessageLoopPromptsAfter(e)},
		Order:         58,
		Reads:         []sdk.KeyRef{entities.Key()},
		InjectsPrompt: true,
		Description:   "Adds the ONTOLOGY block: what the relationships file and the ontology records say about the most recent working-memory entities.",
	}
}

func (q Query) relationships(ctx context.Context, path string) map[string][]Relationship {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	version := fmt.Sprintf("%d %s", fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
	cache := q.cache
	if cache == nil {
		cache = &relCache{}
	}
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if cache.version == version {
		return cache.byKey
	}
	by := map[string][]Relationship{}
	_ = stagelog.Read(ctx, path, 0, func(r stagelog.Record) error {
		var rel Relationship
		if r.Decode(&rel) == nil {
			by[Key(rel.From)] = append(by[Key(rel.From)], rel)
			by[Key(rel.To)] = append(by[Key(rel.To)], rel)
		}
		return nil
	})
	cache.version, cache.byKey = version, by
	return by
}

// MessageLoopPromptsAfter adds what is known.
func (q Query) MessageLoopPromptsAfter(ctx context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	wm, ok := entities.Key().Get(c)
	if !ok || q.Home == nil {
		return nil, nil
	}
	home, err := q.Home()
	if err != nil {
		return nil, nil
	}
	by := q.relationships(ctx, filepath.Join(home, stagelog.RelationshipsFile))
	var lines []string
	ents := entities.Recent(wm, MaxQuery)
	records := map[string]string{}
	mem := c.Memory()
	for _, e := range ents {
		r, ok, err := mem.GetByKey(ctx, AreaOntology, "entity:"+Key(e))
		if err != nil {
			c.Logger().Debug("ontology_query: the memory store is not available", "err", err)
			break
		}
		if ok && r.GetStatus() == "active" {
			if n, ok := r.GetMetadata().AsMap()["mentions"].(float64); ok {
				records[e] = fmt.Sprintf("mentioned %d times before", int(n))
			}
		}
	}
	for _, e := range ents {
		rels := by[Key(e)]
		if len(rels) == 0 && records[e] == "" {
			continue
		}
		var parts []string
		for i, r := range rels {
			if i >= MaxRelsShow {
				parts = append(parts, fmt.Sprintf("and %d more", len(rels)-MaxRelsShow))
				break
			}
			if Key(r.From) == Key(e) {
				parts = append(parts, strings.ReplaceAll(r.Rel, "_", " ")+" "+r.To)
			} else {
				parts = append(parts, r.From+" "+strings.ReplaceAll(r.Rel, "_", " ")+" it")
			}
		}
		line := "- " + e
		if records[e] != "" {
			line += " (" + records[e] + ")"
		}
		if len(parts) > 0 {
			line += ": " + strings.Join(parts, "; ")
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return nil, nil
	}
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: []*exocortexv1.PromptBlock{{
		Title: "ONTOLOGY", Content: "What earlier conversations established about the things in play:\n" + strings.Join(lines, "\n"),
	}}}, nil
}
