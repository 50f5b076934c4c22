// Package recall brings long-term memories into the prompt: ECE's universal
// context retrieval (recall a block of memories for every user prompt), shaped
// by the seed's relevance filter and memory enhancement, plus the once-per-session
// memory catalog. All of it runs at message_loop_prompts_after, the last point
// where text reaches the model's call. The store is the home's memory service,
// reached through the host like any plugin's (sdk.Call.Memory): the plugin
// declares uses_memory and the areas it writes.
//
// The pipeline keeps its state in memory_candidates (monologue scope), so each
// stage is an extension of its own, can be disabled alone, and is visible in the
// wiring:
//
//	51 recall_search            search the store with the user's prompt
//	55 memory_relevance_filter  drop weak, present, duplicate and loop-period hits
//	56 memory_enhancement       expand the query from the domain; decay by age
//	59 recall                   render the block within its size; say why each matched
//
// recall_search (order 51: 50, Agent Zero's recall number, is taken by
// examples/hello, which the end-to-end test loads beside the built-ins). Once per monologue, on its first iteration (the
// user's prompt): the operator's message (the context's message, found among its
// recent messages) is the query, searched with hybrid recall
// (BM25 alone without an embedder) for Pool candidates across every area but the
// library. Each candidate keeps the store's reasons (retriever ranks, fused
// score). A memory service that does not answer leaves a notice and no
// candidates; the turn goes on.
//
// memory_relevance_filter (order 55, as in the seed), on retrieved candidates:
//   - a score below RelativeFloor of the best is a weak match;
//   - a memory whose text is already in the conversation (word overlap of 0.8
//     with a message of the whole history, which the filter and the enhancement
//     declare they read) adds nothing;
//   - a near duplicate (overlap 0.8) of a better candidate is dropped;
//   - a memory tagged loop_period and not adjudicated was written while the agent
//     looped: it waits for the sleep consolidation;
//   - a memory naming an entity of working memory gains 20% ("mentions X").
//
// memory_enhancement (order 56, as in the seed): when fewer than Limit
// candidates are left, the query is searched again expanded with the primary
// domain's terms (bst_store, package belief) and the three most recent
// working-memory entities; new hits go through the same filter. Then every
// candidate decays with age, by a half-life that depends on the domain
// (HalfLife): score × (0.5 + 0.5 × 0.5^(age/half-life)) × (0.75 + 0.5 ×
// importance), and the candidates are ranked again.
//
// Agent Zero's recall settings are tools.memory.recall in config.yaml (Options):
// a similarity threshold (cosine with vectors, BM25 over the best without),
// below which recall_search keeps a hit only as a dropped candidate naming the
// threshold; the block's limit; per-area limits (e.g. solutions: 3); and the
// block's size.
//
// recall (order 59) renders the kept candidates, best first, into the MEMORY
// RECALL block until BlockChars (configurable), each with why it matched, on
// every iteration of the monologue; on the first it records the access of the
// memories shown (memory maintenance keeps what is used).
//
// memory_catalog (order 18, as in the seed; once per session through the host's
// once_per_session, not a hand-rolled gate) adds MEMORY CATALOG: the memories per
// area and their most used tags, and records it in memory_catalog_built.
package recall

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/exocortex/exocortex/extensions/internal/entities"
	"github.com/exocortex/exocortex/extensions/internal/textfacts"
	"github.com/exocortex/exocortex/extensions/internal/turn"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/protocol"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/toolsettings"
)

// Defaults.
const (
	DefaultLimit      = 5
	DefaultBlockChars = 2000
	Pool              = protocol.RecallPool
	RelativeFloor     = 0.2
	Overlap           = 0.8
)

// Stages of memory_candidates.
const (
	StageRetrieved = "retrieved"
	StageFiltered  = "filtered"
	StageEnhanced  = "enhanced"
)

