package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// keyed adds an API key to every request, as an MCP client configured with
// a header sends it.
type keyed struct{ key string }

func (k keyed) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeMountsMCP: `exocortex serve` answers MCP at /mcp behind its keys:
// no key is refused, an agent key lists the read tools only, an admin key
// the memory tools too, and a save through MCP is found by a search through it.
func TestServeMountsMCP(t *testing.T) {
	base := restServer(t)
	if s := call(t, "", "POST", base+"/mcp", `{}`, nil); s != http.StatusUnauthorized {
		t.Fatalf("/mcp without a key: %d, want 401", s)
	}
	for _, tc := range []struct {
		key    string
		writes bool
	}{{"agent-secret", false}, {"admin-secret", true}} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "serve-test"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: keyed{tc.key}}}, nil)
		if err != nil {
			t.Fatalf("%s: connect: %v", tc.key, err)
		}
		tools, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		has := map[string]bool{}
		for _, tl := range tools.Tools {
			has[tl.Name] = true
		}
		if !has["search_memory"] || has["memory_save"] != tc.writes {
			t.Fatalf("%s lists %v", tc.key, has)
		}
		if tc.writes {
			if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "memory_save", Arguments: map[string]any{"key": "kestrel_pager_rota", "value": "the kestrel pager rota is in the ops wiki"}}); err != nil || res.IsError {
				t.Fatalf("memory_save: %v %+v", err, res)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_memory", Arguments: map[string]any{"query": "kestrel pager rota"}})
			if err != nil || res.IsError || len(res.Content) == 0 {
				t.Fatalf("search_memory: %v %+v", err, res)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if !strings.Contains(text, "pager rota") {
				t.Fatalf("search_memory does not find the save: %s", text)
			}
		}
		cs.Close()
	}
}
