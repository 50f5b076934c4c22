package openapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/server/deltas"
	"github.com/exocortex/exocortex/server/inspect"
	"github.com/exocortex/exocortex/server/internal/servertest"
	"github.com/exocortex/exocortex/server/memoryapi"
	"github.com/exocortex/exocortex/server/openapi"
	"github.com/exocortex/exocortex/server/route"
	"github.com/exocortex/exocortex/server/tools"
)

// surfaces mounts this package's neighbours as serve does, with the document.
func surfaces(t *testing.T) (string, []route.Route) {
	mem := servertest.Memory(t)
	d := deltas.New(mem, deltas.Options{})
	t.Cleanup(func() { d.Close() })
	reg, err := tools.Open(filepath.Join(t.TempDir(), tools.File), nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(context.Background(), host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	var routes []route.Route
	routes = append(routes, memoryapi.New(mem)...)
	routes = append(routes, inspect.New(inspect.Options{Dir: t.TempDir(), Plugins: h}).Routes()...)
	routes = append(routes, d.Routes()...)
	routes = append(routes, reg.Routes()...)
	doc := openapi.Route(openapi.Info{Title: "Exocortex", Version: "test"}, func() []route.Route { return routes },
		memoryapi.Ops(), deltas.Ops(), tools.Ops(), inspect.Ops())
	routes = append(routes, doc)
	return servertest.Serve(t, routes).URL, routes
}

func fetch(t *testing.T, base string) []byte {
	t.Helper()
	resp, err := http.Get(base + openapi.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&raw) != nil {
		t.Fatalf("GET %s: %d", openapi.Path, resp.StatusCode)
	}
	return raw
}

// TestDocumentMatchesRoutes: the served document lists every mounted route
// (path and method, its role, a schema for each reply that has a body), and
// nothing that is not mounted.
func TestDocumentMatchesRoutes(t *testing.T) {
	base, routes := surfaces(t)
	var doc struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]struct {
			Summary   string         `json:"summary"`
			Role      string         `json:"x-exocortex-role"`
			Responses map[string]any `json:"responses"`
			Security  []any          `json:"security"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(fetch(t, base), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	mounted := map[string]bool{}
	for _, r := range routes {
		k := strings.ToLower(r.Method) + " " + r.Pattern
		mounted[k] = true
		op, ok := doc.Paths[r.Pattern][strings.ToLower(r.Method)]
		if !ok {
			t.Errorf("%s is mounted but not described", k)
			continue
		}
		if op.Summary != r.Summary || op.Role != r.Role.String() || (r.Role == route.Public) != (len(op.Security) == 0) {
			t.Errorf("%s: summary %q role %q security %v; the route says %q %s", k, op.Summary, op.Role, op.Security, r.Summary, r.Role)
		}
		if len(op.Responses) < 2 {
			t.Errorf("%s: responses %v", k, op.Responses)
		}
	}
	for path, ops := range doc.Paths {
		for m := range ops {
			if !mounted[m+" "+path] {
				t.Errorf("%s %s is described but not mounted", m, path)
			}
		}
	}
}

// TestDocumentValidates runs Redocly's OpenAPI linter (installed by `make
// node-tools`) over the served document.
func TestDocumentValidates(t *testing.T) {
	bin := os.Getenv("EXOCORTEX_REDOCLY")
	if bin == "" {
		bin, _ = filepath.Abs("../../.tools/node/node_modules/.bin/redocly")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no Redocly CLI at %s: `make node-tools` installs it (npm @redocly/cli)", bin)
	}
	base, _ := surfaces(t)
	file := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(file, fetch(t, base), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "redocly.yaml")
	// no-ambiguous-paths: GET /api/v1/memory/why/{id} and POST
	// /api/v1/memory/{id}/archive share a shape but not a method, so no
	// request matches both (net/http's mux agrees: it registers them).
	os.WriteFile(cfg, []byte("extends:\n  - recommended\nrules:\n  no-ambiguous-paths: off\n"), 0o600)
	cmd := exec.Command(bin, "lint", "--config", cfg, file)
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "valid") || strings.Contains(string(out), "You have ") {
		t.Fatalf("redocly lint: %v\n%s", err, out)
	}
	t.Logf("redocly lint:\n%s", out)
}
