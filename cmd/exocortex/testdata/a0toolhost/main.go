// Command a0toolhost is a test plugin for the ported Agent Zero files at the
// tool-side hook points (TestPortedToolHooks): its tool "stream" reports its
// output in pieces through the Host service, as a long-running tool does, and
// then that a memory store was built with another embedding model.
package main

import (
	"context"
	"encoding/json"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

func stream(ctx context.Context, c *sdk.Call, _ json.RawMessage) (*exocortexv1.ToolResult, error) {
	var shown []string
	for _, piece := range []string{"one ", "secret ", "three"} {
		d, err := c.ReportOutput(ctx, piece)
		if err != nil {
			return nil, err
		}
		shown = append(shown, d)
	}
	if err := c.ReportEmbeddingModelChanged(ctx, "/tmp/a0-store", "glove-100d", 100, "nomic-embed-text", 768); err != nil {
		return nil, err
	}
	return &exocortexv1.ToolResult{Content: "streamed one secret three; shown last: " + shown[len(shown)-1]}, nil
}

func main() {
	sdk.Serve(sdk.Plugin{Name: "a0toolhost", Version: "test",
		Tools: []sdk.Tool{{Name: "stream", Description: "Reports its output in pieces (test).", Run: stream}}})
}
