package memoryapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/exocortex/exocortex/memory/service"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/server/route"
)

func fieldError(w http.ResponseWriter, field, msg string) {
	route.Error(w, http.StatusBadRequest, route.Problem{Code: route.CodeInvalidField, Field: field, Message: msg})
}

func notFound(w http.ResponseWriter, id string) {
	route.Error(w, http.StatusNotFound, route.Problem{Code: route.CodeNotFound, Field: "id",
		Message: "no memory record has the id " + quote(id) + " (search for it, or list the records with `exocortex memory list`)"})
}

func quote(s string) string { return strconv.Quote(s) }

// intParam reads the integer query parameter name, def when absent, and
// answers 400 naming it when it is no number or out of [lo, hi].
func intParam(w http.ResponseWriter, q url.Values, name string, def, lo, hi int) (int, bool) {
	s := q.Get(name)
	if s == "" {
		return def, true
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		fieldError(w, name, fmt.Sprintf("%s is %s, not a number: give a whole number from %d to %d", name, quote(s), lo, hi))
		return 0, false
	}
	if n < lo || n > hi {
		fieldError(w, name, fmt.Sprintf("%s is %d: give a whole number from %d to %d", name, n, lo, hi))
		return 0, false
	}
	return n, true
}

// list reads a repeatable, comma-separated query parameter (?tags=a,b&tags=c).
func list(q url.Values, name string) []string {
	var out []string
	for _, v := range q[name] {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// decodeBody reads a JSON object into v, answering 400 naming the field whose
// value has the wrong type, or saying what is wrong with the body.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	b, err := io.ReadAll(r.Body)
	if err == nil {
		var fields map[string]json.RawMessage
		if err = json.Unmarshal(b, &fields); err == nil {
			if f, ok := unknownField(fields, v); ok {
				fieldError(w, f, fmt.Sprintf("%s is no field of this request (its fields: %s)", f, strings.Join(jsonFields(v), ", ")))
				return false
			}
			err = json.Unmarshal(b, v)
		}
	}
	if err == nil {
		return true
	}
	var typ *json.UnmarshalTypeError
	var maxBytes *http.MaxBytesError
	switch {
	case errors.As(err, &typ):
		fieldError(w, typ.Field, fmt.Sprintf("%s is a JSON %s, but must be %s", typ.Field, typ.Value, jsonType(typ.Type.Kind().String())))
	case errors.As(err, &maxBytes):
		route.Error(w, http.StatusRequestEntityTooLarge, route.Problem{Code: route.CodeBodyTooLarge,
			Message: fmt.Sprintf("the body is larger than %d bytes", maxBytes.Limit)})
	case len(b) == 0:
		fieldError(w, "", "the body is empty: send a JSON object")
	default:
		fieldError(w, "", "the body is not a JSON object: "+err.Error())
	}
	return false
}

// decodeOptionalBody is decodeBody for a body that may be absent.
func decodeOptionalBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if r.ContentLength == 0 {
		return true
	}
	return decodeBody(w, r, v)
}

// jsonFields are the JSON names of the fields of the struct v points to.
func jsonFields(v any) []string {
	t := reflect.TypeOf(v).Elem()
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// unknownField returns the first field of the body (in sorted order) that v has not.
func unknownField(fields map[string]json.RawMessage, v any) (string, bool) {
	known := jsonFields(v)
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if !slices.Contains(known, k) {
			return k, true
		}
	}
	return "", false
}

func jsonType(kind string) string {
	switch kind {
	case "int", "int32", "int64", "uint64", "float64":
		return "a number"
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "map", "struct":
		return "an object"
	case "bool":
		return "true or false"
	}
	return "a " + kind
}

// serviceError answers a memory service error: bad input is 400 naming field,
// an unknown id 404, a refused write 409, no service 503.
func serviceError(w http.ResponseWriter, err error, field string) {
	var re *service.RemoteError
	if !errors.As(service.Error(err), &re) {
		route.Error(w, http.StatusInternalServerError, route.Problem{Code: route.CodeInternal, Message: err.Error()})
		return
	}
	switch re.Code {
	case codes.InvalidArgument:
		fieldError(w, field, re.Msg)
	case codes.NotFound:
		route.Error(w, http.StatusNotFound, route.Problem{Code: route.CodeNotFound, Field: field, Message: re.Msg})
	case codes.FailedPrecondition, codes.AlreadyExists:
		route.Error(w, http.StatusConflict, route.Problem{Code: route.CodeConflict, Field: field, Message: re.Msg})
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		route.Error(w, http.StatusServiceUnavailable, route.Problem{Code: route.CodeUnavailable, Message: re.Msg})
	default:
		route.Error(w, http.StatusInternalServerError, route.Problem{Code: route.CodeInternal, Message: re.Msg})
	}
}

// source names the API key a write came from, as the record's provenance.
func source(r *http.Request) *exocortexv1.MemorySource {
	name := "anonymous"
	if c, ok := route.CallerFrom(r.Context()); ok && c.Key != "" {
		name = c.Key
	}
	return &exocortexv1.MemorySource{Source: "api:" + name}
}

func areas(m map[string]int) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return "none yet"
	}
	return strings.Join(names, ", ")
}
