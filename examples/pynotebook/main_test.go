// Package pynotebook_test runs the Python notebook example as a plugin process
// of a real host, with the home's memory service behind it.
package pynotebook_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/service"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk/python"
)

// notOwned hides the client's Close from the host: the test closes it.
type notOwned struct {
	exocortexv1.MemoryServiceClient
}

func TestPythonNotebookThroughTheHost(t *testing.T) {
	if out, err := exec.Command(python.Interpreter, "-c", "import grpc, google.protobuf").CombinedOutput(); err != nil {
		t.Skipf("%s cannot import grpc and google.protobuf (%v: %s): apt-get install -y python3-grpcio python3-protobuf", python.Interpreter, err, out)
	}
	home, err := os.MkdirTemp("", "exo-pynb") // short: the socket's path must fit in 104 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	mem, err := service.Connect(t.Context(), service.Config{Dir: filepath.Join(home, "memory")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })

	plugins := t.TempDir()
	dir := filepath.Join(plugins, "pynotebook")
	src, err := os.ReadFile("main.py")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.py"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := python.Install(dir); err != nil {
		t.Fatal(err)
	}
	pj, _ := json.Marshal(discover.Manifest{Command: []string{python.Interpreter, "main.py"}})
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), pj, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: plugins, Source: discover.User}},
		Memory: func(context.Context) (exocortexv1.MemoryServiceClient, error) { return notOwned{mem}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	run := func(name, args string) *exocortexv1.ToolResult {
		t.Helper()
		tl, ok := h.Tool(name)
		if !ok {
			t.Fatalf("no tool %s (plugins: %v)", name, h.Plugins())
		}
		resp, err := h.ExecuteTool(t.Context(), tl, &exocortexv1.ExecuteToolRequest{
			Call:     &exocortexv1.HookCall{Extension: name, Context: &exocortexv1.Context{SessionId: "s1", MessageId: "m1", ContextId: "c1"}},
			ToolCall: &exocortexv1.ToolCall{Name: name, ArgsJson: args}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetResult()
	}
	res := run("note_add", `{"text":"The staging cluster is rebuilt every Sunday night"}`)
	if res.GetError() != "" || !strings.HasSuffix(res.GetContent(), " in area notes.") {
		t.Fatalf("note_add: %q, error %q", res.GetContent(), res.GetError())
	}
	id := strings.Fields(res.GetContent())[2]
	if r, ok, err := mem.Store().Get(context.Background(), id); err != nil || !ok || r.Area != "notes" || r.Provenance.Session != "s1" || r.Provenance.Source != "tool:note_add" {
		t.Fatalf("the record in the home's store: %+v", r)
	}
	if res := run("note_find", `{"query":"when is the staging cluster rebuilt"}`); !strings.Contains(res.GetContent(), id+": The staging cluster is rebuilt every Sunday night (why: BM25 rank 1") {
		t.Errorf("note_find: %q, error %q", res.GetContent(), res.GetError())
	}
	res = run("note_add", `{"text":"not mine","area":"main"}`)
	if !strings.Contains(res.GetError(), `plugin pynotebook may not write memory area "main"`) || !strings.Contains(res.GetError(), "memory_write_areas") {
		t.Errorf("note_add to main: %q", res.GetError())
	}
	if recs, err := mem.Store().List(context.Background(), memory.Filter{Areas: []string{memory.AreaMain}}); err != nil || len(recs) != 0 {
		t.Errorf("the refused write left %d records in main (%v)", len(recs), err)
	}
}
