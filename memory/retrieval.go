package memory

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/exocortex/exocortex/memory/fulltext"
	"github.com/exocortex/exocortex/memory/recall"
)

// Fusion names a way of combining the BM25 and vector legs.
type Fusion string

const (
	// FusionScore adds the legs' normalised scores, each times its weight: BM25
	// scores divided by the best, cosine similarities scaled to [0, 1] over the
	// candidates. It keeps how much better the best hit is than the rest, which
	// rank fusion throws away.
	FusionScore Fusion = "score"
	// FusionRRF is weighted reciprocal rank fusion of the legs' rankings.
	FusionRRF Fusion = "rrf"
)

// Retrieval defaults, measured on the LoCoMo dev conversations with `make eval`
// (figures and the sweeps behind them in docs/perf/memory.md).
const (
	// DefaultContext is the share of each neighbouring record's score added to a
	// record's own.
	DefaultContext = 0.5
	// DefaultContextWindow is how many records on each side count, and
	// DefaultContextDecay the share of the nearer one's weight that each
	// further one gets (0.85: the second record on a side counts nearly as
	// much as the first; measured with the reply lift, which it suits: an
	// exchange spans a question, its answer and the answer's follow-up).
	DefaultContextWindow = 2
	DefaultContextDecay  = 0.85
	// DefaultContextReply is how much more than another neighbour's a
	// question's score counts for the record right after it (its answer).
	DefaultContextReply = 2.0
	// DefaultFeedback, DefaultFeedbackTerms and DefaultFeedbackBoost are the
	// pseudo-relevance feedback's defaults (SearchOptions.Feedback).
	DefaultFeedback      = 0 // off: it lowered recall@10 on the dev set (docs/perf/memory.md)
	DefaultFeedbackTerms = 5
	DefaultFeedbackBoost = 0.3
	// minPool is the fewest candidates each leg contributes: neighbour context
	// needs the scores around the top hits, not only the top hits.
	minPool = 100
)

// IndexedMetadata lists the metadata keys whose string values are indexed for
// BM25 with the record's text: the date a conversation took place ("when") lets
// a question naming a month or a year find what was said then.
var IndexedMetadata = []string{"when", "date"}

// indexText is what BM25 indexes of a record: its text and the metadata values
// IndexedMetadata names.
func indexText(r *Record) string {
	var extra []string
	for _, k := range IndexedMetadata {
		if v, ok := r.Metadata[k].(string); ok && strings.TrimSpace(v) != "" {
			extra = append(extra, v)
		}
	}
	if len(extra) == 0 {
		return r.Text
	}
	return r.Text + "\n" + strings.Join(extra, "\n")
}

// WeightedEmbedder is an Embedder that says how much its vectors should count
// beside BM25 (1 is equal weight). Weak vectors (averaged word vectors) count for
// less than a sentence-embedding model's.
type WeightedEmbedder interface {
	Embedder
	RecallWeight() float64
}

// ConversationWeightedEmbedder is a WeightedEmbedder whose vectors count for
// another weight on the records of a conversation (records with a session:
// their neighbours' context already carries BM25 to the answer) than on
// standalone records, where only the vectors may tell apart records BM25
// scores alike.
type ConversationWeightedEmbedder interface {
	WeightedEmbedder
	ConversationRecallWeight() float64
}

// vectorWeights returns the legs' weights for a search: BM25's, the vector
// leg's on standalone records and on records of a conversation (a session).
// SearchOptions.VectorWeight, when set, is both.
func (s *Store) vectorWeights(o SearchOptions) (wb, wv, wconv float64) {
	wb, wv = DefaultWeights(s.opts.Embedder)
	wconv = wv
	if c, ok := s.opts.Embedder.(ConversationWeightedEmbedder); ok {
		wconv = c.ConversationRecallWeight()
	}
	if o.BM25Weight > 0 {
		wb = o.BM25Weight
	}
	if o.VectorWeight > 0 {
		wv, wconv = o.VectorWeight, o.VectorWeight
	}
	return wb, wv, wconv
}

// inConversation reports whether r is part of a conversation (has a session).
func inConversation(r *Record) bool { return r != nil && sessionOf(r) != "" }

