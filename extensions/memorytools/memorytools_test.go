package memorytools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/extensions/internal/memtest"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

type harness struct {
	t      *testing.T
	client exocortexv1.PluginClient
	home   string
}

func serve(t *testing.T) *harness {
	t.Helper()
	home := t.TempDir()
	st := New(func() (string, error) { return home, nil })
	h := memtest.ServeIn(t, home, sdk.Plugin{Name: "memory-tools", Version: "test", Tools: st.Tools(), Files: Files(),
		UsesMemory: true, MemoryWriteAreas: WriteAreas()})
	return &harness{t: t, client: h.Client, home: home}
}

func (h *harness) call(tool string, args any) *exocortexv1.ToolResult {
	h.t.Helper()
	b, _ := json.Marshal(args)
	resp, err := h.client.ExecuteTool(h.t.Context(), &exocortexv1.ExecuteToolRequest{
		Call: sdktest.Call(tool), ToolCall: &exocortexv1.ToolCall{Name: tool, ArgsJson: string(b)}})
	if err != nil {
		h.t.Fatalf("%s(%s): %v", tool, b, err)
	}
	return resp.GetResult()
}

func (h *harness) ok(tool string, args any) string {
	h.t.Helper()
	res := h.call(tool, args)
	if res.GetError() != "" {
		h.t.Fatalf("%s(%v): %s", tool, args, res.GetError())
	}
	return res.GetContent()
}

type m = map[string]any

// TestEchomenStrings checks ECHOMEN's contract strings through the protocol.
func TestEchomenStrings(t *testing.T) {
	h := serve(t)
	if got := h.ok("memory_save", m{"key": "user_project_goals", "value": "Ship the tool plugins.", "tags": []string{"project", "goals"}}); got != "Memory item 'user_project_goals' saved successfully." {
		t.Errorf("memory_save = %q", got)
	}
	h.ok("memory_save", m{"key": "editor", "value": "Prefers vim.", "tags": "user_pref, project"})
	if got := h.ok("memory_retrieve", m{"key": "user_project_goals"}); got != "Ship the tool plugins." {
		t.Errorf("memory_retrieve by key = %q", got)
	}
	if got := h.ok("memory_retrieve", m{"tags": []string{"goals"}}); got != "Ship the tool plugins." {
		t.Errorf("memory_retrieve by one-match tag = %q", got)
	}
	var several []struct {
		Key, Value string
		Tags       []string
	}
	got := h.ok("memory_retrieve", m{"tags": []string{"project"}})
	if err := json.Unmarshal([]byte(got), &several); err != nil || len(several) != 2 || several[0].Key != "editor" || several[1].Value != "Ship the tool plugins." {
		t.Errorf("memory_retrieve by shared tag = %s (%v)", got, err)
	}
	// Saving a key again replaces its value.
	h.ok("memory_save", m{"key": "editor", "value": "Prefers helix now."})
	if got := h.ok("memory_retrieve", m{"key": "editor"}); got != "Prefers helix now." {
		t.Errorf("after update = %q", got)
	}
	if got := h.ok("memory_delete", m{"key": "editor"}); got != "Memory item 'editor' deleted successfully." {
		t.Errorf("memory_delete = %q", got)
	}
	for _, tt := range []struct {
		tool string
		args m
		want string
	}{
		{"memory_retrieve", m{"key": "editor"}, "memory_retrieve: no memory item with key 'editor'"},
		{"memory_retrieve", m{}, "memory_retrieve: give a key or at least one tag"},
		{"memory_delete", m{"key": "editor"}, "memory_delete: no memory item with key 'editor'"},
		{"memory_save", m{"key": "k"}, "memory_save: value for key 'k' is empty"},
		{"memory_save", m{"value": "v"}, "memory_save: key is required"},
		{"memory_load", m{}, `memory_load: "query" is empty`},
		{"memory_load", m{"query": "x", "filter": "area ==="}, "memory_load:"},
	} {
		if res := h.call(tt.tool, tt.args); !strings.Contains(res.GetError(), tt.want) {
			t.Errorf("%s(%v): error %q, want %q", tt.tool, tt.args, res.GetError(), tt.want)
		}
	}
}

func TestLoadAndForget(t *testing.T) {
	h := serve(t)
	h.ok("memory_save", m{"key": "deploy", "value": "Deploys go through the staging cluster first, then production.", "tags": []string{"ops"}})
	h.ok("memory_save", m{"key": "lunch", "value": "The team eats lunch at noon."})
	got := h.ok("memory_load", m{"query": "staging cluster deploys"})
	if !strings.Contains(got, "key: deploy") || strings.Contains(got, "lunch") {
		t.Errorf("memory_load:\n%s", got)
	}
	got = h.ok("memory_load", m{"query": "staging cluster", "filter": "'nothing' in tags"})
	if !strings.HasPrefix(got, "No memories found") {
		t.Errorf("memory_load with a filter that admits nothing: %q", got)
	}
	if got := h.ok("memory_forget", m{"query": "staging cluster deploys"}); got != "1 memory deleted." {
		t.Errorf("memory_forget = %q", got)
	}
	if res := h.call("memory_retrieve", m{"key": "deploy"}); res.GetError() == "" {
		t.Errorf("the forgotten memory is still there: %q", res.GetContent())
	}
	if got := h.ok("memory_retrieve", m{"key": "lunch"}); got != "The team eats lunch at noon." {
		t.Errorf("memory_forget took too much: %q", got)
	}
}

