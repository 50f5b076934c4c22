// Package openapi describes `exocortex serve`'s HTTP API as an OpenAPI 3.1
// document, generated from the routes the server mounts rather than written
// by hand, so the description cannot drift from the handlers.
//
// Every [route.Route] gives an operation its method, path, summary and the
// role its key needs (as a security requirement: the scheme ApiKey or Bearer,
// and the extension x-exocortex-role). A surface adds what a route alone
// cannot say with an [Op] declared beside its handlers: the query parameters,
// the request body and the reply, each as a Go value whose type is reflected
// into a JSON Schema (2020-12, which OpenAPI 3.1 uses). [Check] tells a
// surface's test that every route has its Op and every Op its route.
//
// [Route] serves the document at /api/v1/openapi.json, with no key needed.
package openapi

import (
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/exocortex/exocortex/server/route"
)

// Path is where [Route] serves the document.
const Path = "/api/v1/openapi.json"

// Op is what a surface says about one of its routes beyond the route itself.
type Op struct {
	// Method and Pattern name the route, as in route.Route.
	Method, Pattern string
	// Query are the query parameters.
	Query []Param
	// Body is a value of the request body's type (nil: no body);
	// OptionalBody says the request may come without one.
	Body         any
	OptionalBody bool
	// Reply is a value of the successful reply's type (nil: no JSON body);
	// with Stream it describes one event of a text/event-stream.
	Reply any
	// Status is the successful reply's status (0: 200).
	Status int
	// Stream says the reply is server-sent events.
	Stream bool
	// Description is more than the route's one-line summary.
	Description string
	// ErrorReply is a value of the error replies' type (nil: the common
	// Error, {"error": {code, message, field}}).
	ErrorReply any
}

// Param is one query parameter.
type Param struct {
	Name, Description string
	// Type is the JSON Schema type: "string" (the default), "integer", "number", "boolean".
	Type     string
	Required bool
}

// Key is how Op and route.Route are matched: "GET /api/v1/memory/{id}".
func Key(method, pattern string) string {
	if method == "" {
		method = "ANY"
	}
	return method + " " + pattern
}

