package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// The memory tools, as the agent calls them. The ECHOMEN tools (MemorySave,
// MemoryRetrieve, MemoryDelete) work on keyed records of the main area and return
// ECHOMEN's exact strings; MemoryLoad and MemoryForget are Agent Zero's
// similarity-based pair.

// toolSource marks records written through a tool.
func toolSource(src Source, tool string) Source {
	if src.Source == "" {
		src.Source = "tool:" + tool
	}
	return src
}

// MemorySave stores value under key (updating the record that has it), with tags.
// It returns "Memory item 'KEY' saved successfully.".
func (s *Store) MemorySave(ctx context.Context, key, value string, tags []string, src Source) (string, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return "", errors.New("memory_save: key is required")
	}
	if strings.TrimSpace(value) == "" {
		return "", fmt.Errorf("memory_save: value for key '%s' is empty", key)
	}
	if _, err := s.Put(ctx, Input{Area: AreaMain, Key: key, Text: value, Tags: tags}, toolSource(src, "memory_save")); err != nil {
		return "", fmt.Errorf("memory_save: %w", err)
	}
	return fmt.Sprintf("Memory item '%s' saved successfully.", key), nil
}

// retrieved is one element of MemoryRetrieve's JSON array.
type retrieved struct {
	Key   string   `json:"key"`
	Value string   `json:"value"`
	Tags  []string `json:"tags"`
}

// MemoryRetrieve returns the value stored under key; or, given tags, the value of
// the one active record carrying any of them, or a JSON array of
// {"key","value","tags"} (sorted by key) when several do. With both, the keyed
// record is returned only if it carries one of the tags. At least one of key and
// tags is required.
func (s *Store) MemoryRetrieve(ctx context.Context, key string, tags []string) (string, error) {
	key = strings.TrimSpace(key)
	tags = normTags(tags)
	if key == "" && len(tags) == 0 {
		return "", errors.New("memory_retrieve: give a key or at least one tag")
	}
	var found []*Record
	if key != "" {
		r, ok, err := s.GetByKey(ctx, AreaMain, key)
		if err != nil {
			return "", fmt.Errorf("memory_retrieve: %w", err)
		}
		if !ok || !r.Active() {
			return "", fmt.Errorf("memory_retrieve: no memory item with key '%s'", key)
		}
		found = append(found, r)
	} else {
		var err error
		if found, err = s.List(ctx, Filter{Areas: []string{AreaMain}}); err != nil {
			return "", fmt.Errorf("memory_retrieve: %w", err)
		}
	}
	if len(tags) > 0 {
		var keep []*Record
		for _, r := range found {
			for _, t := range tags {
				if r.HasTag(t) {
					keep = append(keep, r)
					break
				}
			}
		}
		found = keep
	}
	switch len(found) {
	case 0:
		if key != "" {
			return "", fmt.Errorf("memory_retrieve: memory item '%s' has none of the tags %s", key, strings.Join(tags, ", "))
		}
		return "", fmt.Errorf("memory_retrieve: no memory item is tagged %s", strings.Join(tags, " or "))
	case 1:
		return found[0].Text, nil
	}
	sort.Slice(found, func(i, j int) bool {
		if found[i].Key != found[j].Key {
			return found[i].Key < found[j].Key
		}
		return found[i].ID < found[j].ID
	})
	out := make([]retrieved, len(found))
	for i, r := range found {
		out[i] = retrieved{Key: r.Key, Value: r.Text, Tags: r.Tags}
		if out[i].Tags == nil {
			out[i].Tags = []string{}
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("memory_retrieve: %w", err)
	}
	return string(b), nil
}

// MemoryDelete deletes the record stored under key. It returns "Memory item 'KEY'
// deleted successfully.".
func (s *Store) MemoryDelete(ctx context.Context, key string, src Source) (string, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return "", errors.New("memory_delete: key is required")
	}
	r, ok, err := s.GetByKey(ctx, AreaMain, key)
	if err != nil {
		return "", fmt.Errorf("memory_delete: %w", err)
	}
	if !ok {
		return "", fmt.Errorf("memory_delete: no memory item with key '%s'", key)
	}
	if err := s.Delete(ctx, r.ID, "memory_delete", toolSource(src, "memory_delete")); err != nil {
		return "", fmt.Errorf("memory_delete: %w", err)
	}
	return fmt.Sprintf("Memory item '%s' deleted successfully.", key), nil
}

// Agent Zero's defaults.
const (
	DefaultLoadThreshold   = 0.7
	DefaultLoadLimit       = 10
	DefaultForgetThreshold = 0.75
)

// MatchScore is the similarity a threshold is compared with. Without vectors it
// is the BM25 score relative to the best hit (so the best BM25 hit scores 1).
// With vectors it is the better of that and the cosine similarity to the query:
// Agent Zero's thresholds (0.7 to load) were set for embedding models, and an
// offline word-vector embedder gives a one-word query and a sentence holding
// that word a cosine well below them, so a cosine-only threshold would find
// nothing for an exact keyword match.
func MatchScore(h Hit, best float64, vectors bool) float64 {
	rel := 0.0
	if best > 0 {
		rel = h.BM25Score / best
	}
	if vectors {
		return max(h.Similarity, rel)
	}
	return rel
}