// HalfLife is the age at which a memory's recency factor halves, by domain.
func HalfLife(domain string) time.Duration {
	const day = 24 * time.Hour
	switch domain {
	case "debugging", "operations":
		return 14 * day
	case "coding", "planning":
		return 30 * day
	case "research", "investigation", "memory", "writing":
		return 180 * day
	}
	return 60 * day
}

// Options configure the recall extensions (Agent Zero's memory recall
// settings). A zero field takes the configured value (Config), else the default.
type Options struct {
	// Limit is how many memories the block aims for (DefaultLimit when 0).
	Limit int
	// BlockChars bounds the block (DefaultBlockChars when 0).
	BlockChars int
	// Threshold is the least similarity a recalled memory needs: its cosine
	// similarity to the prompt when the store has vectors, else its BM25 score
	// over the best hit's. Below it a candidate is dropped, saying so. 0: none.
	Threshold float64
	// AreaLimits caps the memories of one area in the block (e.g. solutions:
	// 3); an area not named is bounded by Limit alone.
	AreaLimits map[string]int
	// Config supplies tools.memory.recall from config.yaml (nil: none).
	Config func() toolsettings.Recall
	// Now is the time for decay (time.Now when nil).
	Now func() time.Time
}

func (o Options) config() toolsettings.Recall {
	if o.Config == nil {
		return toolsettings.Recall{}
	}
	return o.Config()
}

func (o Options) limit() int {
	if o.Limit > 0 {
		return o.Limit
	}
	if c := o.config(); c.Limit > 0 {
		return c.Limit
	}
	return DefaultLimit
}

func (o Options) blockChars() int {
	if o.BlockChars > 0 {
		return o.BlockChars
	}
	if c := o.config(); c.BlockChars > 0 {
		return c.BlockChars
	}
	return DefaultBlockChars
}

func (o Options) threshold() float64 {
	if o.Threshold > 0 {
		return o.Threshold
	}
	return o.config().Threshold
}

