package openapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/exocortex/exocortex/server/route"
)

func decode(b []byte) (map[string]any, error) {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return m, d.Decode(&m)
}

// Route serves the document of the routes mounted returns (it is called
// once, at the first request, when every surface is mounted) at [Path], with
// no key needed. ops are the surfaces' Ops; the document describes itself too.
// A route without its Op, or an Op without its route, is a programming error
// that [Check] names: the document is then refused (500, code internal)
// rather than served incomplete, so a test of the real server catches it.
func Route(info Info, mounted func() []route.Route, ops ...[]Op) route.Route {
	var (
		once    sync.Once
		body    []byte
		problem error
	)
	self := route.Route{Method: "GET", Pattern: Path, Role: route.Public, Summary: "This API's OpenAPI 3.1 description"}
	all := []Op{{Method: "GET", Pattern: Path, Reply: map[string]any{}, Description: "Generated from the mounted routes."}}
	for _, o := range ops {
		all = append(all, o...)
	}
	self.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() {
			routes := mounted()
			seen := false
			for _, rt := range routes {
				seen = seen || rt.Pattern == Path
			}
			if !seen {
				routes = append(routes, self)
			}
			if problem = Check(routes, all); problem == nil {
				body, problem = json.MarshalIndent(Document(info, routes, all), "", "  ")
			}
		})
		if problem != nil {
			route.Error(w, http.StatusInternalServerError, route.Problem{Code: route.CodeInternal, Message: problem.Error()})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	return self
}