// forgetScore is the similarity memory_forget compares with its threshold: the
// cosine alone when there are vectors. Deleting is not undone, so a record is
// forgotten only when its meaning is close, not for being the best keyword
// match of a weak query.
func forgetScore(h Hit, best float64, vectors bool) float64 {
	if vectors {
		return h.Similarity
	}
	return MatchScore(h, best, false)
}

// thresholded runs a search and keeps the hits whose score (by score) reaches
// threshold, with the filter expression applied.
func (s *Store) thresholded(ctx context.Context, query string, threshold float64, limit int, filter string, o SearchOptions, score func(Hit, float64, bool) float64) ([]Hit, error) {
	expr, err := ParseFilter(filter)
	if err != nil {
		return nil, err
	}
	o.Limit = limit
	o.Candidates = max(5*limit, 100)
	res, err := s.Search(ctx, query, o)
	if err != nil {
		return nil, err
	}
	vectors := s.vec != nil && res.Mode != ModeBM25
	best := 0.0
	for _, h := range res.Hits {
		best = max(best, h.BM25Score)
	}
	var out []Hit
	for _, h := range res.Hits {
		if score(h, best, vectors) >= threshold && expr.Match(h.Record) {
			out = append(out, h)
		}
	}
	return out, nil
}

// MemoryLoad is Agent Zero's memory_load: the records most similar to query whose
// similarity reaches threshold (default 0.7), at most limit (default 10), that the
// filter expression admits (e.g. "area == 'main' and 'project' in tags"; empty
// admits all). It returns them as text, or says none was found.
func (s *Store) MemoryLoad(ctx context.Context, query string, threshold float64, limit int, filter string, src Source) (string, error) {
	if threshold <= 0 {
		threshold = DefaultLoadThreshold
	}
	if limit <= 0 {
		limit = DefaultLoadLimit
	}
	areas, err := s.areasFor(ctx, filter)
	if err != nil {
		return "", fmt.Errorf("memory_load: %w", err)
	}
	hits, err := s.thresholded(ctx, query, threshold, limit, filter, SearchOptions{RecordAccess: false, Filter: Filter{Areas: areas}}, MatchScore)
	if err != nil {
		return "", fmt.Errorf("memory_load: %w", err)
	}
	if len(hits) == 0 {
		return fmt.Sprintf("No memories found for the query %q (threshold %.2f).", query, threshold), nil
	}
	ids := make([]string, len(hits))
	var b strings.Builder
	for i, h := range hits {
		ids[i] = h.Record.ID
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "id: %s\narea: %s\n", h.Record.ID, h.Record.Area)
		if h.Record.Key != "" {
			fmt.Fprintf(&b, "key: %s\n", h.Record.Key)
		}
		if len(h.Record.Tags) > 0 {
			fmt.Fprintf(&b, "tags: %s\n", strings.Join(h.Record.Tags, ", "))
		}
		fmt.Fprintf(&b, "timestamp: %s\nContent: %s", h.Record.Updated.UTC().Format("2006-01-02 15:04:05"), h.Record.Text)
	}
	if err := s.RecordAccess(ctx, ids, toolSource(src, "memory_load")); err != nil {
		return "", fmt.Errorf("memory_load: %w", err)
	}
	return b.String(), nil
}

// MemoryForget is Agent Zero's memory_forget: it deletes every record whose
// similarity to query reaches threshold (default 0.75) and that the filter admits,
// and says how many.
func (s *Store) MemoryForget(ctx context.Context, query string, threshold float64, filter string, src Source) (string, error) {
	if threshold <= 0 {
		threshold = DefaultForgetThreshold
	}
	areas, err := s.areasFor(ctx, filter)
	if err != nil {
		return "", fmt.Errorf("memory_forget: %w", err)
	}
	hits, err := s.thresholded(ctx, query, threshold, 1000, filter, SearchOptions{Filter: Filter{Areas: areas}}, forgetScore)
	if err != nil {
		return "", fmt.Errorf("memory_forget: %w", err)
	}
	for _, h := range hits {
		if err := s.Delete(ctx, h.Record.ID, "memory_forget: "+query, toolSource(src, "memory_forget")); err != nil {
			return "", fmt.Errorf("memory_forget: %w", err)
		}
	}
	if len(hits) == 1 {
		return "1 memory deleted.", nil
	}
	return fmt.Sprintf("%d memories deleted.", len(hits)), nil
}

// areasFor chooses the areas a filter expression searches: every area when it
// names the library, otherwise the default (all but the library).
func (s *Store) areasFor(ctx context.Context, filter string) ([]string, error) {
	if !namesLibrary(filter) {
		return nil, nil
	}
	return s.areas(ctx)
}
