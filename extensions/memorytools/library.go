package memorytools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/google/renameio/v2"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/exocortex/exocortex/extensions/internal/catalog"
	"github.com/exocortex/exocortex/extensions/internal/toolargs"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Catalog is the library catalog's content (catalog.Catalog).
type Catalog = catalog.Catalog

// CatalogEntry describes one document (catalog.Entry).
type CatalogEntry = catalog.Entry

// CatalogVersion is the catalog format's version.
const CatalogVersion = catalog.Version

// Files declares the data files the tools write, for the plugin's manifest.
func Files() []*exocortexv1.FileSpec {
	catalog := func(user string) *exocortexv1.FileSpec {
		return &exocortexv1.FileSpec{Id: "library_catalog", Path: "$EXOCORTEX_HOME/" + CatalogFile,
			Access: exocortexv1.Access_ACCESS_WRITE, User: user,
			Doc: "The library's documents (key, title, source, tags, words, dates) as JSON, rewritten after each change."}
	}
	store := func(user string, access exocortexv1.Access) *exocortexv1.FileSpec {
		return &exocortexv1.FileSpec{Id: "memory_store", Path: "$EXOCORTEX_HOME/" + StoreDir, Access: access, User: user,
			Doc: "The memory store (journal.jsonl and its indexes); the library is its isolated area \"library\"."}
	}
	return []*exocortexv1.FileSpec{
		catalog("library_add"), catalog("library_list"), catalog("memory_forget"),
		store("library_add", exocortexv1.Access_ACCESS_READ_WRITE),
		store("library_list", exocortexv1.Access_ACCESS_READ),
		store("library_search", exocortexv1.Access_ACCESS_READ_WRITE),
		store("memory_delete", exocortexv1.Access_ACCESS_READ_WRITE),
		store("memory_forget", exocortexv1.Access_ACCESS_READ_WRITE),
		store("memory_load", exocortexv1.Access_ACCESS_READ_WRITE),
		store("memory_retrieve", exocortexv1.Access_ACCESS_READ),
		store("memory_save", exocortexv1.Access_ACCESS_READ_WRITE),
	}
}

// slug turns a title into a library key: lower-case letters and digits joined by
// hyphens.
func slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
		if b.Len() >= 80 {
			break
		}
	}
	return b.String()
}

func metaString(r *exocortexv1.MemoryRecord, k string) string {
	return r.GetMetadata().GetFields()[k].GetStringValue()
}

func metaInt(r *exocortexv1.MemoryRecord, k string) int {
	return int(r.GetMetadata().GetFields()[k].GetNumberValue())
}

// documents lists the library's active documents, sorted by key.
func documents(ctx context.Context, cl exocortexv1.MemoryServiceClient, tag string) ([]*exocortexv1.MemoryRecord, error) {
	f := &exocortexv1.MemoryFilter{Areas: []string{AreaLibrary}}
	if tag != "" {
		f.Tags = []string{tag}
	}
	stream, err := cl.List(ctx, &exocortexv1.MemoryListRequest{Filter: f})
	if err != nil {
		return nil, err
	}
	var recs []*exocortexv1.MemoryRecord
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		recs = append(recs, resp.GetRecords()...)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].GetKey() < recs[j].GetKey() })
	return recs, nil
}

func entryOf(r *exocortexv1.MemoryRecord) CatalogEntry {
	title := metaString(r, "title")
	if title == "" {
		title = r.GetKey()
	}
	tags := r.GetTags()
	if tags == nil {
		tags = []string{}
	}
	return CatalogEntry{Key: r.GetKey(), Title: title, Source: metaString(r, "source"), Tags: tags,
		Words: metaInt(r, "words"), Added: r.GetCreated().AsTime().UTC(), Changed: r.GetUpdated().AsTime().UTC()}
}

