package ontology

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/extensions/internal/hooktest"
	"github.com/exocortex/exocortex/extensions/internal/memtest"
	"github.com/exocortex/exocortex/extensions/internal/stagelog"
	"github.com/exocortex/exocortex/extensions/workingmemory"
	"github.com/exocortex/exocortex/memory"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestRelationships(t *testing.T) {
	got := Relationships("`parseReply` calls `checkLine`. README.md contains config.yaml.")
	want := []string{"parseReply calls checkLine", "README.md contains config.yaml"}
	var s []string
	for _, r := range got {
		s = append(s, r.From+" "+r.Rel+" "+r.To)
	}
	if strings.Join(s, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", s, want)
	}
}

func TestMaintenanceAndQueryThroughProtocol(t *testing.T) {
	home := t.TempDir()
	homeFn := func() (string, error) { return home, nil }
	h := memtest.ServeIn(t, home, sdk.Plugin{Name: "memory-tools", UsesMemory: true, MemoryWriteAreas: WriteAreas(),
		Extensions: []sdk.Extension{Maintenance{Home: homeFn}, NewQuery(homeFn)}})
	st, client := h.Store, h.Client
	hist := hooktest.Msgs("user", "Does `loadConfig` read config.yaml? Ask Agent Zero.", "tool:text_editor", "func loadConfig() { ... } // loadConfig reads config.yaml")
	end := func() {
		if _, err := client.MonologueEnd(t.Context(), &exocortexv1.MonologueEndRequest{
			Call: hooktest.Call("ontology_maintenance", 2, hist), History: hist, FinalResponse: "Yes: loadConfig reads config.yaml; agent zero is not involved.",
		}); err != nil {
			t.Fatal(err)
		}
	}
	end()
	end() // twice: entities merge, relationships are not repeated
	var rels []Relationship
	_ = stagelog.Read(context.Background(), filepath.Join(home, stagelog.RelationshipsFile), 0, func(r stagelog.Record) error {
		var rel Relationship
		_ = r.Decode(&rel)
		rels = append(rels, rel)
		return nil
	})
	found := false
	for _, r := range rels {
		if r.From == "loadConfig" && r.Rel == "reads" && r.To == "config.yaml" {
			found = true
		}
	}
	if !found || len(rels) == 0 {
		t.Fatalf("relationships %+v", rels)
	}
	n := len(rels)
	r, ok, err := st.GetByKey(context.Background(), memory.AreaOntology, "entity:agent zero")
	if err != nil || !ok || !strings.Contains(r.Text, "Agent Zero") {
		t.Fatalf("entity record %v", r)
	}
	if m, _ := r.Metadata["mentions"].(float64); m < 2 {
		t.Errorf("mentions %v after two monologues", r.Metadata["mentions"])
	}
	// The query shows what is known about working-memory entities.
	wm := &exocortexv1.WorkingMemory{Entities: []*exocortexv1.WorkingEntity{{Text: "config.yaml"}, {Text: "loadConfig"}}}
	resp, err := client.MessageLoopPromptsAfter(t.Context(), &exocortexv1.MessageLoopPromptsAfterRequest{Call: sdktest.Call("ontology_query", sdktest.State(workingmemory.Key(), wm))})
	if err != nil {
		t.Fatal(err)
	}
	bs := resp.GetPromptBlocks()
	if len(bs) != 1 || !strings.Contains(bs[0].GetContent(), "- loadConfig (mentioned") || !strings.Contains(bs[0].GetContent(), "reads config.yaml") {
		t.Fatalf("block %v (relationships: %d)", bs, n)
	}
}
