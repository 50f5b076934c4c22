package dashboard

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/server/openapi"
)

func TestOpsDescribeEveryRoute(t *testing.T) {
	d, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if err := openapi.Check(d.Routes(), Ops()); err != nil {
		t.Fatal(err)
	}
}

func TestServe(t *testing.T) {
	d, err := New()
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for _, rt := range d.Routes() {
		mux.Handle(rt.Method+" "+rt.Pattern, rt.Handler)
	}
	for _, tc := range []struct {
		name, path, enc string
		status          int
		ctype, contains string
		gzipped         bool
	}{
		{name: "the page", path: "/", status: 200, ctype: "text/html", contains: `<script type="module" src="/assets/app.js">`},
		{name: "the page gzipped", path: "/", enc: "gzip, deflate", status: 200, ctype: "text/html", contains: "Exocortex", gzipped: true},
		{name: "gzip refused with q=0", path: "/", enc: "gzip;q=0", status: 200, ctype: "text/html", contains: "Exocortex"},
		{name: "a module", path: "/assets/app.js", enc: "gzip", status: 200, ctype: "text/javascript", contains: "export function sse", gzipped: true},
		{name: "a style", path: "/assets/app.css", status: 200, ctype: "text/css", contains: "prefers-color-scheme"},
		{name: "an unknown asset", path: "/assets/nope.js", status: 404, ctype: "application/json", contains: `the dashboard has no asset \"nope.js\"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", tc.path, nil)
			if tc.enc != "" {
				req.Header.Set("Accept-Encoding", tc.enc)
			}
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, req)
			res := rec.Result()
			if res.StatusCode != tc.status || !strings.HasPrefix(res.Header.Get("Content-Type"), tc.ctype) {
				t.Fatalf("status %d, type %q; want %d, %q", res.StatusCode, res.Header.Get("Content-Type"), tc.status, tc.ctype)
			}
			var body io.Reader = res.Body
			if got := res.Header.Get("Content-Encoding") == "gzip"; got != tc.gzipped {
				t.Fatalf("gzipped %v, want %v", got, tc.gzipped)
			}
			if tc.gzipped {
				zr, err := gzip.NewReader(res.Body)
				if err != nil {
					t.Fatal(err)
				}
				body = zr
			}
			b, _ := io.ReadAll(body)
			if !strings.Contains(string(b), tc.contains) {
				t.Fatalf("the body lacks %q:\n%.300s", tc.contains, b)
			}
			if tc.status == 200 {
				if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
					t.Errorf("CSP %q", csp)
				}
				// A second load with the ETag is answered 304, empty.
				req2 := httptest.NewRequest("GET", tc.path, nil)
				req2.Header.Set("If-None-Match", res.Header.Get("ETag"))
				rec2 := httptest.NewRecorder()
				mux.ServeHTTP(rec2, req2)
				if rec2.Code != http.StatusNotModified || rec2.Body.Len() != 0 {
					t.Errorf("revalidation: %d with %d bytes", rec2.Code, rec2.Body.Len())
				}
			}
		})
	}
}

// TestFirstLoadWeight checks the page and what it loads first stay within
// the dashboard's budget (300 KB transferred); docs/PERFORMANCE.md has the
// figure a real browser measured.
func TestFirstLoadWeight(t *testing.T) {
	d, err := New()
	if err != nil {
		t.Fatal(err)
	}
	gz, raw := d.Weight()
	t.Logf("first load: %d bytes gzipped (%d uncompressed)", gz, raw)
	if gz > 300<<10 {
		t.Errorf("the first load is %d bytes gzipped, over 300 KB", gz)
	}
}
