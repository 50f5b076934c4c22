package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/exocortex/exocortex/core/host"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// The registry is a tool provider of the host (host.ToolLister): the agent
// calls a registered tool by its id, through the same hooks, approvals,
// deadline and masking as a plugin's tool (core/host/provider.go). A call is
//
//	POST <endpoint>
//	Content-Type: application/json
//	X-Exocortex-Tool: <id>
//	X-Exocortex-Call-Id: <the tool call's id>
//	X-Exocortex-Session: <the session's id>
//
//	<the arguments, a JSON object>
//
// and the answer's body is the result: a JSON string is its text, other JSON
// goes as it is, and anything else as text. An answer other than 2xx is the
// tool's error, with the status and the start of the body. A registered tool
// gets no secret values: the model's §§secret(NAME) placeholders fail the
// call (a secret is for the tools the operator's own plugins declare), and
// everything that comes back is masked like a plugin's answer.

var _ host.ToolLister = (*Registry)(nil)

// MaxResultBytes bounds a registered tool's answer: a larger one is refused
// with an error the model reads, never cut silently.
const MaxResultBytes = 1 << 20

// Name is the provider's name (host.ToolProvider).
func (r *Registry) Name() string { return "tool registry" }

// Tools lists the registered tools for the agent, named by their id
// (host.ToolLister).
func (r *Registry) Tools(context.Context) []*exocortexv1.ToolSpec {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*exocortexv1.ToolSpec, 0, len(r.registered))
	for _, d := range r.registered {
		out = append(out, &exocortexv1.ToolSpec{
			Name: d.ID, Description: d.Description, Category: d.Category, Implemented: true,
			ParametersJsonSchema: string(d.Parameters), ReturnsJsonSchema: string(d.Returns),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

// RunTool calls a registered tool's endpoint (host.ToolProvider); ctx bears
// the tool's deadline.
func (r *Registry) RunTool(ctx context.Context, req *exocortexv1.ExecuteToolRequest, _ time.Duration) (*exocortexv1.ExecuteToolResponse, error) {
	tc := req.GetToolCall()
	r.mu.Lock()
	d, ok := r.registered[tc.GetName()]
	r.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("tool %q is no longer registered (GET /tools lists the tools)", tc.GetName())
	}
	args := strings.TrimSpace(tc.GetArgsJson())
	if args == "" {
		args = "{}"
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Endpoint, strings.NewReader(args))
	if err != nil {
		return nil, fmt.Errorf("tool %s: endpoint %s: %w", d.ID, d.Endpoint, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json, text/plain")
	hreq.Header.Set("X-Exocortex-Tool", d.ID)
	hreq.Header.Set("X-Exocortex-Call-Id", tc.GetId())
	hreq.Header.Set("X-Exocortex-Session", req.GetCall().GetContext().GetSessionId())
	resp, err := r.httpClient().Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("tool %s: calling %s: %w (check that the endpoint is up, or re-register the tool with POST /tools)", d.ID, d.Endpoint, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResultBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("tool %s: reading the answer of %s: %w", d.ID, d.Endpoint, err)
	}
	result := &exocortexv1.ToolResult{}
	switch {
	case len(body) > MaxResultBytes:
		result.Error = fmt.Sprintf("the answer of %s is larger than %d bytes, so none of it was passed on: ask the tool for less", d.Endpoint, MaxResultBytes)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		result.Error = fmt.Sprintf("%s answered HTTP %d: %s", d.Endpoint, resp.StatusCode, excerpt(body, 300))
	default:
		result.Content = resultText(body)
	}
	return &exocortexv1.ExecuteToolResponse{Result: result}, nil
}

// httpClient is the client the calls go by (the deadline is the call's ctx).
func (r *Registry) httpClient() *http.Client {
	if r.client != nil {
		return r.client
	}
	return http.DefaultClient
}

// resultText is the text of a 2xx answer: a JSON string's value, other
// JSON compacted, anything else as it is.
func resultText(b []byte) string {
	t := bytes.TrimSpace(b)
	var s string
	if json.Unmarshal(t, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, t) == nil {
		return buf.String()
	}
	return string(t)
}

func excerpt(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = s[:n] + "…"
	}
	if s == "" {
		return "(no body)"
	}
	return s
}
