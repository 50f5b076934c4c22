package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/service"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestGateKindsMatchTheStore checks that the journal kinds and the area the
// gate names are the store's.
func TestGateKindsMatchTheStore(t *testing.T) {
	for got, want := range map[string]string{kindUpsert: memory.KindUpsert, kindAccess: memory.KindAccess, kindArchive: memory.KindArchive,
		kindRestore: memory.KindRestore, kindDelete: memory.KindDelete, areaMain: memory.AreaMain} {
		if got != want {
			t.Errorf("the gate names %q where the store has %q", got, want)
		}
	}
}

// homeService makes this test process the owner of a store in a new home (a
// short path: the socket's must fit in 104 bytes) and returns the memory
// service and the store.
func homeService(t *testing.T) (exocortexv1.MemoryServiceClient, *memory.Store) {
	t.Helper()
	home, err := os.MkdirTemp("", "exo-mem")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	c, err := service.Connect(context.Background(), service.Config{Dir: filepath.Join(home, "memory")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	if !c.Owner() {
		t.Fatal("the test process is not the owner of its new store")
	}
	return c, c.Store()
}

// notOwned hides the client's Close from the host, which would otherwise close
// it when it closes: the test owns it.
type notOwned struct {
	exocortexv1.MemoryServiceClient
}

// TestPluginMemoryThroughTheHost starts the notebook example as a plugin
// process and checks what it gets of memory through the host: a save and a
// search (with why) of its declared area, the records in the home's store with
// the call's session and the tool's source; a write to an undeclared area
// refused naming the plugin, the area and memory_write_areas; and, without
// uses_memory in its manifest, every memory call refused.
func TestPluginMemoryThroughTheHost(t *testing.T) {
	mem, store := homeService(t)
	bin := sdktest.BuildPlugin(t, "../../examples/notebook")
	tool := func(t *testing.T, h *Host, name, args string) *exocortexv1.ToolResult {
		t.Helper()
		tl, ok := h.Tool(name)
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		resp, err := h.ExecuteTool(t.Context(), tl, &exocortexv1.ExecuteToolRequest{
			Call:     &exocortexv1.HookCall{Extension: name, Context: &exocortexv1.Context{SessionId: "s1", MessageId: "m1", ContextId: "c1"}},
			ToolCall: &exocortexv1.ToolCall{Name: name, ArgsJson: args}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetResult()
	}
	start := func(t *testing.T, env ...string) *Host {
		t.Helper()
		h, err := newHost(t, filepath.Dir(bin), Options{PluginEnv: env})
		if err != nil {
			t.Fatal(err)
		}
		h.Services().SetMemory(func(context.Context) (exocortexv1.MemoryServiceClient, error) { return notOwned{mem}, nil })
		return h
	}

	t.Run("declared", func(t *testing.T) {
		h := start(t)
		res := tool(t, h, "note_add", `{"text":"The deploy script lives in scripts/deploy.sh","tags":["ops"]}`)
		if res.GetError() != "" || !strings.HasPrefix(res.GetContent(), "Noted as ") || !strings.HasSuffix(res.GetContent(), " in area notes.") {
			t.Fatalf("note_add: %q, error %q", res.GetContent(), res.GetError())
		}
		id := strings.Fields(res.GetContent())[2]
		r, ok, err := store.Get(context.Background(), id)
		if err != nil || !ok || r.Area != "notes" || r.Provenance.Session != "s1" || r.Provenance.Message != "m1" || r.Provenance.Source != "tool:note_add" {
			t.Fatalf("the record in the home's store: %+v", r)
		}
		res = tool(t, h, "note_find", `{"query":"where is the deploy script"}`)
		if res.GetError() != "" || !strings.Contains(res.GetContent(), id+": The deploy script lives in scripts/deploy.sh (why: BM25 rank 1") {
			t.Fatalf("note_find: %q, error %q", res.GetContent(), res.GetError())
		}
		res = tool(t, h, "note_add", `{"text":"not mine to write","area":"main"}`)
		for _, want := range []string{`plugin notebook may not write memory area "main"`, "memory_write_areas", "notes"} {
			if !strings.Contains(res.GetError(), want) {
				t.Errorf("note_add to main: error %q lacks %q", res.GetError(), want)
			}
		}
		if strings.Contains(res.GetError(), "rpc error") {
			t.Errorf("note_add to main: the error shows the transport: %q", res.GetError())
		}
		if recs, err := store.List(context.Background(), memory.Filter{Areas: []string{memory.AreaMain}}); err != nil || len(recs) != 0 {
			t.Errorf("the refused write left %d records in main (%v)", len(recs), err)
		}
	})
	t.Run("undeclared", func(t *testing.T) {
		h := start(t, "NOTEBOOK_UNDECLARED=1")
		res := tool(t, h, "note_find", `{"query":"deploy"}`)
		for _, want := range []string{"plugin notebook", "does not declare uses_memory"} {
			if !strings.Contains(res.GetError(), want) {
				t.Errorf("note_find without uses_memory: error %q lacks %q", res.GetError(), want)
			}
		}
		if res := tool(t, h, "note_add", `{"text":"x"}`); !strings.Contains(res.GetError(), "does not declare uses_memory") {
			t.Errorf("note_add without uses_memory: error %q", res.GetError())
		}
	})
}

// TestGateWrites checks each kind of write the gate forwards against a plugin
// that declares the area notes: writes of notes records pass, of main records
// are refused with AreaRefusedError's message, forget needs "*", and an append
// is judged by its events.
func TestGateWrites(t *testing.T) {
	mem, store := homeService(t)
	ctx := t.Context()
	src := memory.Source{Source: "test"}
	mine, err := store.Put(ctx, memory.Input{Area: "notes", Text: "a note"}, src)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := store.Put(ctx, memory.Input{Area: memory.AreaMain, Text: "a main record"}, src)
	if err != nil {
		t.Fatal(err)
	}
	s := &Services{}
	s.SetMemory(func(context.Context) (exocortexv1.MemoryServiceClient, error) { return notOwned{mem}, nil })
	manifest := &exocortexv1.ManifestResponse{Plugin: "p", UsesMemory: true, MemoryWriteAreas: []string{"notes"}}
	g := s.MemoryFor("p", func() *exocortexv1.ManifestResponse { return manifest })
	upsert := func(area string) []byte { return []byte(`{"id":"x-` + area + `","area":"` + area + `","text":"t"}`) }
	tests := []struct {
		name string
		call func() error
		// refused is the area named in the refusal ("": allowed).
		refused string
	}{
		{"save notes", func() error {
			_, err := g.Save(ctx, &exocortexv1.MemorySaveRequest{Records: []*exocortexv1.MemoryInput{{Area: "notes", Text: "n"}}})
			return err
		}, ""},
		{"save main by default", func() error {
			_, err := g.Save(ctx, &exocortexv1.MemorySaveRequest{Records: []*exocortexv1.MemoryInput{{Text: "m"}}})
			return err
		}, "main"},
		{"save over a main record by id", func() error {
			_, err := g.Save(ctx, &exocortexv1.MemorySaveRequest{Records: []*exocortexv1.MemoryInput{{Id: theirs.ID, Area: "notes", Text: "m"}}})
			return err
		}, "main"},
		{"update mine", func() error {
			text := "changed"
			_, err := g.Update(ctx, &exocortexv1.MemoryUpdateRequest{Id: mine.ID, Text: &text})
			return err
		}, ""},
		{"archive theirs", func() error {
			_, err := g.Archive(ctx, &exocortexv1.MemoryArchiveRequest{Id: theirs.ID})
			return err
		}, "main"},
		{"delete theirs", func() error {
			_, err := g.Delete(ctx, &exocortexv1.MemoryDeleteRequest{Id: theirs.ID})
			return err
		}, "main"},
		{"forget", func() error {
			_, err := g.Forget(ctx, &exocortexv1.MemoryForgetRequest{Query: "main record"})
			return err
		}, "*"},
		{"tool save", func() error {
			_, err := g.ToolSave(ctx, &exocortexv1.MemoryToolSaveRequest{Key: "k", Value: "v"})
			return err
		}, "main"},
		{"append an upsert of notes", func() error {
			_, err := g.Append(ctx, &exocortexv1.MemoryAppendRequest{Entries: []*exocortexv1.MemoryJournalEntry{{Kind: memory.KindUpsert, Payload: upsert("notes")}}})
			return err
		}, ""},
		{"append an upsert of main", func() error {
			_, err := g.Append(ctx, &exocortexv1.MemoryAppendRequest{Entries: []*exocortexv1.MemoryJournalEntry{{Kind: memory.KindUpsert, Payload: upsert("main")}}})
			return err
		}, "main"},
		{"record access of theirs", func() error {
			_, err := g.RecordAccess(ctx, &exocortexv1.MemoryRecordAccessRequest{Ids: []string{theirs.ID}})
			return err
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if tt.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var refused *AreaRefusedError
			if !errors.As(err, &refused) || refused.Area != tt.refused || refused.Plugin != "p" || status.Code(err) != codes.PermissionDenied ||
				!strings.Contains(err.Error(), "memory_write_areas") {
				t.Fatalf("error %v, want the area %q refused naming memory_write_areas", err, tt.refused)
			}
		})
	}
	if r, ok, err := store.Get(context.Background(), theirs.ID); err != nil || !ok || !r.Active() || r.Text != "a main record" {
		t.Errorf("the main record after the refused writes: %+v (%v)", r, err)
	}
	if r, ok, err := store.Get(context.Background(), mine.ID); err != nil || !ok || r.Text != "changed" {
		t.Errorf("the notes record after its update: %+v (%v)", r, err)
	}
}

// TestUseMemoryKeepsTheDeclarations checks that the memory tools a plugin runs
// through UseMemory are held to its own declarations, as its direct calls are.
func TestUseMemoryKeepsTheDeclarations(t *testing.T) {
	notes := &exocortexv1.ManifestResponse{UsesMemory: true, MemoryWriteAreas: []string{"notes"}}
	tests := []struct {
		name     string
		manifest *exocortexv1.ManifestResponse
		tool     string
		args     string
		want     string // "" when allowed
	}{
		{"no uses_memory", &exocortexv1.ManifestResponse{}, "memory_load", `{"query":"x"}`, "does not declare uses_memory"},
		{"load reads", notes, "memory_load", `{"query":"x"}`, ""},
		{"save to its area", notes, "memory_save", `{"key":"k","value":"v","area":"notes"}`, ""},
		{"save to main", notes, "memory_save", `{"key":"k","value":"v"}`, `may not write memory area "main"`},
		{"delete elsewhere", notes, "memory_delete", `{"key":"k","area":"solutions"}`, `may not write memory area "solutions"`},
		{"forget", notes, "memory_forget", `{"query":"x"}`, `needs memory_write_areas "*"`},
		{"forget with every area", &exocortexv1.ManifestResponse{UsesMemory: true, MemoryWriteAreas: []string{"*"}}, "memory_forget", `{"query":"x"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &memoryGate{s: &Services{}, plugin: "p", manifest: func() *exocortexv1.ManifestResponse { return tt.manifest }}
			err := g.useMemory(&exocortexv1.UseMemoryRequest{Tool: tt.tool, ArgsJson: tt.args})
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || status.Code(err) != codes.PermissionDenied) {
				t.Fatalf("useMemory = %v, want %q", err, tt.want)
			}
		})
	}
}