func readCatalog(t *testing.T, home string) Catalog {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, CatalogFile))
	if err != nil {
		t.Fatal(err)
	}
	var c Catalog
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("catalog: %v\n%s", err, b)
	}
	return c
}

// TestLibraryIsolation: the library and the main memory never see each other.
func TestLibraryIsolation(t *testing.T) {
	h := serve(t)
	got := h.ok("library_add", m{"title": "Photosynthesis: A Primer", "source": "https://example.org/photo",
		"content": "Plants make sugar from light.\n\nChlorophyll absorbs red and blue light for photosynthesis.", "tags": []string{"biology"}})
	if got != "Document 'Photosynthesis: A Primer' added to the library as 'photosynthesis-a-primer' (13 words)." {
		t.Errorf("library_add = %q", got)
	}
	h.ok("library_add", m{"title": "Rust ownership", "content": "Ownership and borrowing rules."})
	h.ok("memory_save", m{"key": "photo-note", "value": "My own note: photosynthesis questions for the quiz."})

	got = h.ok("library_search", m{"query": "photosynthesis"})
	if !strings.Contains(got, "Photosynthesis: A Primer [photosynthesis-a-primer] (source: https://example.org/photo)") ||
		!strings.Contains(got, "Chlorophyll absorbs") || strings.Contains(got, "quiz") {
		t.Errorf("library_search sees the wrong things:\n%s", got)
	}
	got = h.ok("memory_load", m{"query": "photosynthesis"})
	if !strings.Contains(got, "quiz") || strings.Contains(got, "Chlorophyll") {
		t.Errorf("memory_load sees the library:\n%s", got)
	}
	if res := h.call("memory_retrieve", m{"tags": []string{"biology"}}); res.GetError() != "memory_retrieve: no memory item is tagged biology" {
		t.Errorf("memory_retrieve sees a library tag: %q, error %q", res.GetContent(), res.GetError())
	}
	// With word vectors (the built-in table, when no file is found) the library's
	// documents may match "quiz" loosely; the main memory's note must not.
	if got := h.ok("library_search", m{"query": "quiz"}); strings.Contains(got, "My own note") || strings.Contains(got, "photo-note") {
		t.Errorf("library_search found a main memory: %q", got)
	}

	cat := readCatalog(t, h.home)
	if cat.Version != CatalogVersion || cat.Count != 2 || cat.Documents[0].Key != "photosynthesis-a-primer" ||
		cat.Documents[0].Title != "Photosynthesis: A Primer" || cat.Documents[0].Words != 13 ||
		cat.Documents[0].Source != "https://example.org/photo" || cat.Documents[1].Key != "rust-ownership" {
		t.Errorf("catalog: %+v", cat)
	}
	// The same title replaces the document.
	got = h.ok("library_add", m{"title": "photosynthesis  a primer", "content": "Revised: light reactions and the Calvin cycle."})
	if !strings.Contains(got, "replaced in the library as 'photosynthesis-a-primer'") {
		t.Errorf("re-add = %q", got)
	}
	if cat := readCatalog(t, h.home); cat.Count != 2 {
		t.Errorf("catalog after replace has %d documents", cat.Count)
	}
	got = h.ok("library_list", m{})
	if !strings.HasPrefix(got, "2 library document(s):\n- photosynthesis-a-primer: photosynthesis  a primer (7 words") {
		t.Errorf("library_list:\n%s", got)
	}
	if got := h.ok("library_list", m{"tag": "biology"}); got != `No library document is tagged "biology".` {
		t.Errorf("library_list by tag after the replace dropped the tag: %q", got)
	}
	// memory_forget with a filter naming the library deletes documents, and
	// the catalog follows.
	h.ok("memory_forget", m{"query": "ownership borrowing", "filter": "area == 'library'"})
	if cat := readCatalog(t, h.home); cat.Count != 1 || cat.Documents[0].Key != "photosynthesis-a-primer" {
		t.Errorf("catalog after forget: %+v", cat)
	}
	for _, tt := range []struct {
		tool string
		args m
		want string
	}{
		{"library_add", m{"content": "x"}, `"title" is empty`},
		{"library_add", m{"title": "t"}, `"content" is empty`},
		{"library_add", m{"title": "!!!", "content": "x"}, "no letters or digits"},
		{"library_search", m{}, `"query" is empty`},
	} {
		if res := h.call(tt.tool, tt.args); !strings.Contains(res.GetError(), tt.want) {
			t.Errorf("%s(%v): error %q, want %q", tt.tool, tt.args, res.GetError(), tt.want)
		}
	}
}

func TestExcerptAndSlug(t *testing.T) {
	for in, want := range map[string]string{"Photosynthesis: A Primer": "photosynthesis-a-primer", "  Go 1.26 — notes ": "go-1-26-notes", "Ünïcode Títle": "ünïcode-títle"} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
	text := "Intro paragraph.\n\nThe second part is about chlorophyll and chlorophyll again.\n\nEnd."
	if got := excerpt(text, "chlorophyll", 500); got != "The second part is about chlorophyll and chlorophyll again." {
		t.Errorf("excerpt = %q", got)
	}
	if got := excerpt(strings.Repeat("word ", 200), "word", 50); len(got) > 54 || !strings.HasSuffix(got, " ...") {
		t.Errorf("long excerpt = %q", got)
	}
}
