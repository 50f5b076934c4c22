package fulltext

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
)

// QueryOptions tune how a search text becomes a query.
type QueryOptions struct {
	// MaxDF drops query terms found in more than this share of the documents
	// (a conversation's speaker names, words of every note), unless that would
	// drop them all: they say little about which document is meant, and every
	// document that has them scores a little. 0 means DefaultMaxDF; 1 or more
	// keeps every term.
	MaxDF float64
	// Expansion adds these terms (already analysed, as Terms returns them) to
	// the query, each counting ExpansionBoost as much as a word of the text.
	Expansion      []string
	ExpansionBoost float64
	// ExpansionBoosts, when as long as Expansion, gives each expansion term its
	// own boost instead of ExpansionBoost.
	ExpansionBoosts []float64
}

// Terms analyses text as the index does and returns each distinct term with its
// count.
func (ix *Index) Terms(text string) map[string]int {
	an := ix.idx.Mapping().AnalyzerNamed(en.AnalyzerName)
	out := map[string]int{}
	if an == nil {
		return out
	}
	for _, tok := range an.Analyze([]byte(text)) {
		out[string(tok.Term)]++
	}
	return out
}

// IsStopWord reports whether the English analyzer drops word (given in lower
// case): "the", "what", "does".
func (ix *Index) IsStopWord(word string) bool {
	_, ok := ix.stop[word]
	return ok
}

// englishStopWords is the stop list of Bleve's English analyzer.
func englishStopWords() analysis.TokenMap {
	tm := analysis.NewTokenMap()
	_ = tm.LoadBytes(en.EnglishStopWords) // a constant of the library, known to parse
	return tm
}

