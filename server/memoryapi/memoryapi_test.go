package memoryapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/server/internal/servertest"
	"github.com/exocortex/exocortex/server/openapi"
)

type client struct {
	t    *testing.T
	base string
}

// call sends method path with body (JSON-encoded unless a string) as role and
// decodes the answer into out; it returns the status.
func (c client) call(role, method, path string, body any, out any) int {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	req.Header.Set("X-Role", role)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, raw, err)
		}
	}
	return resp.StatusCode
}

type problem struct {
	Error struct{ Code, Message, Field string }
}

func setup(t *testing.T) client {
	mem := servertest.Memory(t)
	return client{t: t, base: servertest.Serve(t, New(mem)).URL}
}

// TestMemoryRoundTrip: a record saved by an admin is found by search with its
// why, got by id, archived (out of search), restored, and its history tells
// each step; the state hash changes with each write and not with a read.
func TestMemoryRoundTrip(t *testing.T) {
	c := setup(t)
	var st0, st1, st2 StateReply
	c.call("agent", "GET", "/api/v1/state", nil, &st0)
	var saved SaveReply
	if s := c.call("admin", "POST", "/api/v1/memory", SaveRequest{Text: "the lighthouse keeper logs the fog horn", Tags: []string{"sea"}}, &saved); s != 201 {
		t.Fatalf("save: %d", s)
	}
	c.call("admin", "POST", "/api/v1/memory", SaveRequest{Text: "submarines dive under the ice", Area: "fragments"}, nil)
	id := saved.Record.ID
	c.call("agent", "GET", "/api/v1/state", nil, &st1)
	if st1.StateHash == st0.StateHash || st1.Seq <= st0.Seq || st1.Records != 2 {
		t.Fatalf("state after two saves: %+v (before: %+v)", st1, st0)
	}
	var res SearchReply
	if s := c.call("agent", "GET", "/api/v1/memory/search?q=lighthouse+fog&k=5", nil, &res); s != 200 || len(res.Hits) == 0 {
		t.Fatalf("search: %d %+v", s, res)
	}
	if h := res.Hits[0]; h.Record.ID != id || !strings.Contains(h.Why, "BM25") {
		t.Fatalf("first hit %+v; want %s with a why naming BM25", h, id)
	}
	for _, tc := range []struct{ query, want string }{
		{"q=submarines&area=main", ""}, {"q=submarines&area=fragments", "submarines"}, {"q=lighthouse&tags=sea", "lighthouse"}, {"q=lighthouse&tags=land", ""},
	} {
		var r SearchReply
		c.call("agent", "GET", "/api/v1/memory/search?"+tc.query, nil, &r)
		got := ""
		if len(r.Hits) > 0 {
			got = r.Hits[0].Record.Text
		}
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("search %s: first hit %q, want one containing %q", tc.query, got, tc.want)
		}
	}
	var comp CompileReply
	if s := c.call("agent", "POST", "/api/v1/memory/compile", CompileRequest{Query: "lighthouse", TokenBudget: 200}, &comp); s != 200 ||
		!strings.Contains(comp.Block, "lighthouse") || comp.Tokens > 200 || comp.Tokens == 0 {
		t.Fatalf("compile: %d %+v", s, comp)
	}
	if s := c.call("admin", "POST", "/api/v1/memory/"+id+"/archive", ArchiveRequest{Reason: "outdated"}, nil); s != 200 {
		t.Fatalf("archive: %d", s)
	}
	res = SearchReply{}
	c.call("agent", "GET", "/api/v1/memory/search?q=lighthouse", nil, &res)
	if len(res.Hits) != 0 {
		t.Fatalf("an archived record is still found: %+v", res.Hits)
	}
	var rec struct{ Status string }
	if c.call("admin", "POST", "/api/v1/memory/"+id+"/restore", nil, &rec); rec.Status != "active" {
		t.Fatalf("restore left status %q", rec.Status)
	}
	var why WhyReply
	c.call("agent", "GET", "/api/v1/memory/why/"+id, nil, &why)
	var kinds []string
	for _, e := range why.Entries {
		kinds = append(kinds, e.Kind)
	}
	if got := strings.Join(kinds, " "); got != "memory.upsert.v1 memory.archive.v1 memory.restore.v1" || why.Record == nil {
		t.Fatalf("why: %s (record %v)", got, why.Record)
	}
	c.call("agent", "GET", "/api/v1/state", nil, &st2)
	var ns, ns2, main StateReply
	c.call("agent", "GET", "/api/v1/state?ns=fragments", nil, &ns)
	if ns.Records != 1 || ns.StateHash == st2.StateHash || ns.StoreHash != st2.StateHash || ns.NS != "fragments" {
		t.Fatalf("state?ns=fragments: %+v, want 1 record, its own hash and the store's %s", ns, st2.StateHash)
	}
	c.call("agent", "GET", "/api/v1/state?ns=main", nil, &main)
	// A write to main changes main's hash and the store's, not fragments'.
	c.call("admin", "POST", "/api/v1/memory", SaveRequest{Text: "another lighthouse"}, nil)
	var main2 StateReply
	c.call("agent", "GET", "/api/v1/state?ns=fragments", nil, &ns2)
	c.call("agent", "GET", "/api/v1/state?ns=main", nil, &main2)
	if ns2.StateHash != ns.StateHash || main2.StateHash == main.StateHash || main2.StoreHash == main.StoreHash {
		t.Fatalf("after a write to main: fragments %s -> %s, main %s -> %s", ns.StateHash, ns2.StateHash, main.StateHash, main2.StateHash)
	}
	var rec2 struct{ Provenance struct{ Source string } }
	c.call("agent", "GET", "/api/v1/memory/"+id, nil, &rec2)
	if rec2.Provenance.Source != "api:test-admin" {
		t.Fatalf("provenance source %q, want the admin key's name", rec2.Provenance.Source)
	}
}

