package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exocortex/exocortex/memory/service"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/server/openapi"
	"github.com/exocortex/exocortex/server/route"
	"github.com/exocortex/exocortex/wiring"
)

// fixture is a real memory service on a temporary home, an MCP server over it
// and a Go SDK client connected to it in memory.
type fixture struct {
	mem    *service.Client
	srv    *Server
	client *mcp.ClientSession
	events chan string
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	mem, err := service.Connect(ctx, service.Config{Dir: filepath.Join(t.TempDir(), "memory")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mem.Close() })
	opts.Memory = mem
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() { _ = srv.Watch(ctx, ready) }()
	<-ready
	f := &fixture{mem: mem, srv: srv, events: make(chan string, 100)}
	st, ct := mcp.NewInMemoryTransports()
	go func() { _ = srv.Run(ctx, st) }()
	cl := mcp.NewClient(&mcp.Implementation{Name: "test"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			f.events <- "updated " + r.Params.URI
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { f.events <- "list_changed" },
	})
	f.client, err = cl.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.client.Close() })
	return f
}

func (f *fixture) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := f.client.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func (f *fixture) wait(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case e := <-f.events:
			if e == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %q notification within 60s", want)
		}
	}
}

// waitWithin reports whether the notification want arrives within d.
func (f *fixture) waitWithin(d time.Duration, want string) bool {
	deadline := time.After(d)
	for {
		select {
		case e := <-f.events:
			if e == want {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

func TestEchomenToolsAnswerTheSeedsStrings(t *testing.T) {
	f := newFixture(t, Options{})
	cases := []struct {
		tool string
		args map[string]any
		want string
		err  bool
	}{
		{"memory_save", map[string]any{"key": "user_project_goals", "value": "ship the MCP server", "tags": []string{"project"}}, "Memory item 'user_project_goals' saved successfully.", false},
		{"memory_retrieve", map[string]any{"key": "user_project_goals"}, "ship the MCP server", false},
		{"memory_delete", map[string]any{"key": "user_project_goals"}, "Memory item 'user_project_goals' deleted successfully.", false},
		{"memory_delete", map[string]any{"key": "user_project_goals"}, "user_project_goals", true},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			r := f.call(t, tc.tool, tc.args)
			if r.IsError != tc.err {
				t.Fatalf("IsError = %v, want %v: %s", r.IsError, tc.err, text(r))
			}
			if got := text(r); (!tc.err && got != tc.want) || (tc.err && !strings.Contains(got, tc.want)) {
				t.Errorf("%s answered %q, want %q", tc.tool, got, tc.want)
			}
		})
	}
}

func TestSearchCompileWhy(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	saved, err := f.mem.Save(ctx, &exocortexv1.MemorySaveRequest{Records: []*exocortexv1.MemoryInput{
		{Text: "The deploy key for staging lives in the vault under ops/staging.", Tags: []string{"ops"}},
		{Text: "Lunch on Fridays is pizza.", Area: "fragments"},
	}, Source: &exocortexv1.MemorySource{Source: "test", Session: "s1"}})
	if err != nil {
		t.Fatal(err)
	}
	id := saved.GetRecords()[0].GetId()

	var out SearchOut
	r := f.call(t, "search_memory", map[string]any{"query": "staging deploy key", "k": 3, "tags": []string{"ops"}})
	if err := json.Unmarshal(mustJSON(t, r.StructuredContent), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Hits) != 1 || out.Hits[0].ID != id || out.Hits[0].Why == "" {
		t.Fatalf("search_memory hits = %+v, want the ops record with a why", out.Hits)
	}

	r = f.call(t, "compile_memory", map[string]any{"query": "where is the staging deploy key", "token_budget": 200})
	if !strings.Contains(text(r), "vault under ops/staging") {
		t.Errorf("compile_memory block = %q, want the deploy key record", text(r))
	}

	r = f.call(t, "why", map[string]any{"id": MemoryURIPrefix + id})
	var why WhyOut
	if err := json.Unmarshal(mustJSON(t, r.StructuredContent), &why); err != nil {
		t.Fatal(err)
	}
	if !why.Exists || why.Provenance.Source != "test" || why.Provenance.Session != "s1" || len(why.History) == 0 {
		t.Errorf("why = %+v, want provenance test/s1 and a history", why)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestProtocolErrors(t *testing.T) {
	f := newFixture(t, Options{MaxResultBytes: 600})
	ctx := context.Background()
	if _, err := f.mem.Save(ctx, &exocortexv1.MemorySaveRequest{Records: []*exocortexv1.MemoryInput{
		{Text: strings.Repeat("a long record about gardens and roses ", 40)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"}); err == nil || !strings.Contains(err.Error(), "no_such_tool") {
		t.Errorf("an unknown tool answered %v, want an error naming it", err)
	}
	cases := []struct {
		name string
		tool string
		args map[string]any
		want []string
	}{
		{"missing field", "search_memory", map[string]any{"k": 3}, []string{"query"}},
		{"wrong type", "search_memory", map[string]any{"query": "x", "k": "three"}, []string{"k"}},
		{"out of range", "search_memory", map[string]any{"query": "x", "k": 1000}, []string{`"k"`, "1 to 100"}},
		{"empty id", "why", map[string]any{"id": " "}, []string{`"id"`}},
		{"oversized", "search_memory", map[string]any{"query": "gardens roses"}, []string{"over the limit of 600 bytes", "nothing was cut"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := f.call(t, tc.tool, tc.args)
			if !r.IsError {
				t.Fatalf("%s(%v) succeeded: %s", tc.tool, tc.args, text(r))
			}
			for _, w := range tc.want {
				if !strings.Contains(text(r), w) {
					t.Errorf("error %q does not say %q", text(r), w)
				}
			}
		})
	}
}

func TestResourcesAndNotifications(t *testing.T) {
	f := newFixture(t, Options{WiringDoc: func(context.Context) ([]byte, error) { return []byte("# Wiring\n"), nil }, SessionsDir: t.TempDir()})
	ctx := context.Background()
	if err := f.client.Subscribe(ctx, &mcp.SubscribeParams{URI: SnapshotURI}); err != nil {
		t.Fatal(err)
	}
	saved, err := f.mem.Save(ctx, &exocortexv1.MemorySaveRequest{Records: []*exocortexv1.MemoryInput{{Text: "notify me"}}})
	if err != nil {
		t.Fatal(err)
	}
	id := saved.GetRecords()[0].GetId()
	f.wait(t, "updated "+SnapshotURI)
	f.wait(t, "list_changed")

	list, err := f.client.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	for _, want := range []string{MemoryURIPrefix + id, SnapshotURI, WiringURI, SessionsURI} {
		if !strings.Contains(strings.Join(uris, " "), want) {
			t.Errorf("resources/list = %v, want %s", uris, want)
		}
	}
	rr, err := f.client.ReadResource(ctx, &mcp.ReadResourceParams{URI: MemoryURIPrefix + id})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "notify me") {
		t.Fatalf("reading the record: %v %+v", err, rr)
	}
	if err := f.client.Subscribe(ctx, &mcp.SubscribeParams{URI: MemoryURIPrefix + id}); err != nil {
		t.Fatal(err)
	}
	// Under the 2026-07-28 protocol the SDK registers a subscription through
	// a subscriptions/listen stream that may take effect just after Subscribe
	// returns (seen once under CI load): change the record until the update
	// arrives, archive then restore, each change a fresh chance, for a minute.
	deadline := time.Now().Add(60 * time.Second)
	for n := 0; ; n++ {
		var err error
		if n%2 == 0 {
			_, err = f.mem.Archive(ctx, &exocortexv1.MemoryArchiveRequest{Id: id, Reason: "test"})
		} else {
			_, err = f.mem.Restore(ctx, &exocortexv1.MemoryRestoreRequest{Id: id})
		}
		if err != nil {
			t.Fatal(err)
		}
		if f.waitWithin(5*time.Second, "updated "+MemoryURIPrefix+id) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q notification within 60s of changes", "updated "+MemoryURIPrefix+id)
		}
	}
	if _, err := f.client.ReadResource(ctx, &mcp.ReadResourceParams{URI: MemoryURIPrefix + "nope"}); err == nil {
		t.Error("reading an unknown record succeeded")
	}
}

func TestWiringTool(t *testing.T) {
	f := newFixture(t, Options{Wiring: func(context.Context) (*wiring.Model, error) {
		m, err := wiring.DecodeModel([]byte(`{"plugins":[{"name":"recall","priority":0,"manifest":{"extensions":[{"name":"recall","hook":"HOOK_MESSAGE_LOOP_PROMPTS_AFTER","order":50,"reads":["user_message"]}],"tools":[{"name":"memory_load"}]}}]}`))
		return &m, err
	}})
	r := f.call(t, "wiring", map[string]any{})
	var out WiringOut
	if err := json.Unmarshal(mustJSON(t, r.StructuredContent), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Extensions) != 1 || out.Extensions[0].Name != "recall" || out.Extensions[0].Order != 50 || len(out.Tools) != 1 {
		t.Errorf("wiring = %+v", out)
	}
	g := newFixture(t, Options{})
	if r := g.call(t, "wiring", map[string]any{}); !r.IsError || !strings.Contains(text(r), "exocortex lint") {
		t.Errorf("wiring without a loader = %q, want it to say so", text(r))
	}
}

// TestHTTPRoles: behind serve's authentication, a key with the agent role
// gets the tools that read; an admin key gets memory_save and memory_delete too.
func TestHTTPRoles(t *testing.T) {
	f := newFixture(t, Options{})
	for _, tc := range []struct {
		role   route.Role
		writes bool
	}{{route.Agent, false}, {route.Admin, true}} {
		t.Run(tc.role.String(), func(t *testing.T) {
			h := f.srv.Handler()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(w, r.WithContext(route.WithCaller(r.Context(), route.Caller{Key: "k", Role: tc.role})))
			}))
			defer hs.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			tools, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			has := map[string]bool{}
			for _, tl := range tools.Tools {
				has[tl.Name] = true
			}
			if !has["search_memory"] || has["memory_save"] != tc.writes || has["memory_delete"] != tc.writes {
				t.Errorf("role %s lists %v", tc.role, has)
			}
		})
	}
}

func TestOpsDescribeEveryRoute(t *testing.T) {
	f := newFixture(t, Options{})
	if err := openapi.Check(f.srv.Routes(), Ops()); err != nil {
		t.Fatal(err)
	}
}
