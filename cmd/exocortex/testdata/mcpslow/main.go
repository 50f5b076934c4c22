// Command mcpslow is an MCP server on stdio for the client-side tests: its
// tool wait writes the server's pid to $MCPSLOW_PIDFILE and waits (so a test
// can kill the server in the middle of the call); big answers
// $MCPSLOW_BIG_BYTES bytes of text.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpslow", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "wait", Description: "Wait for the harbour master (a minute)."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "waiting for the harbour master")
		if err := os.WriteFile(os.Getenv("MCPSLOW_PIDFILE"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			return nil, nil, fmt.Errorf("writing the pid file: %w", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Minute):
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the harbour master came"}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "big", Description: "Answer a long text."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		n, _ := strconv.Atoi(os.Getenv("MCPSLOW_BIG_BYTES"))
		text := "BIGSTART " + strings.Repeat("tide table line ", max(n, 32)/16) + " BIGEND"
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