// DocFreq returns how many documents hold each term, and the document count.
func (ix *Index) DocFreq(ctx context.Context, terms []string) (map[string]uint64, uint64, error) {
	adv, err := ix.idx.Advanced()
	if err != nil {
		return nil, 0, fmt.Errorf("fulltext: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, 0, fmt.Errorf("fulltext: %w", err)
	}
	defer r.Close()
	n, err := r.DocCount()
	if err != nil {
		return nil, 0, fmt.Errorf("fulltext: %w", err)
	}
	out := make(map[string]uint64, len(terms))
	for _, t := range terms {
		tfr, err := r.TermFieldReader(ctx, []byte(t), "text", false, false, false)
		if err != nil {
			return nil, 0, fmt.Errorf("fulltext: reading the postings of %q: %w", t, err)
		}
		out[t] = tfr.Count()
		tfr.Close()
	}
	return out, n, nil
}

// textAnalyzer analyses the text field (and queries of it).
const textAnalyzer = en.AnalyzerName

// DefaultMaxDF is QueryOptions.MaxDF's default (measured on the LoCoMo dev
// conversations; docs/perf/memory.md).
const DefaultMaxDF = 1

// Search returns up to k documents matching text under the filter, by BM25 score.
// A blank text ("" or only spaces) matches every document the filter admits
// (score 0, ordered by id): the store's filter-only listing. (The store's own
// Search refuses a blank query before it gets here.)
//
// A panic inside Bleve (damaged segment files) is recovered and returned as an
// error wrapping ErrDamaged, as is any error reading the index.
func (ix *Index) Search(ctx context.Context, text string, f Filter, k int) ([]Hit, error) {
	return ix.SearchWith(ctx, text, f, k, QueryOptions{})
}

// queryTerms analyses text as the index does (English: lower case, stop words
// removed, stemmed) and returns its distinct terms, in order, without those that
// are too common (QueryOptions.MaxDF).
func (ix *Index) queryTerms(ctx context.Context, text string, maxDF float64) ([]string, error) {
	an := ix.idx.Mapping().AnalyzerNamed(en.AnalyzerName)
	if an == nil {
		return nil, fmt.Errorf("fulltext: the %s analyzer is not registered", en.AnalyzerName)
	}
	var terms []string
	seen := map[string]bool{}
	for _, tok := range an.Analyze([]byte(text)) {
		if t := string(tok.Term); !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	if maxDF >= 1 || len(terms) < 2 {
		return terms, nil
	}
	adv, err := ix.idx.Advanced()
	if err != nil {
		return nil, fmt.Errorf("fulltext: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, fmt.Errorf("fulltext: %w", err)
	}
	defer r.Close()
	n, err := r.DocCount()
	if err != nil || n == 0 {
		return terms, err
	}
	kept := terms[:0:0]
	for _, t := range terms {
		tfr, err := r.TermFieldReader(ctx, []byte(t), "text", false, false, false)
		if err != nil {
			return nil, fmt.Errorf("fulltext: reading the postings of %q: %w", t, err)
		}
		df := tfr.Count()
		tfr.Close()
		if float64(df) <= maxDF*float64(n) {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		return terms, nil
	}
	return kept, nil
}

// SearchWith is Search with query options.
func (ix *Index) SearchWith(ctx context.Context, text string, f Filter, k int, qo QueryOptions) (hits []Hit, err error) {
	if k <= 0 {
		return nil, nil
	}
	ix.mu.RLock() // held throughout: Reset must not swap the index mid-search
	defer ix.mu.RUnlock()
	defer func() {
		if r := recover(); r != nil {
			hits, err = nil, fmt.Errorf("fulltext: searching %s for %q: %w (panic: %v)", ix.dir, text, ErrDamaged, r)
		}
	}()
	if qo.MaxDF <= 0 {
		qo.MaxDF = DefaultMaxDF
	}
	var must []query.Query
	if strings.TrimSpace(text) != "" {
		terms, err := ix.queryTerms(ctx, text, qo.MaxDF)
		if err != nil {
			return nil, err
		}
		if len(terms) == 0 {
			return nil, nil // only stop words
		}
		tqs := make([]query.Query, 0, len(terms)+len(qo.Expansion))
		for _, t := range terms {
			tq := bleve.NewTermQuery(t)
			tq.SetField("text")
			tqs = append(tqs, tq)
		}
		for i, t := range qo.Expansion {
			tq := bleve.NewTermQuery(t)
			tq.SetField("text")
			if len(qo.ExpansionBoosts) == len(qo.Expansion) {
				tq.SetBoost(qo.ExpansionBoosts[i])
			} else {
				tq.SetBoost(qo.ExpansionBoost)
			}
			tqs = append(tqs, tq)
		}
		must = append(must, bleve.NewDisjunctionQuery(tqs...))
	} else {
		must = append(must, bleve.NewMatchAllQuery())
	}
	termsAny := func(field string, vals []string) {
		if len(vals) == 0 {
			return
		}
		var qs []query.Query
		for _, v := range vals {
			tq := bleve.NewTermQuery(v)
			tq.SetField(field)
			qs = append(qs, tq)
		}
		must = append(must, bleve.NewDisjunctionQuery(qs...))
	}
	termsAny("area", f.Areas)
	termsAny("status", f.Statuses)
	for _, t := range f.Tags {
		termsAny("tags", []string{t})
	}
	if f.Key != "" {
		termsAny("key", []string{f.Key})
	}
	if !f.From.IsZero() || !f.To.IsZero() {
		dq := bleve.NewDateRangeQuery(f.From.UTC(), f.To.UTC())
		dq.SetField("created")
		must = append(must, dq)
	}
	bq := bleve.NewBooleanQuery()
	bq.AddMust(must...)
	for _, a := range f.ExcludeAreas {
		tq := bleve.NewTermQuery(a)
		tq.SetField("area")
		bq.AddMustNot(tq)
	}
	for _, st := range f.ExcludeStatuses {
		tq := bleve.NewTermQuery(st)
		tq.SetField("status")
		bq.AddMustNot(tq)
	}
	// The index's own statistics, not Bleve's per-segment ones (stats.go):
	// the same content scores the same whatever the merges have done.
	stats := map[string]interface{}{search.BM25PreSearchDataKey: ix.totals.Load().searchStats()}
	// Sorting by score alone (the default) keeps Bleve's fast top-k path; an _id
	// tie-break would load the id of every matching document. Bleve picks
	// among equal scores at the cut by internal document order, which merges
	// change, so twice as many hits as asked are fetched (the cost of a search
	// is scoring the matches, not keeping more of them): when the last ties
	// with the k-th, the cut falls inside a tie and the search is asked again
	// for more, until every document scoring as the k-th is in (a blank text,
	// where every document ties, keeps the first k Bleve finds).
	size := k
	if strings.TrimSpace(text) != "" {
		size = 2*k + 1
	}
	var res *bleve.SearchResult
	for {
		req := bleve.NewSearchRequestOptions(bq, size, 0, false)
		req.PreSearchData = stats
		res, err = ix.idx.SearchInContext(ctx, req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("fulltext: searching %s for %q: %w", ix.dir, text, err)
			}
			return nil, fmt.Errorf("fulltext: searching %s for %q: %w (%v)", ix.dir, text, ErrDamaged, err)
		}
		if size == k || len(res.Hits) < size || res.Hits[size-1].Score < res.Hits[k-1].Score {
			break
		}
		size *= 2
	}
	hits = make([]Hit, len(res.Hits))
	for i, h := range res.Hits {
		hits[i] = Hit{ID: h.ID, Score: h.Score}
	}
	// Equal scores come back in internal document order, which background merges
	// change; order them by id so that a search repeats exactly.
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].ID < hits[j].ID
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}
