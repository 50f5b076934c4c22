package route

// The codes of Problem, one constant each; docs/api.md lists them
// (TestDocsNameEveryCode checks it both ways).
const (
	CodeUnauthenticated = "unauthenticated" // 401: no key, or a wrong one
	CodeForbidden       = "forbidden"       // 403: a key whose role is too low
	CodeRateLimited     = "rate_limited"    // 429: the key's rate is spent
	CodeTimeout         = "timeout"         // 503: the request ran past serve.request_timeout
	CodeBodyTooLarge    = "body_too_large"  // 413: a body over serve.max_body_bytes
	CodeBadBody         = "bad_body"        // 400: an empty body, or one that cannot be read
	CodeBadJSON         = "bad_json"        // 400: a body that is not JSON
	CodeInvalidField    = "invalid_field"   // 400: a field of the wrong type or out of range
	CodeMissingField    = "missing_field"   // 400: a required field left out
	CodeNotFound        = "not_found"       // 404: an unknown id, name or ns
	CodeConflict        = "conflict"        // 409: a write the state refuses
	CodeTurnFailed      = "turn_failed"     // a monologue that did not run
	CodeUnavailable     = "unavailable"     // 503: the memory service or the sessions are not reachable
	CodeInternal        = "internal"        // 500: a fault of the server itself
)

// Codes are every code, in the order docs/api.md lists them.
var Codes = [...]string{CodeUnauthenticated, CodeForbidden, CodeRateLimited, CodeTimeout, CodeBodyTooLarge,
	CodeBadBody, CodeBadJSON, CodeInvalidField, CodeMissingField, CodeNotFound, CodeConflict, CodeTurnFailed,
	CodeUnavailable, CodeInternal}
