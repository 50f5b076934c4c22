package textfacts

import (
	"strings"
	"testing"
)

var sample = strings.Repeat("drwxr-xr-x 2 user user 4096 Nov 21 12:00 src/main.go\n", 30) +
	"See https://example.com/x and `parseReply` in core/llm/parse.go; Agent Zero uses failure_tracker.\n"

func BenchmarkEntities(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Entities(sample)
	}
}

func BenchmarkValues(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Values(sample, 40)
	}
}