func (o Options) areaLimits() map[string]int {
	if o.AreaLimits != nil {
		return o.AreaLimits
	}
	return o.config().AreaLimits
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// CandidatesKey is the memory_candidates key.
func CandidatesKey() sdk.Key[*exocortexv1.MemoryCandidates] {
	return sdk.KeyOf[*exocortexv1.MemoryCandidates]()
}
func bstKey() sdk.Key[*exocortexv1.BeliefState] { return sdk.KeyOf[*exocortexv1.BeliefState]() }
func catalogBuilt() sdk.Key[*exocortexv1.MemoryCatalogBuilt] {
	return sdk.KeyOf[*exocortexv1.MemoryCatalogBuilt]()
}

// search runs one memory search (recall's options, protocol.RecallSearchOptions,
// which /memory search shares, with n hits) and
// converts the hits. A hit whose similarity (its match score: memory.MatchScore
// against the best hit) is below threshold is kept as a dropped candidate,
// saying so, so the wiring shows what the threshold removed.
func search(ctx context.Context, c *sdk.Call, query string, n int, threshold float64) ([]*exocortexv1.MemoryCandidate, string, error) {
	opts := protocol.RecallSearchOptions()
	opts.Limit = int32(n)
	res, err := c.Memory().Search(ctx, query, opts)
	if err != nil {
		return nil, "", err
	}
	var out []*exocortexv1.MemoryCandidate
	for _, h := range res.GetHits() {
		r := h.GetRecord()
		cd := &exocortexv1.MemoryCandidate{
			Id: r.GetId(), Area: r.GetArea(), Text: textfacts.Shorten(r.GetText(), 600), Tags: r.GetTags(), Score: h.GetScore(), Why: h.GetWhy(),
			UpdatedUtc: r.GetUpdated().AsTime().UTC().Format(time.RFC3339), Importance: r.GetImportance(),
		}
		if sim := h.GetMatch(); threshold > 0 && sim < threshold {
			cd.Dropped, cd.DropReason = true, fmt.Sprintf("similarity %.2f below the threshold %.2f", sim, threshold)
		}
		out = append(out, cd)
	}
	return out, res.GetNotice(), nil
}

// Search is recall_search.
type Search struct {
	Options Options
}

// Spec declares it.
func (e Search) Spec() sdk.Spec {
	return sdk.Spec{
		Name:        "recall_search",
		Hooks:       []sdk.Hook{sdk.MessageLoopPromptsAfter(e)},
		Order:       51,
		Reads:       []sdk.KeyRef{CandidatesKey()},
		Writes:      []sdk.KeyRef{CandidatesKey()},
		Description: "Once per user prompt, searches long-term memory (hybrid, or BM25 alone) with the operator's message into memory_candidates, with why each matched.",
	}
}

// MessageLoopPromptsAfter searches on the monologue's first call.
func (s Search) MessageLoopPromptsAfter(ctx context.Context, c *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	if cur, ok := CandidatesKey().Get(c); ok && cur.GetRequestId() == c.Context().GetRequestId() {
		return nil, nil
	}
	// The operator's message is among the recent messages on the monologue's
	// first iteration, when the search runs: the history is not needed.
	m := turn.UserMessage(c)
	if m == nil {
		return nil, nil
	}
	query := m.GetContent()
	mc := &exocortexv1.MemoryCandidates{Query: textfacts.Shorten(query, 300), Stage: StageRetrieved, RequestId: c.Context().GetRequestId(), SearchedIteration: req.GetIteration()}
	hits, notice, err := search(ctx, c, query, Pool, s.Options.threshold())
	if err != nil {
		c.Logger().Warn("recall: the memory store is not available", "err", err)
		mc.Notice = "memory unavailable: " + err.Error()
	} else {
		mc.Candidates, mc.Notice = hits, notice
	}
	CandidatesKey().Set(c, mc)
	return nil, nil
}

// filter applies the relevance rules to cands (best first), given the
// conversation and the working-memory entities.
func filter(cands []*exocortexv1.MemoryCandidate, history []*exocortexv1.Message, entities []string) {
	top := 0.0
	for _, cd := range cands {
		if !cd.GetDropped() && cd.GetScore() > top {
			top = cd.GetScore()
		}
	}
	var kept []*exocortexv1.MemoryCandidate
	for _, cd := range cands {
		if cd.GetDropped() {
			continue
		}
		drop := func(why string) { cd.Dropped, cd.DropReason = true, why }
		switch {
		case top > 0 && cd.GetScore() < RelativeFloor*top:
			drop(fmt.Sprintf("weak match (%.0f%% of the best)", 100*cd.GetScore()/top))
		case hasTag(cd, "loop_period") && !hasTag(cd, "adjudicated"):
			drop("written during a loop, not yet adjudicated")
		default:
			for _, m := range history {
				if textfacts.Jaccard(m.GetContent(), cd.GetText()) >= Overlap || strings.Contains(m.GetContent(), textfacts.Shorten(cd.GetText(), 80)) && len(cd.GetText()) > 20 {
					drop("already in the conversation")
					break
				}
			}
			if cd.GetDropped() {
				continue
			}
			for _, k := range kept {
				if textfacts.Jaccard(k.GetText(), cd.GetText()) >= Overlap {
					drop("duplicate of " + k.GetId())
					break
				}
			}
		}
		if cd.GetDropped() {
			continue
		}
		low := strings.ToLower(cd.GetText())
		for _, e := range entities {
			if len(e) > 2 && strings.Contains(low, strings.ToLower(e)) {
				cd.Score *= 1.2
				cd.Why += "; mentions " + e + " (working memory)"
				break
			}
		}
		kept = append(kept, cd)
	}
}

func hasTag(cd *exocortexv1.MemoryCandidate, tag string) bool {
	for _, t := range cd.GetTags() {
		if t == tag {
			return true
		}
	}
	return false
}

// Filter is memory_relevance_filter.
type Filter struct{}

// Spec declares it.
func (e Filter) Spec() sdk.Spec {
	return sdk.Spec{
		Name:        "memory_relevance_filter",
		Hooks:       []sdk.Hook{sdk.MessageLoopPromptsAfter(e)},
		Order:       55,
		Reads:       []sdk.KeyRef{CandidatesKey(), entities.Key()},
		Writes:      []sdk.KeyRef{CandidatesKey()},
		Description: "Drops recalled memories that are weak, already in the conversation, duplicates or from a loop period; boosts those naming working-memory entities.",
		// A memory already anywhere in the conversation adds nothing.
		ReadsHistory: true,
		// It filters the candidates in its declared keys by their text and the
		// history: unlike its neighbours it never opens the memory store.
		EffectsDeclared: true,
	}
}

// MessageLoopPromptsAfter filters fresh candidates.
func (Filter) MessageLoopPromptsAfter(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	mc, ok := CandidatesKey().Get(c)
	if !ok || mc.GetStage() != StageRetrieved {
		return nil, nil
	}
	wm, _ := entities.Key().Get(c)
	filter(mc.Candidates, req.GetHistory(), entities.Recent(wm, 10))
	sortCands(mc.Candidates)
	mc.Stage = StageFiltered
	CandidatesKey().Set(c, mc)
	return nil, nil
}

func sortCands(cs []*exocortexv1.MemoryCandidate) {
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].GetDropped() != cs[j].GetDropped() {
			return !cs[i].GetDropped()
		}
		return cs[i].GetScore() > cs[j].GetScore()
	})
}

