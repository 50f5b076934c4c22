package memory

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/exocortex/exocortex/memory/fulltext"
	"github.com/exocortex/exocortex/memory/recall"
)

// Filter narrows recall and listing. The zero Filter admits active records of every
// area except the library.
type Filter struct {
	// Areas admits any of these areas; empty means every area except library
	// (which is only searched when named).
	Areas []string `json:"areas,omitempty"`
	// Tags admits records carrying every one of these tags.
	Tags []string `json:"tags,omitempty"`
	Key  string   `json:"key,omitempty"`
	// Statuses admits any of these; empty means active only.
	Statuses []Status `json:"statuses,omitempty"`
	// From and To bound the creation time (inclusive From, exclusive To); zero
	// values do not bound.
	From time.Time `json:"from,omitzero"`
	To   time.Time `json:"to,omitzero"`
	// Session and Source, when set, admit only the records whose provenance
	// names that session and source (what a session wrote): List and Census
	// test them on each record without decoding the others in full; the
	// indexes know neither, so a search filters its hits by them.
	Session string `json:"session,omitempty"`
	Source  string `json:"source,omitempty"`
}

func (f Filter) match(r *Record) bool {
	if len(f.Areas) == 0 {
		if r.Area == AreaLibrary {
			return false
		}
	} else if !contains(f.Areas, r.Area) {
		return false
	}
	if len(f.Statuses) == 0 {
		if r.Status != StatusActive {
			return false
		}
	} else if !contains(f.Statuses, r.Status) {
		return false
	}
	for _, t := range f.Tags {
		if !r.HasTag(t) {
			return false
		}
	}
	if f.Key != "" && r.Key != f.Key {
		return false
	}
	if !f.From.IsZero() && r.Created.Before(f.From) {
		return false
	}
	if !f.To.IsZero() && !r.Created.Before(f.To) {
		return false
	}
	if f.Session != "" && r.Provenance.Session != f.Session {
		return false
	}
	if f.Source != "" && r.Provenance.Source != f.Source {
		return false
	}
	return true
}

func contains[T comparable](xs []T, x T) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (f Filter) fulltext() fulltext.Filter {
	ff := fulltext.Filter{Areas: f.Areas, Tags: normTags(f.Tags), Key: f.Key, From: f.From, To: f.To}
	if len(f.Areas) == 0 {
		ff.ExcludeAreas = []string{AreaLibrary}
	}
	// Almost every record is active: excluding archived ones is far cheaper for
	// Bleve than requiring "active", which matches nearly every document.
	active, archived := len(f.Statuses) == 0 || contains(f.Statuses, StatusActive), contains(f.Statuses, StatusArchived)
	switch {
	case active && !archived:
		ff.ExcludeStatuses = []string{string(StatusArchived)}
	case archived && !active:
		ff.Statuses = []string{string(StatusArchived)}
	}
	return ff
}

// Mode chooses the retrievers.
type Mode string

const (
	ModeHybrid Mode = "hybrid"
	ModeBM25   Mode = "bm25"
	ModeVector Mode = "vector"
)

