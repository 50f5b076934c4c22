package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exocortex/exocortex/toolsettings"
)

// TestHelperMCPServer is a real MCP server process on stdio (this test binary
// run again) for the tests below: MCPCLIENT_HELPER=serve serves echo, slow
// and crash; =silent reads stdin and never answers; =exit writes to stderr
// and exits.
func TestHelperMCPServer(t *testing.T) {
	switch os.Getenv("MCPCLIENT_HELPER") {
	case "":
		t.Skip("helper process")
	case "silent":
		fmt.Fprintln(os.Stderr, "waiting for a licence key on stdin")
		time.Sleep(time.Hour)
	case "exit":
		fmt.Fprintln(os.Stderr, "error: DATABASE_URL is not set")
		os.Exit(3)
	}
	srv := newHelperServer()
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(0)
}

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

func newHelperServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "helper"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echo the text."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		if in.Text == "fail" {
			return nil, nil, errors.New("asked to fail")
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "slow", Description: "Sleep a minute."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		select {
		case <-ctx.Done():
		case <-time.After(time.Minute):
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slept"}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "crash", Description: "Exit in the middle of the call.", Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true)}}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "panic: dying on purpose")
		os.Exit(2)
		return nil, nil, nil
	})
	return srv
}

func helper(mode string, extra ...func(*toolsettings.MCPServer)) toolsettings.MCPServer {
	s := toolsettings.MCPServer{Command: os.Args[0], Args: []string{"-test.run=^TestHelperMCPServer$"}, Env: map[string]string{"MCPCLIENT_HELPER": mode}}
	for _, f := range extra {
		f(&s)
	}
	return s
}

func run(t *testing.T, set *Set, tool string, args any) (string, error) {
	t.Helper()
	for _, tl := range set.Tools() {
		if tl.Name == tool {
			b, _ := json.Marshal(args)
			r, err := tl.Run(context.Background(), nil, b)
			return r.GetContent(), err
		}
	}
	t.Fatalf("no tool %s among %d", tool, len(set.Tools()))
	return "", nil
}

func status(set *Set, name string) Status {
	for _, st := range set.Statuses() {
		if st.Name == name {
			return st
		}
	}
	return Status{}
}

func TestStdioServer(t *testing.T) {
	statusFile := filepath.Join(t.TempDir(), "run", "mcp-servers.json")
	set := Connect(context.Background(), map[string]toolsettings.MCPServer{"helper": helper("serve")}, Options{StatusFile: statusFile})
	defer set.Close()
	st := status(set, "helper")
	if st.State != StateReady || strings.Join(st.Tools, ",") != "helper.crash,helper.echo,helper.slow" {
		t.Fatalf("status = %+v", st)
	}
	if d := set.Destructive(); strings.Join(d, ",") != "helper.crash" {
		t.Errorf("destructive tools %v, want helper.crash (the one marked so)", d)
	}
	if got, err := run(t, set, "helper.echo", map[string]any{"text": "hi"}); err != nil || got != "echo: hi" {
		t.Errorf("echo = %q, %v", got, err)
	}
	if _, err := run(t, set, "helper.echo", map[string]any{"text": "fail"}); err == nil || !strings.Contains(err.Error(), "asked to fail") {
		t.Errorf("a failing tool: %v", err)
	}
	if _, err := run(t, set, "helper.echo", map[string]any{"text": 3}); err == nil || !strings.Contains(err.Error(), "text") {
		t.Errorf("bad arguments: %v", err)
	}
	rep, err := ReadReport(statusFile)
	if err != nil || len(rep.Servers) != 1 || rep.Servers[0].State != StateReady {
		t.Errorf("status file: %+v %v", rep, err)
	}
}

