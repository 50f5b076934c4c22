package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exocortex/exocortex/memory/service"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// benchHome is a home with n records, its memory served by this process.
func benchHome(b *testing.B, n int) (string, *service.Client) {
	b.Helper()
	home, err := os.MkdirTemp("", "exo-mcpbench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(home) })
	mem, err := service.Connect(context.Background(), service.Config{Dir: filepath.Join(home, "memory")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { mem.Close() })
	topics := []string{"deploy", "garden", "invoice", "kernel", "recipe", "holiday", "backup", "printer"}
	var ins []*exocortexv1.MemoryInput
	for i := range n {
		ins = append(ins, &exocortexv1.MemoryInput{Text: fmt.Sprintf("note %d about the %s and the %s, written on day %d", i, topics[i%len(topics)], topics[(i/8)%len(topics)], i%365)})
	}
	if _, err := mem.Save(context.Background(), &exocortexv1.MemorySaveRequest{Records: ins}); err != nil {
		b.Fatal(err)
	}
	return home, mem
}

const benchQuery = "backup of the printer"

// BenchmarkMemorySearchInProcess is a search_memory's search through the
// memory service, from the process that owns the store.
func BenchmarkMemorySearchInProcess(b *testing.B) {
	_, mem := benchHome(b, 2000)
	ctx := context.Background()
	for b.Loop() {
		if _, err := mem.Search(ctx, &exocortexv1.MemorySearchRequest{Query: benchQuery, Options: &exocortexv1.MemorySearchOptions{Limit: 10}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMemorySearchMCPStdio is the same search as an MCP client sees it:
// search_memory of `exocortex mcp` on stdio (the Go SDK's client), the
// server a client of this process's memory service, as an IDE's is of a
// terminal session's.
func BenchmarkMemorySearchMCPStdio(b *testing.B) {
	home, _ := benchHome(b, 2000)
	exe := sdktest.BuildPlugin(b, "github.com/exocortex/exocortex/cmd/exocortex")
	cmd := exec.Command(exe, "mcp")
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	args := map[string]any{"query": benchQuery, "k": 10}
	for b.Loop() {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_memory", Arguments: args})
		if err != nil || r.IsError {
			b.Fatal(err, r)
		}
	}
}