// DefaultWeights are the legs' weights for an embedder: BM25 1, vectors the
// embedder's RecallWeight, or 1 for an embedder that does not say.
func DefaultWeights(e Embedder) (bm25, vector float64) {
	if w, ok := e.(WeightedEmbedder); ok {
		return 1, w.RecallWeight()
	}
	return 1, 1
}

// fuse combines the legs' candidates into one ranking. It returns the fused
// candidates (best first), each one's fused score, and the part of it that came
// from neighbouring records.
func (s *Store) fuse(query string, o SearchOptions, bm25IDs []string, bm25 map[string]fulltext.Hit, vecIDs []string, sims map[string]float64, qvec []float32) ([]recall.Fused, map[string]float64, map[string]float64) {
	wb, wv, wconv := s.vectorWeights(o)
	beta := o.Context
	if beta == 0 {
		beta = DefaultContext
	}
	beta = max(beta, 0)
	decay := o.ContextDecay
	if decay == 0 {
		decay = DefaultContextDecay
	}

	s.mu.RLock()
	defer s.mu.RUnlock()
	var nb recall.Neighbours
	if beta > 0 {
		s.ord.ensure(s.state)
		w := o.ContextWindow
		if w == 0 {
			w = DefaultContextWindow
		}
		nb = recall.MemoNeighbours(func(id string) ([]string, []string) { return s.ord.neighbours(s.state, id, w) })
	}

	// BM25: scores over the best; a neighbour outside the candidates did not
	// match (or barely), and counts 0.
	braw := make(recall.Scores, len(bm25IDs))
	for _, id := range bm25IDs {
		braw[id] = bm25[id].Score
	}
	bown := recall.MaxNormalize(braw)
	if o.SpeakerBoost > 0 {
		s.boostSpeakers(query, o.SpeakerBoost, bown)
	}
	reply := o.contextReply()
	asks := func(id string) bool {
		r := s.state.get(id)
		return r != nil && asksQuestion(r.Text)
	}
	bsm := recall.SmoothReplies(bown, beta, decay, reply, asks, nb, nil)

	// Vectors: similarities scaled to [0, 1] over the candidates; a neighbour
	// outside them is scored from its stored vector on the same scale.
	lo, hi := 1.0, -1.0
	for _, id := range vecIDs {
		lo, hi = min(lo, sims[id]), max(hi, sims[id])
	}
	scale := func(sim float64) float64 {
		if hi <= lo {
			return 1
		}
		return max(0, (sim-lo)/(hi-lo))
	}
	vown := make(recall.Scores, len(vecIDs))
	for _, id := range vecIDs {
		vown[id] = scale(sims[id])
	}
	var lookup func(string) (float64, bool)
	if qvec != nil {
		lookup = func(id string) (float64, bool) {
			r := s.state.get(id)
			if r == nil {
				return 0, false
			}
			v, ok := s.vec.lookup(id, r.Area)
			if !ok {
				return 0, false
			}
			return scale(cosine(qvec, v)), true
		}
	}
	if o.SpeakerBoost > 0 {
		s.boostSpeakers(query, o.SpeakerBoost, vown)
	}
	vsm := recall.SmoothReplies(vown, beta, decay, reply, asks, nb, lookup)

	var fused []recall.Fused
	if o.Fusion == FusionRRF {
		fused = recall.RRF(o.RRFK, []float64{wb, wv}, recall.Ranked(bsm), recall.Ranked(vsm))
	} else {
		fused = recall.WeightedSum([]float64{wb, wv}, bsm, vsm)
		if wconv != wv {
			// A conversation's records weigh the vectors by wconv.
			for i := range fused {
				if inConversation(s.state.get(fused[i].ID)) {
					fused[i].Score = wb*bsm[fused[i].ID] + wconv*vsm[fused[i].ID]
				}
			}
			recall.SortByScore(fused)
		}
	}
	raw := make(map[string]float64, len(fused))
	lifted := map[string]float64{}
	for _, f := range fused {
		raw[f.ID] = f.Score
		if o.Fusion == FusionRRF {
			continue
		}
		w := wv
		if wconv != wv && inConversation(s.state.get(f.ID)) {
			w = wconv
		}
		if c := wb*(bsm[f.ID]-bown[f.ID]) + w*(vsm[f.ID]-vown[f.ID]); c > 0 {
			lifted[f.ID] = c
		}
	}
	return fused, raw, lifted
}

