// Command biglog is a test plugin with one tool, read_log, whose output is
// large (BIGLOG_BYTES, 6000 by default): deterministic log lines of the part
// asked for, each naming a request id, so a long session fills a small window
// fast.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

func main() {
	size := 6000
	if n, err := strconv.Atoi(os.Getenv("BIGLOG_BYTES")); err == nil && n > 0 {
		size = n
	}
	sdk.Serve(sdk.Plugin{Name: "biglog", Version: "test", Tools: []sdk.Tool{{
		Name:        "read_log",
		Description: "Reads one part of the service log. Parts are numbered from 1.",
		Parameters:  `{"type":"object","properties":{"part":{"type":"integer","description":"The part to read."}},"required":["part"]}`,
		Run: func(_ context.Context, _ *sdk.Call, args json.RawMessage) (*exocortexv1.ToolResult, error) {
			var a struct {
				Part int `json:"part"`
			}
			if err := json.Unmarshal(args, &a); err != nil || a.Part < 1 {
				return nil, fmt.Errorf(`read_log: give {"part": N} with N from 1`)
			}
			var b strings.Builder
			for i := 0; b.Len() < size; i++ {
				fmt.Fprintf(&b, "2026-11-25T10:%02d:%02dZ part %d line %d: request req-%d-%d served in %d ms by worker w%d\n",
					(a.Part+i/60)%60, i%60, a.Part, i, a.Part, i, 10+(a.Part*7+i*13)%90, i%4)
			}
			return &exocortexv1.ToolResult{Content: b.String()}, nil
		},
	}}})
}