func keptCount(cs []*exocortexv1.MemoryCandidate) int {
	n := 0
	for _, cd := range cs {
		if !cd.GetDropped() {
			n++
		}
	}
	return n
}

// Enhancement is memory_enhancement.
type Enhancement struct {
	Options Options
}

// Spec declares it.
func (e Enhancement) Spec() sdk.Spec {
	return sdk.Spec{
		Name:        "memory_enhancement",
		Hooks:       []sdk.Hook{sdk.MessageLoopPromptsAfter(e)},
		Order:       56,
		Reads:       []sdk.KeyRef{CandidatesKey(), bstKey(), entities.Key()},
		Writes:      []sdk.KeyRef{CandidatesKey()},
		Description: "Expands a thin recall with the domain's terms (bst_store) and working-memory entities; decays memories by age with a domain half-life and weighs importance.",
		// New hits go through the filter, which compares them with the conversation.
		ReadsHistory: true,
	}
}

// MessageLoopPromptsAfter expands and decays.
func (e Enhancement) MessageLoopPromptsAfter(ctx context.Context, c *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	mc, ok := CandidatesKey().Get(c)
	if !ok || (mc.GetStage() != StageRetrieved && mc.GetStage() != StageFiltered) || strings.HasPrefix(mc.GetNotice(), "memory unavailable") {
		return nil, nil
	}
	bs, _ := bstKey().Get(c)
	wm, _ := entities.Key().Get(c)
	recent := entities.Recent(wm, 3)
	if keptCount(mc.Candidates) < e.Options.limit() {
		terms := append(append([]string(nil), bs.GetExpansions()...), recent...)
		if len(terms) > 0 {
			more, _, err := search(ctx, c, mc.GetQuery()+" "+strings.Join(terms, " "), Pool, e.Options.threshold())
			if err != nil {
				c.Logger().Warn("memory_enhancement: expanded search failed", "err", err)
			}
			have := map[string]bool{}
			for _, cd := range mc.Candidates {
				have[cd.GetId()] = true
			}
			var fresh []*exocortexv1.MemoryCandidate
			for _, cd := range more {
				if !have[cd.GetId()] {
					cd.Why += "; expanded query (+" + strings.Join(terms, " ") + ")"
					fresh = append(fresh, cd)
				}
			}
			filter(fresh, req.GetHistory(), entities.Recent(wm, 10))
			mc.Candidates = append(mc.Candidates, fresh...)
			mc.Expansions = terms
		}
	}
	hl := HalfLife(bs.GetPrimaryDomain())
	now := e.Options.now()
	for _, cd := range mc.Candidates {
		if cd.GetDropped() {
			continue
		}
		t, err := time.Parse(time.RFC3339, cd.GetUpdatedUtc())
		if err != nil {
			continue
		}
		age := max(now.Sub(t), 0)
		f := (0.5 + 0.5*math.Pow(0.5, age.Hours()/hl.Hours())) * (0.75 + 0.5*cd.GetImportance())
		cd.Score *= f
		cd.Why += fmt.Sprintf("; ×%.2f for age %s (half-life %s) and importance %.1f", f, days(age), days(hl), cd.GetImportance())
	}
	sortCands(mc.Candidates)
	mc.Stage = StageEnhanced
	CandidatesKey().Set(c, mc)
	return nil, nil
}

