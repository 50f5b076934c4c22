package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exocortex/exocortex/sdk/sdktest"
)

// stdioMCP starts `exocortex mcp` on home through the Go SDK's client.
func stdioMCP(t *testing.T, ctx context.Context, exe, home string) (*mcp.ClientSession, *exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.CommandContext(ctx, exe, "mcp")
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1.0.0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 20 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connecting to exocortex mcp: %v\n%s", err, stderr.String())
	}
	return cs, cmd, &stderr
}

// TestMCPStdioOversizedAndDisconnect: over stdio, against the real binary, a
// result over config.yaml's mcp.max_result_bytes is an error naming its size
// and the limit and saying nothing was cut (the record is not returned in
// part); a client that closes while its calls are in flight leaves a server
// that exits on its own (exit 0, within the SDK's wait, no panic) and a home
// the next `exocortex mcp` serves at once.
func TestMCPStdioOversizedAndDisconnect(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home := serviceHome(t)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("mcp:\n  max_result_bytes: 600\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a long record about gardens and roses ", 40)
	if o, e, code := runExo(t, exe, t.TempDir(), home, "memory", "add", "--embedder", "none", long); code != 0 {
		t.Fatalf("memory add: exit %d: %s %s", code, o, e)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	cs, cmd, stderr := stdioMCP(t, ctx, exe, home)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_memory", Arguments: map[string]any{"query": "gardens roses"}})
	if err != nil {
		t.Fatal(err)
	}
	got := resultText(res)
	if !res.IsError {
		t.Errorf("an oversized search_memory succeeded: %d bytes", len(got))
	}
	for _, want := range []string{"search_memory", "over the limit of 600 bytes", "mcp.max_result_bytes", "nothing was cut"} {
		if !strings.Contains(got, want) {
			t.Errorf("the oversized result's error %q does not say %q", got, want)
		}
	}
	if strings.Contains(got, "gardens and roses") || res.StructuredContent != nil {
		t.Errorf("part of the oversized result came back: %q %v", got, res.StructuredContent)
	}

	// Calls in flight, then the client goes.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "compile_memory", Arguments: map[string]any{"query": "gardens", "token_budget": 5000}})
		})
	}
	time.Sleep(5 * time.Millisecond)
	start := time.Now()
	if err := cs.Close(); err != nil {
		t.Errorf("exocortex mcp did not exit on its own when its client went mid-call (%v after %s)\n%s", err, time.Since(start).Round(time.Millisecond), stderr.String())
	}
	wg.Wait()
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("exocortex mcp ended %v after its client went", cmd.ProcessState)
	}
	if s := stderr.String(); strings.Contains(s, "panic") || strings.Contains(s, "goroutine ") {
		t.Errorf("exocortex mcp's stderr:\n%s", s)
	}
	t.Logf("exocortex mcp exited %s after its client went mid-call", time.Since(start).Round(time.Millisecond))

	// The next client is served at once.
	cs2, _, stderr2 := stdioMCP(t, ctx, exe, home)
	defer cs2.Close()
	res, err = cs2.CallTool(ctx, &mcp.CallToolParams{Name: "search_memory", Arguments: map[string]any{"query": "gardens roses", "k": 1}})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "over the limit") {
		t.Errorf("the next exocortex mcp: %v %+v\n%s", err, res, stderr2.String())
	}
	res, err = cs2.CallTool(ctx, &mcp.CallToolParams{Name: "memory_save", Arguments: map[string]any{"key": "after", "value": "saved after the disconnect"}})
	if err != nil || res.IsError {
		t.Errorf("memory_save after the disconnect: %v %s\n%s", err, resultText(res), stderr2.String())
	}
}