func TestServersThatFail(t *testing.T) {
	refused := httptest.NewServer(http.NotFoundHandler())
	refused.Close() // nothing listens at its address any more
	cases := []struct {
		name       string
		conf       toolsettings.MCPServer
		err, check string
		stderr     string
	}{
		{"misspelled", toolsettings.MCPServer{Command: "npxx-no-such-command", Args: []string{"-y", "@modelcontextprotocol/server-everything"}},
			`cannot start "npxx-no-such-command"`, "spelt right and on the PATH", ""},
		{"silent", helper("silent", func(s *toolsettings.MCPServer) { s.InitTimeout = 1 }),
			"did not answer initialize within 1s", "speaking stdio", "waiting for a licence key"},
		{"exits", helper("exit"), "", "its stderr", "DATABASE_URL is not set"},
		{"refused", toolsettings.MCPServer{URL: refused.URL + "/mcp"}, "", "that a server runs at " + refused.URL, ""},
	}
	servers := map[string]toolsettings.MCPServer{"ok": helper("serve")}
	for _, tc := range cases {
		servers[tc.name] = tc.conf
	}
	t0 := time.Now()
	set := Connect(context.Background(), servers, Options{})
	defer set.Close()
	if took := time.Since(t0); took > toolsettings.MaxMCPInitTimeout+5*time.Second {
		t.Errorf("start-up took %s, beyond the init timeouts", took)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := status(set, tc.name)
			if st.State != StateFailed || !strings.Contains(st.Error, tc.err) || !strings.Contains(st.Check, tc.check) || !strings.Contains(st.Stderr, tc.stderr) {
				t.Errorf("status = %+v", st)
			}
			line := strings.Join(Report{Servers: []Status{st}}.Lines(), "\n")
			if !strings.Contains(line, "MCP server "+tc.name) {
				t.Errorf("report line %q does not name the server", line)
			}
		})
	}
	if got, err := run(t, set, "ok.echo", map[string]any{"text": "still here"}); err != nil || got != "echo: still here" {
		t.Errorf("the good server beside the bad ones: %q %v", got, err)
	}
}

func TestCrashMidCallAndRestart(t *testing.T) {
	set := Connect(context.Background(), map[string]toolsettings.MCPServer{"h": helper("serve")}, Options{})
	defer set.Close()
	_, err := run(t, set, "h.crash", map[string]any{})
	var ue *UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("a crash mid-call: %v", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := status(set, "h")
		if st.State == StateUnavailable && strings.Contains(st.Stderr, "dying on purpose") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the crash: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for {
		got, err := run(t, set, "h.echo", map[string]any{"text": "back"})
		if err == nil {
			if got != "echo: back" || status(set, "h").Restarts != 1 {
				t.Fatalf("after the restart: %q %+v", got, status(set, "h"))
			}
			break
		}
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "started again in") {
			t.Fatalf("while it is down: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("not restarted: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestToolTimeout(t *testing.T) {
	set := Connect(context.Background(), map[string]toolsettings.MCPServer{"h": helper("serve", func(s *toolsettings.MCPServer) { s.ToolTimeout = 0.5 })}, Options{})
	defer set.Close()
	if _, err := run(t, set, "h.slow", map[string]any{}); err == nil || !strings.Contains(err.Error(), "tool_timeout of 500ms") {
		t.Errorf("a slow tool: %v", err)
	}
	if got, err := run(t, set, "h.echo", map[string]any{"text": "after"}); err != nil || got != "echo: after" {
		t.Errorf("after a timeout: %q %v", got, err)
	}
}

func TestRemoteServerWithHeaders(t *testing.T) {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newHelperServer() }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer right" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	set := Connect(context.Background(), map[string]toolsettings.MCPServer{
		"remote": {URL: hs.URL, Headers: map[string]string{"Authorization": "Bearer right"}, Type: "streamable-http"},
		"wrong":  {ServerURL: hs.URL, Headers: map[string]string{"Authorization": "Bearer wrong"}},
	}, Options{})
	defer set.Close()
	if got, err := run(t, set, "remote.echo", map[string]any{"text": "far"}); err != nil || got != "echo: far" {
		t.Errorf("remote echo: %q %v", got, err)
	}
	if st := status(set, "wrong"); st.State != StateFailed || !strings.Contains(st.Check, "headers") {
		t.Errorf("wrong credentials: %+v", st)
	}
}

func TestRemoteSSEServer(t *testing.T) {
	hs := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return newHelperServer() }, nil))
	defer hs.Close()
	set := Connect(context.Background(), map[string]toolsettings.MCPServer{"sse": {URL: hs.URL, Type: "sse"}}, Options{})
	defer set.Close()
	if got, err := run(t, set, "sse.echo", map[string]any{"text": "events"}); err != nil || got != "echo: events" {
		t.Errorf("sse echo: %q %v (%+v)", got, err, status(set, "sse"))
	}
}

