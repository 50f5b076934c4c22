package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/exocortex/exocortex/server/route"
)

// BodyError is what is wrong with a request body: the status to answer and
// the problem, naming the field when one is at fault.
type BodyError struct {
	Status  int
	Problem route.Problem
}

func (e *BodyError) Error() string { return e.Problem.Message }

// Decode reads r's JSON body into v. A body over the server's size limit is
// a 413; an empty or malformed body, or a field of the wrong type, a 400
// naming the field and the type it should be.
func Decode(r *http.Request, v any) *BodyError {
	b, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return &BodyError{http.StatusRequestEntityTooLarge, route.Problem{Code: route.CodeBodyTooLarge,
			Message: fmt.Sprintf("the body is over %d bytes (serve.max_body_bytes); send less, or raise the limit", tooBig.Limit)}}
	case err != nil:
		return &BodyError{http.StatusBadRequest, route.Problem{Code: route.CodeBadBody, Message: "reading the body: " + err.Error()}}
	case len(b) == 0:
		return &BodyError{http.StatusBadRequest, route.Problem{Code: route.CodeBadBody, Message: "the body is empty; send a JSON object"}}
	}
	err = json.Unmarshal(b, v)
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return &BodyError{http.StatusBadRequest, route.Problem{Code: route.CodeBadBody, Message: fmt.Sprintf("the body is a JSON %s; send a JSON object", typeErr.Value)}}
		}
		return &BodyError{http.StatusBadRequest, route.Problem{Code: route.CodeInvalidField, Field: field,
			Message: fmt.Sprintf("field %q is a JSON %s; it must be %s", field, typeErr.Value, jsonKind(typeErr.Type.Kind().String()))}}
	case errors.As(err, &syntaxErr):
		return &BodyError{http.StatusBadRequest, route.Problem{Code: route.CodeBadJSON, Message: fmt.Sprintf("the body is not valid JSON at byte %d: %v", syntaxErr.Offset, err)}}
	}
	return &BodyError{http.StatusBadRequest, route.Problem{Code: route.CodeBadJSON, Message: "the body is not valid JSON: " + err.Error()}}
}

// Missing is the problem of a required field left out.
func Missing(field, what string) *BodyError {
	return &BodyError{http.StatusBadRequest, route.Problem{Code: route.CodeMissingField, Field: field, Message: fmt.Sprintf("field %q is required: %s", field, what)}}
}

// jsonKind names a Go kind as a JSON type.
func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "float64", "float32", "int", "int64", "int32", "uint", "uint64":
		return "a number"
	}
	return k
}
