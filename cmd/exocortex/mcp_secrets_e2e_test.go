package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestMCPServerHeaderSecret: a remote MCP server (streamable HTTP) whose
// Authorization header is "Bearer §§secret(MCP_TOKEN)" in config.yaml gets
// the real token from the secrets store, through a real `run` whose
// mcp-servers plugin starts it, for each source: a file, and an environment
// variable (which the host keeps out of every plugin's environment and hands
// the mcp-servers plugin alone); the plugin settings the host sends hold only
// the placeholder; the server echoes the header back, and the tool result the
// model reads, run's output and stderr, the log and the status file show the
// placeholder, never the value.
func TestMCPServerHeaderSecret(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	for _, source := range []string{"file", "env"} {
		t.Run(source, func(t *testing.T) { testMCPServerHeaderSecret(t, exe, source) })
	}
}

func testMCPServerHeaderSecret(t *testing.T, exe, source string) {
	token := "tok-4f9a2c7e1b3d8a60-" + source
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := mcp.NewServer(&mcp.Implementation{Name: "authy"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "Say which credentials came."}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		auth := req.Extra.Header.Get("Authorization")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you sent " + auth}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "bad credentials", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()

	base := t.TempDir()
	home := filepath.Join(base, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(base, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src, env := "{file: "+tokenFile+"}", []string(nil)
	if source == "env" {
		src, env = "{env: EXO_TEST_MCP_TOKEN}", []string{"EXO_TEST_MCP_TOKEN=" + token}
	}
	conf := `secrets:
  MCP_TOKEN: ` + src + `
mcp_servers:
  remote:
    url: ` + hs.URL + `/mcp
    headers: {Authorization: "Bearer §§secret(MCP_TOKEN)"}
  dump:
    command: sh
    args: ["-c", "env > ` + filepath.Join(base, "dump.env") + `; exec sleep 30"]
    init_timeout: 1
`
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// The settings the host sends its plugins carry the placeholder only.
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	settings, err := cfg.PluginSettingsEnv(home, base)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(settings, token) || !strings.Contains(settings, "§§secret(MCP_TOKEN)") {
		t.Fatalf("the plugin settings hold the token, or not its placeholder: %s", settings)
	}

	call, _ := json.Marshal(map[string]any{"thoughts": []string{"who am I"}, "headline": "whoami", "tool_name": "remote.whoami", "tool_args": map[string]any{}})
	final, _ := json.Marshal(map[string]any{"thoughts": []string{"done"}, "tool_name": "response", "tool_args": map[string]any{"text": "Done."}})
	script, _ := json.Marshal(map[string]any{"model": "mcp", "replies": []map[string]any{{"content": string(call)}, {"content": string(final)}}})
	scriptFile := filepath.Join(base, "script.yaml")
	if err := os.WriteFile(scriptFile, script, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "-p", "Who am I to the server?", "--json", "--model", "script:"+scriptFile)
	cmd.Env = append(append(os.Environ(), "EXOCORTEX_HOME="+home), env...)
	cmd.Dir = base
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	mu.Lock()
	got := append([]string(nil), seen...)
	mu.Unlock()
	if len(got) == 0 || got[0] != "Bearer "+token {
		t.Fatalf("the server received the headers %q, want the token", got)
	}
	out := stdout.String()
	if !strings.Contains(out, "you sent Bearer §§secret(MCP_TOKEN)") {
		t.Errorf("the tool result does not show the masked header:\n%s\n%s", out, stderr.String())
	}
	// Another server the plugin starts inherits neither the value nor the
	// variable that handed it over.
	dump, err := os.ReadFile(filepath.Join(base, "dump.env"))
	if err != nil || !strings.Contains(string(dump), "PATH=") {
		t.Fatalf("the stdio server did not dump its environment (%v)", err)
	}
	if strings.Contains(string(dump), token) || strings.Contains(string(dump), mcpEnvSecretsVar) {
		t.Errorf("another MCP server's environment holds the secret or %s:\n%s", mcpEnvSecretsVar, dump)
	}
	logs, _ := os.ReadFile(filepath.Join(home, "logs", "exocortex.log"))
	status, _ := os.ReadFile(filepath.Join(home, "run", "mcp-servers.json"))
	for what, text := range map[string]string{"run's output": out, "run's stderr": stderr.String(), "the log": string(logs), "the status file": string(status)} {
		if strings.Contains(text, token) {
			t.Errorf("%s holds the token:\n%s", what, text)
		}
	}
}
