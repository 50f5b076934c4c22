package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Tools are the tools of every server that started, named SERVER.TOOL, sorted.
func (s *Set) Tools() []sdk.Tool {
	var out []sdk.Tool
	for _, sv := range s.servers {
		sv.mu.Lock()
		tools := make([]*mcp.Tool, 0, len(sv.tools))
		for _, t := range sv.tools {
			tools = append(tools, t)
		}
		sv.mu.Unlock()
		sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
		for _, t := range tools {
			out = append(out, sv.tool(t))
		}
	}
	return out
}

func (sv *server) tool(t *mcp.Tool) sdk.Tool {
	params := ""
	if t.InputSchema != nil {
		if b, err := json.Marshal(t.InputSchema); err == nil {
			params = string(b)
		}
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = t.Title
	}
	return sdk.Tool{
		Name:        sv.name + "." + t.Name,
		Description: fmt.Sprintf("%s (tool %s of the MCP server %s)", desc, t.Name, sv.name),
		Parameters:  params,
		Run: func(ctx context.Context, _ *sdk.Call, args json.RawMessage) (*exocortexv1.ToolResult, error) {
			return sv.call(ctx, t.Name, args)
		},
	}
}

// call runs one tool of the server within its tool timeout.
func (sv *server) call(ctx context.Context, name string, args json.RawMessage) (*exocortexv1.ToolResult, error) {
	full := sv.name + "." + name
	cs, err := sv.session(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", full, err)
	}
	var a map[string]any
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, fmt.Errorf("%s: the arguments are not a JSON object: %w", full, err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, sv.conf.Tool())
	defer cancel()
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: a})
	switch {
	case errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return nil, fmt.Errorf("%s: the MCP server %s did not answer within its tool_timeout of %s", full, sv.name, sv.conf.Tool())
	case err != nil:
		// A session that ended under the call (the process died) is
		// reported with the server's stderr.
		if st := sv.snapshot(); st.State != StateReady || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: the call failed: %v: %w", full, err, &UnavailableError{Status: sv.snapshot()})
		}
		return nil, fmt.Errorf("%s: %w", full, err)
	}
	text := contentText(res)
	if res.IsError {
		if text == "" {
			text = "the tool failed without saying why"
		}
		return nil, fmt.Errorf("%s: %s", full, text)
	}
	return &exocortexv1.ToolResult{Content: text}, nil
}

// contentText is a result as text for the model: the text parts, the
// structured content when there is no text, and a line for each part that is
// not text.
func contentText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image, %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio, %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", c.URI, c.Name))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s, %d bytes]", c.Resource.URI, len(c.Resource.Blob)))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

// Notice is the system_prompt extension that tells the model which MCP
// servers are unavailable, so it does not keep calling their tools.
type Notice struct{ Set *Set }

// Spec declares it.
func (n Notice) Spec() sdk.Spec {
	return sdk.Spec{
		Name: "mcp_servers_notice", Hooks: []sdk.Hook{sdk.SystemPrompt(n)}, Order: 17, InjectsPrompt: true, EffectsDeclared: true,
		Description: "Adds MCP SERVERS, naming the configured MCP servers that are unavailable (their tools fail until they are back) and why.",
	}
}

// SystemPrompt adds the block when a server is not ready.
func (n Notice) SystemPrompt(context.Context, *sdk.Call, *exocortexv1.SystemPromptRequest) (*exocortexv1.SystemPromptResponse, error) {
	var lines []string
	for _, st := range n.Set.Statuses() {
		if st.State != StateReady {
			lines = append(lines, fmt.Sprintf("- %s is %s (%s): its tools fail until it is back.", st.Name, st.State, st.Error))
		}
	}
	if len(lines) == 0 {
		return &exocortexv1.SystemPromptResponse{}, nil
	}
	return &exocortexv1.SystemPromptResponse{PromptBlocks: []*exocortexv1.PromptBlock{{Title: "MCP SERVERS", Content: strings.Join(lines, "\n")}}}, nil
}