// TestMemoryErrorsNameTheField: each bad request is refused with 4xx and the
// field at fault, and writes need the admin role.
func TestMemoryErrorsNameTheField(t *testing.T) {
	c := setup(t)
	for _, tc := range []struct {
		name, role, method, path string
		body                     any
		status                   int
		field                    string
	}{
		{"q missing", "agent", "GET", "/api/v1/memory/search?k=3", nil, 400, "q"},
		{"k not a number", "agent", "GET", "/api/v1/memory/search?q=x&k=ten", nil, 400, "k"},
		{"k too large", "agent", "GET", "/api/v1/memory/search?q=x&k=5000", nil, 400, "k"},
		{"compile without budget", "agent", "POST", "/api/v1/memory/compile", `{"query":"x"}`, 400, "token_budget"},
		{"compile budget wrong type", "agent", "POST", "/api/v1/memory/compile", `{"query":"x","token_budget":"many"}`, 400, "token_budget"},
		{"compile unknown field", "agent", "POST", "/api/v1/memory/compile", `{"query":"x","token_budget":5,"budget":5}`, 400, "budget"},
		{"save malformed", "admin", "POST", "/api/v1/memory", `{"text":`, 400, ""},
		{"save empty body", "admin", "POST", "/api/v1/memory", ``, 400, ""},
		{"save no text", "admin", "POST", "/api/v1/memory", `{"area":"main"}`, 400, "text"},
		{"save tags wrong type", "admin", "POST", "/api/v1/memory", `{"text":"a","tags":"x"}`, 400, "tags"},
		{"save importance out of range", "admin", "POST", "/api/v1/memory", `{"text":"a","importance":7}`, 400, "importance"},
		{"save by agent", "agent", "POST", "/api/v1/memory", `{"text":"a"}`, 403, ""},
		{"archive by agent", "agent", "POST", "/api/v1/memory/x/archive", nil, 403, ""},
		{"get unknown", "agent", "GET", "/api/v1/memory/nosuchid", nil, 404, "id"},
		{"archive unknown", "admin", "POST", "/api/v1/memory/nosuchid/archive", nil, 404, "id"},
		{"why unknown", "agent", "GET", "/api/v1/memory/why/nosuchid", nil, 404, "id"},
		{"state unknown ns", "agent", "GET", "/api/v1/state?ns=nowhere", nil, 404, "ns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			var p problem
			if s := c.call(tc.role, tc.method, tc.path, tc.body, &p); s != tc.status || p.Error.Field != tc.field || p.Error.Message == "" {
				t.Fatalf("%d %+v; want %d naming field %q", s, p, tc.status, tc.field)
			}
		})
	}
}

// TestOpsDescribeEveryRoute: the OpenAPI Ops and the routes match one to one.
func TestOpsDescribeEveryRoute(t *testing.T) {
	if err := openapi.Check(New(nil), Ops()); err != nil {
		t.Fatal(err)
	}
}