// feedback picks the expansion terms of pseudo-relevance feedback: the words of
// the best hits that are rarest in the index (by tf·idf over the hits), not
// already in the query.
func (s *Store) feedback(ctx context.Context, query string, hits []fulltext.Hit, o SearchOptions) ([]string, float64, error) {
	docs, nterms, boost := o.Feedback, o.FeedbackTerms, o.FeedbackBoost
	if docs == 0 {
		docs = DefaultFeedback
	}
	if nterms == 0 {
		nterms = DefaultFeedbackTerms
	}
	if boost == 0 {
		boost = DefaultFeedbackBoost
	}
	if docs <= 0 || nterms <= 0 {
		return nil, 0, nil
	}
	inQuery := s.ft.Terms(query)
	tf := map[string]int{}
	s.mu.RLock()
	for _, h := range hits[:min(docs, len(hits))] {
		if r := s.state.get(h.ID); r != nil {
			for t, n := range s.ft.Terms(indexText(r)) {
				if inQuery[t] == 0 {
					tf[t] += n
				}
			}
		}
	}
	s.mu.RUnlock()
	terms := make([]string, 0, len(tf))
	for t := range tf {
		terms = append(terms, t)
	}
	df, n, err := s.ft.DocFreq(ctx, terms)
	if err != nil {
		return nil, 0, fmt.Errorf("memory: %w", err)
	}
	weight := func(t string) float64 {
		return float64(tf[t]) * math.Log(float64(n+1)/float64(df[t]+1))
	}
	sort.Slice(terms, func(i, j int) bool {
		wi, wj := weight(terms[i]), weight(terms[j])
		if wi != wj {
			return wi > wj
		}
		return terms[i] < terms[j]
	})
	var out []string
	for _, t := range terms {
		if len(out) == nterms {
			break
		}
		if df[t] > 1 && weight(t) > 0 { // a word of one document finds only it again
			out = append(out, t)
		}
	}
	return out, boost, nil
}

// rank is id's 1-based position in ids (0: absent).
func rank(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i + 1
		}
	}
	return 0
}

// speakerOf returns the name before a record's "Name: " prefix, if any.
func speakerOf(text string) string {
	i := strings.Index(text, ": ")
	if i <= 0 || i > 40 {
		return ""
	}
	name := text[:i]
	for _, w := range strings.Fields(name) {
		if w == "" || !unicode.IsUpper([]rune(w)[0]) {
			return ""
		}
	}
	if len(strings.Fields(name)) > 3 {
		return ""
	}
	return name
}

// boostSpeakers multiplies the scores of records spoken by someone the query
// names by 1+boost. The caller holds s.mu.
func (s *Store) boostSpeakers(query string, boost float64, sc recall.Scores) {
	words := queryNames(query)
	named := map[string]bool{}
	for id := range sc {
		r := s.state.get(id)
		if r == nil {
			continue
		}
		sp := speakerOf(r.Text)
		v, ok := named[sp]
		if !ok {
			v = namedIn(sp, words)
			named[sp] = v
		}
		if v {
			sc[id] *= 1 + boost
		}
	}
}

// contextReply is o.ContextReply with its default (0 for none).
func (o SearchOptions) contextReply() float64 {
	switch {
	case o.ContextReply == 0:
		return DefaultContextReply
	case o.ContextReply < 0:
		return 0
	}
	return o.ContextReply
}

// asksQuestion reports whether a record's text asks a question: it ends with
// "?", before an image caption (" [image: ...]") if there is one.
func asksQuestion(text string) bool {
	if i := strings.LastIndex(text, " [image:"); i >= 0 && strings.HasSuffix(strings.TrimSpace(text), "]") {
		text = text[:i]
	}
	return strings.HasSuffix(strings.TrimSpace(text), "?")
}
