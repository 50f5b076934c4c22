package sleep

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// The host asks for a run without running it: the sleep trigger extension
// (tool_execute_after, order 60, package extensions/sleep) counts tool calls and
// watches the supervisor's p4_loop_fired, and when a run is due it writes
// $EXOCORTEX_HOME/sleep/request.json. A hook must stay fast, so it never runs
// the consolidation itself: `exocortex sleep --if-requested` (from a timer, or
// the operator) runs it when a request is pending, and a real run that
// finishes removes the request.

// RequestFile is the request's path inside the Exocortex home directory.
const RequestFile = "sleep/request.json"

// Request is the content of the request file (the trigger's format).
type Request struct {
	RequestedUTC string   `json:"requested_utc"`
	Session      string   `json:"session"`
	Reasons      []string `json:"reasons"`
	ToolCalls    int32    `json:"tool_calls"`
	LoopFired    bool     `json:"loop_fired"`
}

// Pending returns the request waiting in home, or nil when there is none (or
// it cannot be read).
func Pending(home string) *Request {
	r, _ := readRequest(filepath.Join(home, RequestFile))
	return r
}

func readRequest(path string) (*Request, []byte) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil
	}
	var r Request
	if json.Unmarshal(b, &r) != nil {
		// A damaged request still asks for a run.
		return &Request{Reasons: []string{"unreadable request file " + path}}, b
	}
	return &r, b
}