// Check says which routes have no Op and which Ops have no route.
func Check(routes []route.Route, ops []Op) error {
	have := map[string]bool{}
	for _, r := range routes {
		have[Key(r.Method, r.Pattern)] = true
	}
	described := map[string]bool{}
	var problems []string
	for _, o := range ops {
		k := Key(o.Method, o.Pattern)
		described[k] = true
		if !have[k] {
			problems = append(problems, "described but not mounted: "+k)
		}
	}
	for _, r := range routes {
		if k := Key(r.Method, r.Pattern); !described[k] {
			problems = append(problems, "mounted but not described: "+k)
		}
		if r.Summary == "" {
			problems = append(problems, "no summary: "+Key(r.Method, r.Pattern))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("openapi: %s", strings.Join(problems, "; "))
	}
	return nil
}

// Info is the document's info object.
type Info struct {
	Title, Version, Description string
}

var pathParam = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)(\.\.\.)?\}`)

// Document builds the OpenAPI 3.1 document of routes, with the Ops that
// describe them further (a route without one is still listed, with its
// summary and role).
func Document(info Info, routes []route.Route, ops []Op) map[string]any {
	byKey := map[string]Op{}
	for _, o := range ops {
		byKey[Key(o.Method, o.Pattern)] = o
	}
	paths := map[string]map[string]any{}
	ids := map[string]int{}
	for _, r := range routes {
		o := byKey[Key(r.Method, r.Pattern)]
		path := pathParam.ReplaceAllString(strings.TrimSuffix(r.Pattern, "{$}"), "{$1}")
		if paths[path] == nil {
			paths[path] = map[string]any{}
		}
		methods := []string{r.Method}
		if r.Method == "" {
			methods = []string{"GET", "POST"}
		}
		for _, m := range methods {
			op := operation(r, o, path, m)
			id := opID(m, path)
			if ids[id]++; ids[id] > 1 {
				id = fmt.Sprintf("%s%d", id, ids[id])
			}
			op["operationId"] = id
			paths[path][strings.ToLower(m)] = op
		}
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": info.Title, "version": info.Version, "description": info.Description,
			"license": map[string]any{"name": "Apache-2.0", "identifier": "Apache-2.0"}},
		"servers": []any{map[string]any{"url": "/"}},
		"paths":   paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{
				"ApiKey": map[string]any{"type": "apiKey", "in": "header", "name": "X-API-KEY"},
				"Bearer": map[string]any{"type": "http", "scheme": "bearer"},
			},
			"schemas": map[string]any{"Error": reflectSchema(errorBody{})},
		},
	}
}

type errorBody struct {
	Error route.Problem `json:"error"`
}

func operation(r route.Route, o Op, path, method string) map[string]any {
	op := map[string]any{"summary": r.Summary, "x-exocortex-role": r.Role.String()}
	if o.Description != "" {
		op["description"] = o.Description
	}
	if seg := strings.Split(strings.TrimPrefix(path, "/"), "/"); len(seg) > 0 {
		tag := seg[0]
		if tag == "api" && len(seg) > 2 {
			tag = seg[2]
		}
		op["tags"] = []string{tag}
	}
	if r.Role == route.Public {
		op["security"] = []any{}
	} else {
		op["security"] = []any{map[string]any{"ApiKey": []any{}}, map[string]any{"Bearer": []any{}}}
	}
	var params []any
	for _, m := range pathParam.FindAllStringSubmatch(r.Pattern, -1) {
		params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
	}
	for _, q := range o.Query {
		t := q.Type
		if t == "" {
			t = "string"
		}
		p := map[string]any{"name": q.Name, "in": "query", "schema": map[string]any{"type": t}}
		if q.Description != "" {
			p["description"] = q.Description
		}
		if q.Required {
			p["required"] = true
		}
		params = append(params, p)
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	if o.Body != nil && method != "GET" {
		op["requestBody"] = map[string]any{"required": !o.OptionalBody,
			"content": map[string]any{"application/json": map[string]any{"schema": reflectSchema(o.Body)}}}
	}
	status := o.Status
	if status == 0 {
		status = http.StatusOK
	}
	ok := map[string]any{"description": http.StatusText(status)}
	switch {
	case o.Stream:
		ok["content"] = map[string]any{"text/event-stream": map[string]any{"schema": map[string]any{"type": "string",
			"description": "server-sent events; each data line is JSON of this shape", "contentSchema": reflectSchema(o.Reply)}}}
	case o.Reply != nil:
		ok["content"] = map[string]any{"application/json": map[string]any{"schema": reflectSchema(o.Reply)}}
	}
	var errSchema any = map[string]any{"$ref": "#/components/schemas/Error"}
	if o.ErrorReply != nil {
		errSchema = reflectSchema(o.ErrorReply)
	}
	errRef := map[string]any{"description": "an error, naming the field at fault", "content": map[string]any{
		"application/json": map[string]any{"schema": errSchema}}}
	op["responses"] = map[string]any{fmt.Sprint(status): ok, "4XX": errRef, "5XX": errRef}
	return op
}

func opID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, part := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '{' || r == '}' || r == '.' || r == '-' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// reflectSchema is the JSON Schema of v's type, every type inlined (the
// document has no $defs to point into) and without $schema or $id.
func reflectSchema(v any) map[string]any {
	t := reflect.TypeOf(v)
	rf := jsonschema.Reflector{DoNotReference: true, Anonymous: true, AllowAdditionalProperties: true, ExpandedStruct: true}
	s := rf.Reflect(v)
	s.Version, s.ID = "", ""
	b, err := s.MarshalJSON()
	if err != nil {
		panic(fmt.Sprintf("openapi: the schema of %s: %v", t, err))
	}
	m, err := decode(b)
	if err != nil {
		panic(fmt.Sprintf("openapi: the schema of %s: %v", t, err))
	}
	return m
}