// writeCatalog rewrites the catalog from the store.
func (st *Set) writeCatalog(ctx context.Context, cl exocortexv1.MemoryServiceClient) error {
	home, err := st.Home()
	if err != nil {
		return err
	}
	docs, err := documents(ctx, cl, "")
	if err != nil {
		return err
	}
	cat := Catalog{Version: CatalogVersion, Updated: time.Now().UTC(), Documents: []CatalogEntry{}}
	for _, r := range docs {
		cat.Documents = append(cat.Documents, entryOf(r))
	}
	cat.Count = len(cat.Documents)
	b, err := json.MarshalIndent(cat, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(home, CatalogFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("writing the library catalog: %w", err)
	}
	if err := renameio.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("writing the library catalog %s: %w", path, err)
	}
	return nil
}

type addArgs struct {
	Title   toolargs.Text    `json:"title"`
	Content toolargs.Text    `json:"content"`
	Text    toolargs.Text    `json:"text"`
	Source  toolargs.Text    `json:"source"`
	Tags    toolargs.Strings `json:"tags"`
}

// LibraryAdd stores a document in the library.
func (st *Set) LibraryAdd() sdk.Tool {
	return sdk.Tool{
		Name:        "library_add",
		Description: "Add a document (reference text, notes, an article) to the document library; adding the same title again replaces it.",
		Parameters: `{"type":"object","properties":{` +
			`"title":{"type":"string","description":"The document's title; its key in the library is derived from it."},` +
			`"content":{"type":"string","description":"The full text of the document."},` +
			`"source":{"type":"string","description":"Where it comes from: a URL, a file path, a citation."},` +
			`"tags":{"type":"array","items":{"type":"string"}}},` +
			`"required":["title","content"]}`,
		PromptFile: "agent.system.tool.library_add.md",
		Run: run("library_add", func(ctx context.Context, m tool, a *addArgs) (string, error) {
			title := strings.TrimSpace(string(a.Title))
			content := string(a.Content)
			if strings.TrimSpace(content) == "" {
				content = string(a.Text)
			}
			if title == "" {
				return "", fmt.Errorf(`library_add: "title" is empty: give the document a title`)
			}
			if strings.TrimSpace(content) == "" {
				return "", fmt.Errorf(`library_add: "content" is empty: give the document's text`)
			}
			key := slug(title)
			if key == "" {
				return "", fmt.Errorf("library_add: the title %q has no letters or digits to make a key from", title)
			}
			old, err := m.cl.Get(ctx, &exocortexv1.MemoryGetRequest{Area: AreaLibrary, Key: key})
			if err != nil {
				return "", err
			}
			words := len(strings.Fields(content))
			meta := map[string]any{"title": title, "words": words}
			if src := strings.TrimSpace(string(a.Source)); src != "" {
				meta["source"] = src
			}
			ms, err := structpb.NewStruct(meta)
			if err != nil {
				return "", err
			}
			if _, err := m.cl.Save(ctx, &exocortexv1.MemorySaveRequest{Records: []*exocortexv1.MemoryInput{{Area: AreaLibrary, Key: key, Text: content, Tags: a.Tags, Metadata: ms}},
				Source: m.mem.Source()}); err != nil {
				return "", err
			}
			if err := st.writeCatalog(ctx, m.cl); err != nil {
				return "", err
			}
			existed := old.GetFound()
			verb := "added to"
			if existed {
				verb = "replaced in"
			}
			return fmt.Sprintf("Document '%s' %s the library as '%s' (%d words).", title, verb, key, words), nil
		}),
	}
}

type searchArgs struct {
	Query toolargs.Text `json:"query"`
	Limit toolargs.Int  `json:"limit"`
}