func days(d time.Duration) string {
	if d < 48*time.Hour {
		return fmt.Sprintf("%.0fh", d.Hours())
	}
	return fmt.Sprintf("%.0fd", d.Hours()/24)
}

// Block is recall: it renders the MEMORY RECALL block.
type Block struct {
	Options Options
}

// Spec declares it.
func (e Block) Spec() sdk.Spec {
	return sdk.Spec{
		Name:          "recall",
		Hooks:         []sdk.Hook{sdk.MessageLoopPromptsAfter(e)},
		Order:         59,
		Reads:         []sdk.KeyRef{CandidatesKey()},
		InjectsPrompt: true,
		Description:   "Adds the MEMORY RECALL block (size configurable): the kept memories, best first, each with why it matched.",
	}
}

// Render is the block's text, "" when no memory is kept: at most limit
// memories, at most areaLimits[a] of area a, within chars.
func Render(mc *exocortexv1.MemoryCandidates, limit, chars int, areaLimits map[string]int) (string, []string) {
	var b strings.Builder
	b.WriteString("Memories recalled for this request, best first (check them before relying on them):")
	var ids []string
	perArea := map[string]int{}
	for _, cd := range mc.GetCandidates() {
		if cd.GetDropped() || len(ids) >= limit {
			continue
		}
		if n, ok := areaLimits[cd.GetArea()]; ok && perArea[cd.GetArea()] >= n {
			continue
		}
		perArea[cd.GetArea()]++
		line := fmt.Sprintf("\n- [%s] %s\n  why: %s", cd.GetArea(), cd.GetText(), cd.GetWhy())
		if b.Len()+len(line) > chars {
			if len(ids) > 0 {
				break
			}
			line = textfacts.Shorten(line, chars-b.Len())
		}
		b.WriteString(line)
		ids = append(ids, cd.GetId())
	}
	if len(ids) == 0 {
		return "", nil
	}
	return b.String(), ids
}

// MessageLoopPromptsAfter renders the block.
func (bl Block) MessageLoopPromptsAfter(ctx context.Context, c *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	mc, ok := CandidatesKey().Get(c)
	if !ok || mc.GetRequestId() != c.Context().GetRequestId() {
		return nil, nil
	}
	chars := bl.Options.blockChars()
	if n := req.GetBlockBudgetTokens(); n > 0 {
		// The block follows the budget the host leaves (three bytes a token,
		// the host's own conservative count), never more than configured.
		chars = min(chars, int(n)*3)
	}
	if n := c.Context().GetProcessingDirectives().GetResponseConstraints().GetMaxLength(); n > 0 {
		chars = min(chars, int(n)) // cut last time: what fitted
	}
	text, ids := Render(mc, bl.Options.limit(), chars, bl.Options.areaLimits())
	if text == "" {
		return nil, nil
	}
	if req.GetIteration() == mc.GetSearchedIteration() {
		if err := c.Memory().As("extension:recall").RecordAccess(ctx, ids...); err != nil {
			c.Logger().Warn("recall: recording access failed", "err", err)
		}
	}
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: []*exocortexv1.PromptBlock{{Title: "MEMORY RECALL", Content: text}}}, nil
}