// SearchOptions tune a search. The zero value gives the ten best active records by
// hybrid recall (BM25 alone without an embedder).
type SearchOptions struct {
	Limit  int // default 10
	Filter Filter
	Mode   Mode // default hybrid
	// Fusion combines the two legs: FusionScore (the default) or FusionRRF.
	Fusion Fusion
	// RRFK is the reciprocal rank fusion constant (default recall.DefaultK = 60).
	RRFK float64
	// BM25Weight and VectorWeight weigh the legs in the fusion; 0 takes the
	// store's defaults, which follow the embedder (see DefaultWeights).
	BM25Weight, VectorWeight float64
	// Context is the share of the neighbouring records' scores (the records
	// written just before and after, in the same area and session) added to a
	// record's own; 0 means DefaultContext, a negative value none.
	Context float64
	// ContextWindow is how many records on each side count (0: the default) and
	// ContextDecay how much less each further one counts (0: the default).
	ContextWindow int
	ContextDecay  float64
	// ContextReply lifts the record right after one that asks a question (its
	// text, less an image caption, ends with "?"): it takes that question's
	// score 1+ContextReply times as much as another neighbour's, since the
	// answer to "Got any tips for getting started?" is the turn after it and
	// the question's words are its topic. 0 means DefaultContextReply, a
	// negative value none.
	ContextReply float64
	// SpeakerBoost multiplies by 1+SpeakerBoost each leg's score of a record
	// spoken by someone the query names (a record "Name: text", as imported
	// conversations are written). 0 means none: it helped on one half of the
	// LoCoMo dev conversations and not the other (docs/perf/memory.md).
	SpeakerBoost float64
	// SpeakerPrior adds to the score of each of the best candidates spoken by
	// someone the query names ("Name: text") this share of the best
	// candidate's score, after the fusion: in a conversation, what a person
	// did is mostly said by that person. Unlike SpeakerBoost it does not pass
	// to the neighbours through the context. Only the default (hybrid) search
	// gets it. 0 means DefaultSpeakerPrior, a negative value none.
	SpeakerPrior float64
	// SpeakerLead is the share SpeakerPrior rises to when the best candidate
	// is itself spoken by someone the query names and the query does not ask
	// "when": the ranking agrees with the name. 0 means DefaultSpeakerLead, a
	// negative value none (the prior stays SpeakerPrior). A negative
	// SpeakerPrior turns both off.
	SpeakerLead float64
	// QuestionPenalty takes from the score of each of the best candidates of
	// a conversation that asks a question (its text, less an image caption,
	// ends with "?") this share of the best candidate's score, after the
	// fusion: its answer, which ContextReply lifts, is more often what was
	// looked for. Only the default (hybrid) search gets it. 0 means
	// DefaultQuestionPenalty, a negative value none.
	QuestionPenalty float64
	// Feedback expands the BM25 query with the FeedbackTerms most telling words
	// of its Feedback best hits (pseudo-relevance feedback), each counting
	// FeedbackBoost as much as a word of the query. 0 means the defaults
	// (DefaultFeedback...), a negative Feedback none.
	Feedback, FeedbackTerms int
	FeedbackBoost           float64
	// Expand adds to the BM25 query of a hybrid search, for each of its words,
	// up to this many words nearest in meaning (when the embedder has word
	// vectors: GloVe), each with cosine similarity at least ExpandMinSim
	// (0: DefaultExpandMinSim) and counting ExpandBoost (0: DefaultExpandBoost)
	// times its similarity as much as a word of the query. 0 means none, the
	// default: it did not lift recall on the dev set (docs/perf/memory.md).
	Expand       int
	ExpandMinSim float64
	ExpandBoost  float64
	// SoftMatch re-ranks the best hybrid candidates by how closely their words
	// match the query's in meaning (when the embedder has word vectors: GloVe):
	// for each content word of the query, the best cosine similarity of a word
	// of the record, counted from SoftMatchFloor up. The scores, over the best,
	// times SoftMatch are added to the fused score. 0 means the defaults
	// (DefaultSoftMatch...), a negative SoftMatch none.
	SoftMatch      float64
	SoftMatchFloor float64
	// MaxDF drops query words found in more than this share of the records
	// (0: fulltext.DefaultMaxDF; 1 keeps them all).
	MaxDF float64
	// Candidates is how many hits each retriever contributes before fusion
	// (default max(5·Limit, 100)).
	Candidates int
	// RecencyHalfLife, when set, weighs the fused score down with age (updated
	// time): a memory one half-life old keeps 1 - RecencyWeight/2 of its score.
	RecencyHalfLife time.Duration
	RecencyWeight   float64 // default 0.3
	// MMRLambda in (0, 1) re-ranks for diversity (maximal marginal relevance); 0
	// or 1 keeps the relevance order.
	MMRLambda float64
	// TokenBudget caps the rendered block; hits that do not fit are dropped from
	// the end. 0 means no cap.
	TokenBudget int
	// RecordAccess appends an access event for the returned records.
	RecordAccess bool
	Source       Source
	// Now is the reference time for recency (default time.Now).
	Now time.Time
}

