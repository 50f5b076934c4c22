package llm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
)

// BenchmarkParseText measures the lenient parser on a clean reply, on one
// that needs several repairs, on a reply carrying 64 KB of code with raw line
// breaks, and on the worst case for the search: many braces in prose before
// the object.
func BenchmarkParseText(b *testing.B) {
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("testdata", "replies", name))
		if err != nil {
			b.Fatal(err)
		}
		return string(data)
	}
	code := strings.Repeat("for i in range(10):\n\tprint(\"line\", i)\n", 64*1024/36)
	cases := []struct{ name, text string }{
		{"clean", read("clean.txt")},
		{"repaired", read("python_dict.txt") + "\n" + read("trailing_commas.txt")},
		{"code_64KB", `{"thoughts": ["write it"], "tool_name": "code_execution", "tool_args": {"runtime": "python", "code": "` + code + `"}}`},
		{"prose_braces", strings.Repeat("use {x: the key} and {y} ", 40) + read("clean.txt")},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := llm.ParseText(c.text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkChat streams a 4 KB reply from the scripted server through
// ollama/api and the client: in 1,024 chunks of 4 characters (close to one
// token each, as Ollama sends) and in one chunk, to show the per-chunk cost.
func BenchmarkChat(b *testing.B) {
	content := strings.Repeat("abcd", 1024)
	for _, chunk := range []int{4, len(content)} {
		b.Run(fmt.Sprintf("chunk_%d", chunk), func(b *testing.B) {
			replies := make([]scripted.Reply, b.N+1)
			for i := range replies {
				replies[i] = scripted.Reply{Content: content, ChunkSize: chunk}
			}
			srv, err := scripted.NewServer(scripted.Script{Replies: replies})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			c, err := llm.New(srv.URL())
			if err != nil {
				b.Fatal(err)
			}
			req := llm.ChatRequest{Model: srv.Model(), Messages: []llm.Message{{Role: llm.RoleUser, Content: "go"}}}
			b.SetBytes(int64(len(content)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := c.Chat(context.Background(), req, func(llm.Chunk) error { return nil })
				if err != nil || len(r.Content) != len(content) {
					b.Fatal(err)
				}
			}
		})
	}
}
