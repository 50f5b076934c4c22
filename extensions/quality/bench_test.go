package quality

import (
	"strings"
	"testing"

	"github.com/exocortex/exocortex/extensions/internal/toolresult"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

var sample = &exocortexv1.ToolResult{Content: strings.Repeat("drwxr-xr-x 2 user user 4096 Nov 21 12:00 src/main.go\n", 30)}

func BenchmarkJudge(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Judge("code_execution", sample)
	}
}

func BenchmarkFailed(b *testing.B) {
	for i := 0; i < b.N; i++ {
		toolresult.Failed(sample)
	}
}

func BenchmarkClean(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Clean(sample.GetContent())
	}
}