// Hit is one recalled record and why it was recalled.
type Hit struct {
	Record *Record `json:"record"`
	// BM25Rank and VectorRank are 1-based ranks in each retriever's list (0: not
	// in that list).
	BM25Rank   int     `json:"bm25_rank"`
	BM25Score  float64 `json:"bm25_score,omitempty"`
	VectorRank int     `json:"vector_rank"`
	Similarity float64 `json:"similarity,omitempty"` // cosine similarity to the query
	Fused      float64 `json:"fused"`                // fused score of the legs
	Score      float64 `json:"score"`                // after recency weighting
	// Context is the part of Fused that came from the neighbouring records: the
	// record was chosen (partly) because the records around it match.
	Context float64 `json:"context,omitempty"`
	// Meaning is the part of Fused that came from the record's words being
	// close in meaning to the query's (SearchOptions.SoftMatch).
	Meaning float64 `json:"meaning,omitempty"`
	// Speaker is the part of Fused that came from the record being spoken by
	// someone the query names (SearchOptions.SpeakerPrior).
	Speaker float64 `json:"speaker,omitempty"`
	// Asks is what Fused lost for the record asking a question
	// (SearchOptions.QuestionPenalty).
	Asks   float64 `json:"asks,omitempty"`
	Tokens int     `json:"tokens"`
}

// Why says in words why the hit matched.
func (h Hit) Why() string {
	var parts []string
	if h.BM25Rank > 0 {
		parts = append(parts, fmt.Sprintf("BM25 rank %d (score %.3f)", h.BM25Rank, h.BM25Score))
	}
	if h.VectorRank > 0 {
		parts = append(parts, fmt.Sprintf("vector rank %d (similarity %.3f)", h.VectorRank, h.Similarity))
	}
	if h.Context > 0 && h.Fused > 0 {
		parts = append(parts, fmt.Sprintf("%.0f%% from the records around it", 100*h.Context/h.Fused))
	}
	if h.Meaning > 0 && h.Fused > 0 {
		parts = append(parts, fmt.Sprintf("%.0f%% from words close in meaning", 100*h.Meaning/h.Fused))
	}
	if h.Speaker > 0 && h.Fused > 0 {
		parts = append(parts, fmt.Sprintf("%.0f%% from being said by someone the query names", 100*h.Speaker/h.Fused))
	}
	if h.Asks > 0 {
		parts = append(parts, fmt.Sprintf("%.3f less for asking a question", h.Asks))
	}
	if len(parts) == 0 {
		parts = append(parts, "no direct match")
	}
	s := strings.Join(parts, ", ")
	s += fmt.Sprintf("; fused %.5f", h.Fused)
	if h.Score != h.Fused {
		s += fmt.Sprintf(", %.5f after recency", h.Score)
	}
	return s
}

// Result is the answer to a search.
type Result struct {
	Query string `json:"query"`
	Mode  Mode   `json:"mode"`
	// Notice says what limited the search (no embedder, vectors lagging).
	Notice string `json:"notice,omitempty"`
	Hits   []Hit  `json:"hits"`
	// Block is the hits rendered for a prompt, within the token budget.
	Block  string `json:"block"`
	Tokens int    `json:"tokens"`
	// Dropped counts hits left out by the token budget.
	Dropped int `json:"dropped,omitempty"`
}

