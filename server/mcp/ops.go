package mcpserver

import (
	"encoding/json"

	"github.com/exocortex/exocortex/server/openapi"
)

// RPCMessage is one JSON-RPC 2.0 message of the Model Context Protocol, the
// body of a POST to /mcp (a request or notification) and what comes back
// (a result or an error, as JSON or as server-sent events).
type RPCMessage struct {
	JSONRPC string          `json:"jsonrpc" jsonschema:"enum=2.0"`
	ID      any             `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty" jsonschema:"type=object"`
	Result  json.RawMessage `json:"result,omitempty" jsonschema:"type=object"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Ops describes /mcp for the OpenAPI document.
func Ops() []openapi.Op {
	return []openapi.Op{{Pattern: "/mcp", Body: RPCMessage{}, Reply: RPCMessage{},
		Description: "MCP's streamable HTTP transport: POST JSON-RPC messages, answered as JSON or text/event-stream; " +
			"GET opens the server's event stream (notifications: resources/updated from the memory's journal). " +
			"The Mcp-Session-Id header keeps a session. An agent key lists only the tools that read."}}
}
