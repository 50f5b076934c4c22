package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/memory/service"
	"github.com/exocortex/exocortex/sdk/sdktest"
	mcpserver "github.com/exocortex/exocortex/server/mcp"
)

// mcpNode is the directory `make mcp-clients` installs the real MCP clients
// and servers in (node_modules beneath it), or the test is skipped saying so.
func mcpNode(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not found: skipping the tests with real MCP clients (install Node.js; `make mcp-clients`, which `make test` runs, installs the clients)")
	}
	dir := os.Getenv("EXOCORTEX_MCP_NODE")
	if dir == "" {
		abs, err := filepath.Abs(filepath.Join("..", "..", ".tools", "mcp-node"))
		if err != nil {
			t.Fatal(err)
		}
		dir = abs
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Skipf("the MCP clients are not installed in %s: run `make mcp-clients` (make test does)", dir)
	}
	return dir
}

// runMCPClient runs testdata/mcp/client.mjs and, once it is subscribed, saves
// a memory with `exocortex memory add` in another process; it fails the test
// with the client's output unless every check passed.
func runMCPClient(t *testing.T, exe, home, nodeDir string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	script, err := filepath.Abs(filepath.Join("testdata", "mcp", "client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "node", append([]string{script, nodeDir}, args...)...)
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if sc.Text() == "SUBSCRIBED" {
			if o, e, code := runExo(t, exe, t.TempDir(), home, "memory", "add", "a note saved from another process", "--tags", "other"); code != 0 {
				t.Errorf("memory add: exit %d: %s %s", code, o, e)
			}
		}
	}
	err = cmd.Wait()
	got := strings.Join(lines, "\n")
	if err != nil || !strings.Contains(got, "PASS disconnect mid-call") {
		t.Fatalf("the TypeScript SDK client failed (%v):\n%s\nstderr:\n%s", err, got, stderr.String())
	}
	t.Logf("TypeScript SDK client:\n%s", got)
}

// TestMCPStdioTypeScriptSDK: the official TypeScript SDK starts `exocortex mcp`
// on stdio while `exocortex memory serve` owns the home, lists the tools (each
// with input and output schemas) and resources, calls every tool, gets
// protocol errors for an unknown tool and bad arguments, is told of a memory
// saved by a third process, and disconnects in the middle of a call; the
// owner serves on afterwards.
func TestMCPStdioTypeScriptSDK(t *testing.T) {
	nodeDir := mcpNode(t)
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home := serviceHome(t)
	owner := exec.Command(exe, "memory", "serve")
	owner.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	stdout, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { owner.Process.Kill(); owner.Wait() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "serving ") {
		t.Fatalf("memory serve said %q", sc.Text())
	}
	runMCPClient(t, exe, home, nodeDir, "stdio", exe)
	if o, e, code := runExo(t, exe, t.TempDir(), home, "memory", "search", "another process", "--json"); code != 0 || !strings.Contains(o, "saved from another process") {
		t.Errorf("after the MCP client went: memory search: exit %d: %s %s", code, o, e)
	}
}

// TestMCPHTTPTypeScriptSDK: the same client over streamable HTTP, against the
// routes `exocortex serve` mounts, served by an httptest server.
func TestMCPHTTPTypeScriptSDK(t *testing.T) {
	nodeDir := mcpNode(t)
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home := serviceHome(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mem, err := service.Connect(ctx, service.Config{Dir: filepath.Join(home, "memory")})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	srv, err := mcpserver.New(mcpserver.Options{Memory: mem, SessionsDir: filepath.Join(home, "sessions"),
		WiringDoc: func(context.Context) ([]byte, error) { return []byte("# WIRING\n"), nil }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go srv.Watch(ctx, ready)
	<-ready
	mux := http.NewServeMux()
	for _, r := range srv.Routes() {
		if !r.Stream || r.Pattern != "/mcp" {
			t.Errorf("route %+v: want /mcp, streamed", r)
		}
		mux.Handle(strings.TrimSpace(r.Method+" "+r.Pattern), r.Handler)
	}
	hs := httptest.NewServer(mux)
	defer hs.Close()
	runMCPClient(t, exe, home, nodeDir, "http", hs.URL+"/mcp")
}

// TestMCPInspectorCLIListsTools: the MCP inspector's CLI starts `exocortex mcp`
// and lists its tools.
func TestMCPInspectorCLIListsTools(t *testing.T) {
	nodeDir := mcpNode(t)
	cli := filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol", "inspector-cli", "build", "index.js")
	if _, err := os.Stat(cli); err != nil {
		t.Skipf("the inspector CLI is not installed (%v): run `make mcp-clients`", err)
	}
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home := serviceHome(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", cli, "--method", "tools/list", exe, "mcp")
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	// inspector-cli 1.0.3 looks for its package.json relative to the working
	// directory (../package.json) before importing it relative to its module.
	cmd.Dir = filepath.Dir(cli)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("inspector-cli: %v\n%s", err, out)
	}
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("inspector-cli printed %s: %v", out, err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"search_memory", "compile_memory", "why", "memory_save", "memory_retrieve", "memory_delete", "wiring"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("inspector-cli listed %v, want %s", names, want)
		}
	}
}