// Search runs hybrid recall for query. A blank query ("" or only spaces, the
// same) lists what the filter admits, by id, through the BM25 leg alone: a lookup
// by key or tag. The CLI refuses a blank query, which without a filter would
// list arbitrary records.
//
// A search that finds the record state damaged (see reading) runs again on
// the state rebuilt from the journal; a rebuild that does not finish (ctx) is
// a *RepairError.
func (s *Store) Search(ctx context.Context, query string, o SearchOptions) (Result, error) {
	if o.Limit <= 0 {
		o.Limit = 10
	}
	if o.Candidates <= 0 {
		o.Candidates = max(5*o.Limit, minPool)
	}
	if o.RecencyWeight == 0 {
		o.RecencyWeight = 0.3
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	var res Result
	err := s.reading(ctx, func() error {
		var err error
		res, err = s.search(ctx, query, o)
		return err
	})
	if err != nil {
		return res, err
	}
	res.render(o.TokenBudget)
	if o.RecordAccess && len(res.Hits) > 0 {
		ids := make([]string, len(res.Hits))
		for i, h := range res.Hits {
			ids[i] = h.Record.ID
		}
		if err := s.RecordAccess(ctx, ids, o.Source); err != nil {
			return res, err
		}
	}
	return res, nil
}

// search is one reading of Search (o has its defaults): the hits, not yet
// rendered.
func (s *Store) search(ctx context.Context, query string, o SearchOptions) (Result, error) {
	res := Result{Query: query, Mode: o.Mode}
	if res.Mode == "" {
		res.Mode = ModeHybrid
	}
	useVec := res.Mode != ModeBM25 && s.vec != nil && strings.TrimSpace(query) != ""
	useBM25 := res.Mode != ModeVector
	if res.Mode != ModeBM25 && s.vec == nil {
		res.Notice = "no embedder: BM25 only"
		res.Mode, useBM25 = ModeBM25, true
	} else if useVec && s.vectorsLagging() {
		res.Notice = "vectors lag behind the journal: recent records are found by BM25 only"
	}

	// The two retrievers are independent: the vector side (embedding the query
	// and walking the graphs) runs on its own goroutine while Bleve answers.
	pool := max(o.Candidates, minPool)
	var qvec []float32
	var vecIDs []string
	sims := map[string]float64{}
	var vecErr error
	var vecNotice string
	done := make(chan struct{})
	go func() {
		defer close(done)
		if !useVec {
			return
		}
		vecs, err := s.opts.Embedder.Embed(ctx, []string{query})
		if err == nil && len(vecs) != 1 {
			err = fmt.Errorf("%d vectors for one query", len(vecs))
		}
		if err != nil {
			if res.Mode == ModeVector {
				vecErr = fmt.Errorf("memory: embedding the query with %s: %w", s.opts.Embedder.ModelID(), err)
			} else {
				vecNotice = fmt.Sprintf("embedding the query failed (%v): BM25 only", err)
			}
			return
		}
		qvec = vecs[0]
		vecIDs, vecErr = s.vectorCandidates(ctx, qvec, o.Filter, pool, sims)
	}()
	bm25 := map[string]fulltext.Hit{}
	var bm25IDs []string
	var bm25Err error
	if useBM25 {
		var hits []fulltext.Hit
		qo := fulltext.QueryOptions{MaxDF: o.MaxDF}
		if useVec {
			ex := s.expandQuery(query, o)
			qo.Expansion, qo.ExpansionBoosts = ex.Terms, ex.Weights
		}
		hits, bm25Err = s.searchFulltext(ctx, query, o.Filter.fulltext(), pool, qo)
		if bm25Err == nil && len(hits) > 0 {
			var fb []string
			var boost float64
			if fb, boost, bm25Err = s.feedback(ctx, query, hits, o); bm25Err == nil && len(fb) > 0 {
				for _, t := range fb {
					qo.Expansion = append(qo.Expansion, t)
					qo.ExpansionBoosts = append(qo.ExpansionBoosts, boost)
				}
				hits, bm25Err = s.searchFulltext(ctx, query, o.Filter.fulltext(), pool, qo)
			}
		}
		if bm25Err == nil {
			bm25IDs = make([]string, len(hits))
			for i, h := range hits {
				bm25IDs[i] = h.ID
				bm25[h.ID] = h
			}
		}
	}
	<-done
	if bm25Err != nil {
		return res, fmt.Errorf("memory: %w", bm25Err)
	}
	if vecErr != nil {
		return res, vecErr
	}
	if vecNotice != "" {
		res.Notice = vecNotice
	}

	hits, release := s.fuseHits(query, o, bm25IDs, bm25, vecIDs, sims, qvec)
	mmr := o.MMRLambda > 0 && o.MMRLambda < 1
	want := o.Limit
	if mmr {
		want = max(3*o.Limit, o.Limit)
	}
	// Without recency weighting the scores stay as fused: the best want hits
	// that pass the filter are the result, found in order. Recency changes the
	// scores, so every hit is weighed and the kept ones sorted.
	early := o.RecencyHalfLife <= 0 && !s.refFusion
	if early {
		bestFirst(hits, want)
	}
	s.mu.RLock()
	kept := make([]fusedHit, 0, want)
	for i, f := range hits {
		if early && i == want {
			if len(kept) == want {
				break // the rest rank below
			}
			slices.SortFunc(hits[want:], byFusedScore) // the filter dropped some: read on in order
			f = hits[i]
		}
		r := s.state.get(f.id)
		if r == nil || !o.Filter.match(r) { // the indexes may briefly trail the state
			continue
		}
		if o.RecencyHalfLife > 0 {
			age := o.Now.Sub(r.Updated).Seconds()
			f.score *= recall.RecencyFactor(age, o.RecencyHalfLife.Seconds(), o.RecencyWeight)
		}
		kept = append(kept, f)
	}
	release()
	slices.SortFunc(kept, byFusedScore)
	kept = kept[:min(len(kept), want)]
	byID := make(map[string]*Record, len(kept))
	for _, f := range kept {
		byID[f.id] = s.state.get(f.id).clone()
	}
	s.mu.RUnlock()
	if mmr {
		pool := make([]recall.Fused, len(kept))
		for i, f := range kept {
			pool[i] = recall.Fused{ID: f.id, Score: f.score}
		}
		picked := recall.MMR(pool, o.Limit, o.MMRLambda, s.similarity(pool, byID))
		reordered := make([]fusedHit, len(picked))
		for i, p := range picked {
			j := slices.IndexFunc(kept, func(f fusedHit) bool { return f.id == p.ID })
			reordered[i] = kept[j]
			reordered[i].score = p.Score
		}
		kept = reordered
	}
	for _, f := range kept {
		h := Hit{Record: byID[f.id], Fused: f.raw, Score: f.score, Context: f.lifted, Meaning: f.soft, Speaker: f.named, Asks: f.asks}
		if b, ok := bm25[f.id]; ok {
			h.BM25Score = b.Score
			h.BM25Rank = rank(bm25IDs, f.id)
		}
		if sim, ok := sims[f.id]; ok {
			h.VectorRank = rank(vecIDs, f.id)
			h.Similarity = sim
		}
		res.Hits = append(res.Hits, h)
	}
	return res, nil
}

// exactLimit is the largest filtered set that vectorCandidates scores exactly
// instead of searching the graphs.
const exactLimit = 4096

// vectorCandidates returns up to k ids nearest to vec among the records the filter
// admits, best first, and fills sims. The HNSW graphs are per area, so the area
// filter is exact. A selective filter (tags, key, time range, archived records) that
// admits at most exactLimit records is answered exactly from those records'
// vectors; otherwise the graphs are asked for more neighbours until k pass.
func (s *Store) vectorCandidates(ctx context.Context, vec []float32, f Filter, k int, sims map[string]float64) ([]string, error) {
	if len(f.Tags) > 0 || f.Key != "" || !f.From.IsZero() || !f.To.IsZero() || len(f.Statuses) > 0 {
		if ids, ok := s.exactVectors(ctx, vec, f, k, sims); ok {
			return ids, nil
		}
	}
	areas := f.Areas
	if len(areas) == 0 {
		for _, a := range s.vec.areaNames() {
			if a != AreaLibrary {
				areas = append(areas, a)
			}
		}
	}
	total := 0
	for _, a := range areas {
		s.vec.mu.RLock()
		if idx := s.vec.areas[a]; idx != nil {
			total += idx.Len()
		}
		s.vec.mu.RUnlock()
	}
	for ask := k; ; ask *= 4 {
		hits, err := s.vec.search(vec, areas, ask)
		if err != nil {
			return nil, err
		}
		var ids []string
		s.mu.RLock()
		for _, h := range hits {
			if r := s.state.get(h.ID); r != nil && f.match(r) {
				ids = append(ids, h.ID)
				sims[h.ID] = float64(h.Similarity)
				if len(ids) == k {
					break
				}
			}
		}
		s.mu.RUnlock()
		if len(ids) >= k || ask >= total || len(hits) < ask {
			return ids, nil
		}
	}
}

// exactVectors scores every record the filter admits, if there are at most
// exactLimit of them; ok is false otherwise.
func (s *Store) exactVectors(ctx context.Context, vec []float32, f Filter, k int, sims map[string]float64) (ids []string, ok bool) {
	type cand struct{ id, area string }
	var cands []cand
	s.mu.RLock()
	over := false
	s.state.each(func(r *Record) bool {
		if f.match(r) {
			if len(cands) == exactLimit {
				over = true
				return false
			}
			cands = append(cands, cand{r.ID, r.Area})
		}
		return true
	})
	s.mu.RUnlock()
	if over {
		return nil, false
	}
	// A damaged record read as missing here is seen by Search (reading),
	// which searches again on the repaired state.
	type scored struct {
		id  string
		sim float64
	}
	var out []scored
	for _, c := range cands {
		if v, ok := s.vec.lookup(c.id, c.area); ok {
			out = append(out, scored{c.id, cosine(vec, v)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].sim != out[j].sim {
			return out[i].sim > out[j].sim
		}
		return out[i].id < out[j].id
	})
	for _, x := range out[:min(k, len(out))] {
		ids = append(ids, x.id)
		sims[x.id] = x.sim
	}
	return ids, true
}

// similarity compares two candidates for MMR: cosine of their vectors when there
// are vectors, else the Jaccard overlap of their words.
func (s *Store) similarity(pool []recall.Fused, byID map[string]*Record) func(i, j int) float64 {
	vecs := make([][]float32, len(pool))
	words := make([]map[string]bool, len(pool))
	for i, f := range pool {
		r := byID[f.ID]
		if s.vec != nil {
			vecs[i], _ = s.vec.lookup(r.ID, r.Area)
		}
		words[i] = wordSet(r.Text)
	}
	return func(i, j int) float64 {
		if vecs[i] != nil && vecs[j] != nil {
			return math.Max(0, cosine(vecs[i], vecs[j]))
		}
		return jaccard(words[i], words[j])
	}
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	}) {
		out[w] = true
	}
	return out
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// render writes the prompt block: one entry per hit, within budget tokens.
func (r *Result) render(budget int) {
	entries := make([]string, len(r.Hits))
	for i, h := range r.Hits {
		var b strings.Builder
		fmt.Fprintf(&b, "[%s] (area %s", h.Record.ID, h.Record.Area)
		if h.Record.Key != "" {
			fmt.Fprintf(&b, ", key %s", h.Record.Key)
		}
		if len(h.Record.Tags) > 0 {
			fmt.Fprintf(&b, ", tags %s", strings.Join(h.Record.Tags, ","))
		}
		fmt.Fprintf(&b, ", %s)\n%s\n", h.Record.Updated.UTC().Format("2006-01-02"), h.Record.Text)
		entries[i] = b.String()
		r.Hits[i].Tokens = recall.EstimateTokens(entries[i])
	}
	n, used := recall.Budget(len(entries), budget, func(i int) int { return r.Hits[i].Tokens })
	r.Dropped = len(r.Hits) - n
	r.Hits = r.Hits[:n]
	r.Block = strings.Join(entries[:n], "\n")
	r.Tokens = used
}

// RenderBlock renders hits as Search renders its block, within budget tokens
// (0: no cap): the block, its tokens and how many hits it holds (a prefix).
func RenderBlock(hits []Hit, budget int) (block string, tokens, n int) {
	r := Result{Hits: append([]Hit(nil), hits...)}
	r.render(budget)
	return r.Block, r.Tokens, len(r.Hits)
}