// LibrarySearch searches the library, and only the library.
func (st *Set) LibrarySearch() sdk.Tool {
	return sdk.Tool{
		Name:        "library_search",
		Description: "Search the document library (only the library, not other memories); returns matching documents with an excerpt each.",
		Parameters: `{"type":"object","properties":{` +
			`"query":{"type":"string","description":"What to look for."},` +
			`"limit":{"type":"integer","minimum":1,"maximum":20,"description":"Most documents to return (default 5)."}},` +
			`"required":["query"]}`,
		PromptFile: "agent.system.tool.library_search.md",
		Run: run("library_search", func(ctx context.Context, m tool, a *searchArgs) (string, error) {
			q := strings.TrimSpace(string(a.Query))
			if q == "" {
				return "", fmt.Errorf(`library_search: "query" is empty: say what to look for`)
			}
			limit := 5
			if a.Limit.Set {
				limit = min(max(a.Limit.V, 1), 20)
			}
			res, err := m.cl.Search(ctx, &exocortexv1.MemorySearchRequest{Query: q, Options: &exocortexv1.MemorySearchOptions{Limit: int32(limit),
				Filter: &exocortexv1.MemoryFilter{Areas: []string{AreaLibrary}}, RecordAccess: true, Source: m.mem.Source()}})
			if err != nil {
				return "", err
			}
			if len(res.GetHits()) == 0 {
				return fmt.Sprintf("No library document matches %q. library_list shows what the library holds.", q), nil
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%d library document(s) match %q:\n", len(res.GetHits()), q)
			for i, h := range res.GetHits() {
				e := entryOf(h.GetRecord())
				fmt.Fprintf(&b, "\n%d. %s [%s]", i+1, e.Title, e.Key)
				if e.Source != "" {
					fmt.Fprintf(&b, " (source: %s)", e.Source)
				}
				fmt.Fprintf(&b, "\n%s\n", excerpt(h.GetRecord().GetText(), q, 500))
			}
			return strings.TrimRight(b.String(), "\n"), nil
		}),
	}
}

// excerpt is the paragraph of text with the most query words, cut to about n
// bytes.
func excerpt(text, query string, n int) string {
	terms := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	paras := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n")
	best, bestScore := "", -1
	for _, p := range paras {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		low, score := strings.ToLower(p), 0
		for _, t := range terms {
			score += strings.Count(low, t)
		}
		if score > bestScore {
			best, bestScore = p, score
		}
	}
	best = strings.Join(strings.Fields(best), " ")
	if len(best) > n {
		cut := n
		for cut > 0 && !isBoundary(best, cut) {
			cut--
		}
		best = best[:cut] + " ..."
	}
	return best
}

// isBoundary reports whether i is a good place to cut s: a space, not inside a
// multi-byte character.
func isBoundary(s string, i int) bool { return i < len(s) && s[i] == ' ' }

type listArgs struct {
	Tag toolargs.Text `json:"tag"`
}

// LibraryList lists the library's documents.
func (st *Set) LibraryList() sdk.Tool {
	return sdk.Tool{
		Name:        "library_list",
		Description: "List the documents in the library: key, title, source, tags and size.",
		Parameters:  `{"type":"object","properties":{"tag":{"type":"string","description":"Only documents with this tag."}}}`,
		PromptFile:  "agent.system.tool.library_list.md",
		Run: run("library_list", func(ctx context.Context, m tool, a *listArgs) (string, error) {
			tag := strings.TrimSpace(string(a.Tag))
			docs, err := documents(ctx, m.cl, tag)
			if err != nil {
				return "", err
			}
			if err := st.writeCatalog(ctx, m.cl); err != nil {
				return "", err
			}
			if len(docs) == 0 {
				if tag != "" {
					return fmt.Sprintf("No library document is tagged %q.", tag), nil
				}
				return "The library is empty. Add documents with library_add.", nil
			}
			var b strings.Builder
			if tag != "" {
				fmt.Fprintf(&b, "%d library document(s) tagged %q:\n", len(docs), tag)
			} else {
				fmt.Fprintf(&b, "%d library document(s):\n", len(docs))
			}
			for _, r := range docs {
				e := entryOf(r)
				fmt.Fprintf(&b, "- %s: %s (%d words", e.Key, e.Title, e.Words)
				if e.Source != "" {
					fmt.Fprintf(&b, "; source %s", e.Source)
				}
				if len(e.Tags) > 0 {
					fmt.Fprintf(&b, "; tags %s", strings.Join(e.Tags, ", "))
				}
				fmt.Fprintf(&b, "; added %s)\n", e.Added.Format("2006-01-02"))
			}
			return strings.TrimRight(b.String(), "\n"), nil
		}),
	}
}
