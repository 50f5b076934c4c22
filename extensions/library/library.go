// Package library tells the model what the document library holds, so it knows
// to search it: the library catalog extension reads the catalog the library
// tools keep ($EXOCORTEX_HOME/library/catalog.json, package memorytools) and adds
// a short summary.
//
// Library catalog (message_loop_prompts_before, order 17). The seed ran it at
// before_main_llm_call, where its block never reached the model (its seam 7);
// and the seed's catalog path was spelled three ways (seam 6): here the path is
// catalog.File, declared under the id library_catalog by the tools
// that write it and by this reader. Rules:
//   - no catalog file, or no documents: no block;
//   - otherwise the LIBRARY block gives the number of documents and words, the
//     collections (the documents' tags, the TopTags most used, with counts), the
//     RecentTitles most recently changed titles, and says to use library_search;
//   - a catalog that does not parse is logged and skipped, never guessed at.
package library

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/catalog"
	"github.com/exocortex/exocortex/extensions/internal/textfacts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Summary sizes.
const (
	TopTags      = 8
	RecentTitles = 5
)

// Catalog is the library-catalog extension. Home gives the Exocortex home.
type Catalog struct {
	Home func() (string, error)
}

// File declares the catalog as read.
func File() *exocortexv1.FileSpec {
	return &exocortexv1.FileSpec{Id: "library_catalog", Path: "$EXOCORTEX_HOME/" + catalog.File, Access: exocortexv1.Access_ACCESS_READ,
		User: "library_catalog", Doc: "Read to summarise the library for the model."}
}

// Spec declares it.
func (e Catalog) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "library_catalog",
		Hooks:           []sdk.Hook{sdk.MessageLoopPromptsBefore(e)},
		Order:           17,
		InjectsPrompt:   true,
		Description:     "Adds the LIBRARY block: documents, words, collections (tags) and recent titles from library/catalog.json.",
		EffectsDeclared: true,
	}
}

// Summarize renders the block's text, "" for an empty library.
func Summarize(cat catalog.Catalog) string {
	if len(cat.Documents) == 0 {
		return ""
	}
	words := 0
	tags := map[string]int{}
	for _, d := range cat.Documents {
		words += d.Words
		for _, t := range d.Tags {
			tags[t]++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The document library holds %d documents (%d words).", len(cat.Documents), words)
	if len(tags) > 0 {
		names := make([]string, 0, len(tags))
		for t := range tags {
			names = append(names, t)
		}
		sort.Slice(names, func(i, j int) bool {
			return tags[names[i]] > tags[names[j]] || tags[names[i]] == tags[names[j]] && names[i] < names[j]
		})
		if len(names) > TopTags {
			names = names[:TopTags]
		}
		var parts []string
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%s (%d)", n, tags[n]))
		}
		b.WriteString(" Collections: " + strings.Join(parts, ", ") + ".")
	}
	docs := append([]catalog.Entry(nil), cat.Documents...)
	sort.SliceStable(docs, func(i, j int) bool { return docs[i].Changed.After(docs[j].Changed) })
	if len(docs) > RecentTitles {
		docs = docs[:RecentTitles]
	}
	var titles []string
	for _, d := range docs {
		titles = append(titles, fmt.Sprintf("%q", textfacts.Shorten(d.Title, 60)))
	}
	b.WriteString(" Recent: " + strings.Join(titles, ", ") + ".")
	b.WriteString(" Search it with library_search before searching the web.")
	return b.String()
}

// MessageLoopPromptsBefore adds the summary.
func (cx Catalog) MessageLoopPromptsBefore(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
	if cx.Home == nil {
		return nil, nil
	}
	home, err := cx.Home()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(home, catalog.File)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var cat catalog.Catalog
	if err := json.Unmarshal(b, &cat); err != nil {
		c.Logger().Warn("the library catalog does not parse; no LIBRARY block", "file", path, "err", err)
		return nil, nil
	}
	text := Summarize(cat)
	if text == "" {
		return nil, nil
	}
	return &exocortexv1.MessageLoopPromptsBeforeResponse{PromptBlocks: []*exocortexv1.PromptBlock{{Title: "LIBRARY", Content: text}}}, nil
}