// Catalog is memory_catalog.
type Catalog struct{}

// TopCatalogTags is how many tags the catalog names per area.
const TopCatalogTags = 6

// Spec declares it.
func (e Catalog) Spec() sdk.Spec {
	return sdk.Spec{
		Name:           "memory_catalog",
		Hooks:          []sdk.Hook{sdk.MessageLoopPromptsAfter(e)},
		Order:          18,
		Writes:         []sdk.KeyRef{catalogBuilt()},
		InjectsPrompt:  true,
		OncePerSession: true,
		Description:    "Once per session (the host's once primitive), adds MEMORY CATALOG: memories per area with their most used tags.",
	}
}

// MessageLoopPromptsAfter adds the catalog.
func (cat Catalog) MessageLoopPromptsAfter(ctx context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	// The active records outside the library, per area: one pass over the
	// state, no copies (at 100k records, Stats and List took most of a second
	// under load).
	census, err := c.Memory().Census(ctx, nil)
	if err != nil {
		c.Logger().Warn("memory_catalog: the memory store is not available", "err", err)
		return nil, nil
	}
	var text string
	areas := 0
	names := make([]string, 0, len(census))
	for a := range census {
		if a != AreaLibrary {
			names = append(names, a)
		}
	}
	sort.Strings(names)
	var lines []string
	total := 0
	for _, a := range names {
		n, tags := int(census[a].GetRecords()), census[a].GetTags()
		if n == 0 {
			continue
		}
		tl := make([]string, 0, len(tags))
		for t := range tags {
			tl = append(tl, t)
		}
		sort.Slice(tl, func(i, j int) bool { return tags[tl[i]] > tags[tl[j]] || tags[tl[i]] == tags[tl[j]] && tl[i] < tl[j] })
		if len(tl) > TopCatalogTags {
			tl = tl[:TopCatalogTags]
		}
		line := fmt.Sprintf("- %s: %d", a, n)
		if len(tl) > 0 {
			line += " (tags: " + strings.Join(tl, ", ") + ")"
		}
		lines = append(lines, line)
		total += n
		areas++
	}
	if total > 0 {
		text = fmt.Sprintf("Your long-term memory holds %d memories:\n%s\nmemory_load searches them; the most relevant are recalled for you under MEMORY RECALL.", total, strings.Join(lines, "\n"))
	}
	catalogBuilt().Set(c, &exocortexv1.MemoryCatalogBuilt{Built: text != "", Areas: int32(areas)})
	if text == "" {
		return nil, nil
	}
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: []*exocortexv1.PromptBlock{{Title: "MEMORY CATALOG", Content: text}}}, nil
}

// The memory areas the recall extensions name (package memory's).
const (
	AreaLibrary   = "library"
	AreaFragments = "fragments"
)

// WriteAreas are the memory areas the recall extensions write (history_archive:
// fragments), for the plugin's MemoryWriteAreas.
func WriteAreas() []string { return []string{AreaFragments} }

// Files declares the memory store as the recall extensions use it.
func Files() []*exocortexv1.FileSpec {
	store := func(user string, a exocortexv1.Access, doc string) *exocortexv1.FileSpec {
		return &exocortexv1.FileSpec{Id: "memory_store", Path: "$EXOCORTEX_HOME/memory", Access: a, User: user, Doc: doc}
	}
	return []*exocortexv1.FileSpec{
		store("recall_search", exocortexv1.Access_ACCESS_READ, "Searched with the user's prompt."),
		store("memory_enhancement", exocortexv1.Access_ACCESS_READ, "Searched again with the expanded query."),
		store("recall", exocortexv1.Access_ACCESS_READ_WRITE, "Records the access of the memories shown."),
		store("memory_catalog", exocortexv1.Access_ACCESS_READ, "Counted per area and tag."),
		store("history_archive", exocortexv1.Access_ACCESS_WRITE, "Messages leaving the prompt's verbatim window, written to fragments."),
	}
}
