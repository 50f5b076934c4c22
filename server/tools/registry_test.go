package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/sdk/sdktest"
	"github.com/exocortex/exocortex/server/internal/servertest"
	"github.com/exocortex/exocortex/server/openapi"
	"github.com/exocortex/exocortex/server/route"
)

// helloHost runs the hello example plugin on a real host.
func helloHost(t *testing.T) *host.Host {
	t.Helper()
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/examples/hello")
	h, err := host.New(context.Background(), host.Options{
		Builtins: []discover.Candidate{{Name: "hello", Path: exe, Command: []string{exe}, WorkDir: filepath.Dir(exe),
			Dir: discover.Dir{Path: "(built in)", Source: discover.Builtin}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

func do(t *testing.T, role, method, url, body string, out any) int {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("X-Role", role)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
		}
	}
	return resp.StatusCode
}

const search = `{"id":"web_search.query","name":"query","description":"Searches the web.","category":"retrieval",
 "parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]},
 "returns":{"type":"object","properties":{"results":{"type":"array"}}},
 "endpoint":"http://127.0.0.1:9/search","version":"1.0.0","agent":"web_search"}`

// TestRegistryListsPluginAndRegisteredTools: the hello plugin's tool is listed
// with its manifest's category and returns schema; a registered tool joins it,
// is found by agent and by category, survives reopening the registry, and is
// removed; the plugin's own tool can be neither replaced nor removed.
func TestRegistryListsPluginAndRegisteredTools(t *testing.T) {
	path := filepath.Join(t.TempDir(), File)
	reg, err := Open(path, FromHost(helloHost(t)))
	if err != nil {
		t.Fatal(err)
	}
	base := servertest.Serve(t, reg.Routes()).URL
	var hello Definition
	if s := do(t, "agent", "GET", base+"/tools/hello.hello_time", "", &hello); s != 200 {
		t.Fatalf("plugin tool: %d", s)
	}
	if hello.Agent != "hello" || hello.Category != "demo" || hello.Source != SourcePlugin || hello.Endpoint != "plugin:hello" ||
		!bytes.Contains(hello.Returns, []byte(`"string"`)) || !bytes.Contains(hello.Parameters, []byte(`"name"`)) {
		t.Fatalf("plugin tool: %+v", hello)
	}
	var created Definition
	if s := do(t, "admin", "POST", base+"/tools", search, &created); s != 201 || created.Source != SourceRegistered {
		t.Fatalf("register: %d %+v", s, created)
	}
	if s := do(t, "admin", "POST", base+"/tools", strings.Replace(search, "1.0.0", "1.1.0", 1), nil); s != 200 {
		t.Fatalf("replace: %d, want 200", s)
	}
	for _, tc := range []struct{ query, want string }{
		{"", "hello.hello_time web_search.query"}, {"?agent=web_search", "web_search.query"}, {"?category=demo", "hello.hello_time"},
		{"?category=retrieval&agent=hello", ""}, {"?agent=nobody", ""},
	} {
		var l ListReply
		do(t, "agent", "GET", base+"/tools"+tc.query, "", &l)
		var ids []string
		for _, d := range l.Tools {
			ids = append(ids, d.ID)
		}
		if got := strings.Join(ids, " "); got != tc.want || l.Count != len(ids) {
			t.Errorf("GET /tools%s: %q, want %q", tc.query, got, tc.want)
		}
	}
	var h Health
	if s := do(t, "", "GET", base+"/health", "", &h); s != 200 || h.Status != "ok" || h.Plugin != 1 || h.Registered != 1 {
		t.Fatalf("health: %d %+v", s, h)
	}
	again, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := again.Get(context.Background(), "web_search.query"); err != nil || d.Version != "1.1.0" {
		t.Fatalf("after reopening: %+v %v", d, err)
	}
	hijack := strings.NewReplacer(`"web_search.query"`, `"hello.hello_time"`, `"web_search"`, `"hello"`).Replace(search)
	var p struct{ Error route.Problem }
	if s := do(t, "admin", "POST", base+"/tools", hijack, &p); s != 409 || p.Error.Field != "id" {
		t.Fatalf("registering a plugin tool's id: %d %+v", s, p)
	}
	if s := do(t, "admin", "DELETE", base+"/tools/hello.hello_time", "", nil); s != 409 {
		t.Fatalf("deleting a plugin tool: %d", s)
	}
	if s := do(t, "admin", "DELETE", base+"/tools/web_search.query", "", nil); s != 204 {
		t.Fatalf("delete: %d", s)
	}
	if s := do(t, "agent", "GET", base+"/tools/web_search.query", "", nil); s != 404 {
		t.Fatalf("after delete: %d", s)
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "web_search") {
		t.Fatalf("the file still holds the removed tool: %s", b)
	}
}

// TestRegisterRefusesBadDefinitions: each bad definition is refused naming
// its field; an agent key may not register or delete.
func TestRegisterRefusesBadDefinitions(t *testing.T) {
	reg, err := Open(filepath.Join(t.TempDir(), File), nil)
	if err != nil {
		t.Fatal(err)
	}
	base := servertest.Serve(t, reg.Routes()).URL
	for _, tc := range []struct {
		name, role, body string
		status           int
		field            string
	}{
		{"no id", "admin", strings.Replace(search, `"id":"web_search.query",`, "", 1), 400, "id"},
		{"id without agent", "admin", strings.Replace(search, `"web_search.query"`, `"query"`, 1), 400, "id"},
		{"agent not the id's", "admin", strings.Replace(search, `"agent":"web_search"`, `"agent":"other"`, 1), 400, "agent"},
		{"no description", "admin", strings.Replace(search, `"Searches the web."`, `""`, 1), 400, "description"},
		{"parameters not a schema", "admin", strings.Replace(search, `"parameters":{`, `"parameters":[1],"x":{`, 1), 400, "parameters"},
		{"no returns", "admin", strings.Replace(search, `"returns":`, `"x":`, 1), 400, "returns"},
		{"endpoint not http", "admin", strings.Replace(search, "http://127.0.0.1:9/search", "ftp://x", 1), 400, "endpoint"},
		{"no version", "admin", strings.Replace(search, `"1.0.0"`, `""`, 1), 400, "version"},
		{"version wrong type", "admin", strings.Replace(search, `"1.0.0"`, `1`, 1), 400, "version"},
		{"malformed", "admin", `{"id":`, 400, ""},
		{"agent key", "agent", search, 403, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p struct{ Error route.Problem }
			if s := do(t, tc.role, "POST", base+"/tools", tc.body, &p); s != tc.status || p.Error.Field != tc.field {
				t.Fatalf("%d %+v; want %d naming %q", s, p, tc.status, tc.field)
			}
		})
	}
	if s := do(t, "agent", "DELETE", base+"/tools/x.y", "", nil); s != 403 {
		t.Fatalf("delete by an agent key: %d", s)
	}
	if l := reg.List(context.Background(), "", ""); len(l) != 0 {
		t.Fatalf("refused definitions were kept: %+v", l)
	}
}

func TestOpsDescribeEveryRoute(t *testing.T) {
	reg, _ := Open(filepath.Join(t.TempDir(), File), nil)
	if err := openapi.Check(reg.Routes(), Ops()); err != nil {
		t.Fatal(err)
	}
}