// TestToolCache: a server started once declares its tools from the cache the
// next time, at once, and starts in the background; a call waits for it. A
// cached server that no longer answers is reported when a call finds it so.
func TestToolCache(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "mcp-tools.json")
	servers := map[string]toolsettings.MCPServer{"h": helper("serve")}
	first := Connect(context.Background(), servers, Options{ToolCache: cache})
	first.Close()
	if st := status(first, "h"); st.State != StateReady {
		t.Fatalf("first start: %+v", st)
	}
	second := Connect(context.Background(), servers, Options{ToolCache: cache})
	if n := len(second.Tools()); n != 3 {
		t.Fatalf("declared %d tools from the cache, want 3", n)
	}
	if got, err := run(t, second, "h.echo", map[string]any{"text": "warm"}); err != nil || got != "echo: warm" {
		t.Errorf("a call during the background start: %q %v", got, err)
	}
	// Closed before the cache is rewritten below: its background start
	// writes the cache when it ends.
	second.Close()

	silent := helper("silent", func(s *toolsettings.MCPServer) { s.InitTimeout = 0.5 })
	b, _ := json.Marshal(toolCache{"s": {Config: configKey(silent), Tools: []*mcp.Tool{{Name: "echo", InputSchema: map[string]any{"type": "object"}}}}})
	if err := os.WriteFile(cache, b, 0o600); err != nil {
		t.Fatal(err)
	}
	third := Connect(context.Background(), map[string]toolsettings.MCPServer{"s": silent}, Options{ToolCache: cache})
	defer third.Close()
	if st := status(third, "s"); st.State != StateStarting && st.State != StateFailed {
		t.Errorf("a cached server right after Connect: %+v", st)
	}
	if _, err := run(t, third, "s.echo", map[string]any{"text": "x"}); err == nil || !strings.Contains(err.Error(), "did not answer initialize") {
		t.Errorf("a cached server that does not answer: %v", err)
	}
}

// TestSecretPlaceholders: a placeholder in env or headers is resolved by
// Options.Secrets for the process alone, and the value is masked back in the
// status (the helper prints its environment's value on stderr and exits); a
// placeholder with no resolver, or one the resolver refuses, fails the start
// naming the server and the field.
func TestSecretPlaceholders(t *testing.T) {
	const value = "s3cr3t-value-8812"
	resolve := func(p string) (string, error) {
		if p == "§§secret(TOKEN)" {
			return value, nil
		}
		return "", fmt.Errorf("%s names no secret", p)
	}
	cases := []struct {
		name    string
		conf    toolsettings.MCPServer
		secrets func(string) (string, error)
		want    []string
	}{
		{"resolved and masked", toolsettings.MCPServer{Command: "sh", Args: []string{"-c", `echo "token is $TOKEN" >&2; exit 3`}, Env: map[string]string{"TOKEN": "§§secret(TOKEN)"}},
			resolve, []string{"token is §§secret(TOKEN)"}},
		{"no resolver", toolsettings.MCPServer{URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"Authorization": "Bearer §§secret(TOKEN)"}},
			nil, []string{"headers.Authorization of MCP server", "no secrets reach the plugin"}},
		{"unknown", toolsettings.MCPServer{Command: "true", Env: map[string]string{"K": "§§secret(OTHER)"}},
			resolve, []string{"env.K of MCP server unknown", "§§secret(OTHER) names no secret"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set := Connect(context.Background(), map[string]toolsettings.MCPServer{strings.Fields(c.name)[0]: c.conf}, Options{Secrets: c.secrets})
			defer set.Close()
			st := set.Statuses()[0]
			text := st.Error + " | " + st.Stderr
			if st.State != StateFailed {
				t.Fatalf("state %s, want failed: %s", st.State, text)
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("the status %q lacks %q", text, w)
				}
			}
			if strings.Contains(text, value) {
				t.Errorf("the status holds the value: %s", text)
			}
		})
	}
}
