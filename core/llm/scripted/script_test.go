package scripted

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadScriptExample(t *testing.T) {
	s, err := LoadScript(filepath.Join("testdata", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != "scripted-test" || s.EmbedModel != "scripted-embed" || s.EmbedDims != 16 || s.ContextLength != 4096 {
		t.Errorf("header = %q %q %d %d", s.Model, s.EmbedModel, s.EmbedDims, s.ContextLength)
	}
	if len(s.Replies) != 5 {
		t.Fatalf("%d replies, want 5", len(s.Replies))
	}
	r := s.Replies
	if r[0].ChunkSize != 4 || r[0].ExpectContains != "notes.txt" || !strings.HasPrefix(r[0].Content, `{"thoughts"`) || r[0].Line != 10 {
		t.Errorf("reply 0 = %+v", r[0])
	}
	if r[1].Thinking == "" || len(r[1].ToolCalls) != 1 || r[1].ToolCalls[0].Name != "memory_save" || r[1].ChunkSize != DefaultChunkSize {
		t.Errorf("reply 1 = %+v", r[1])
	}
	// The file's key order survives: it is part of what the model "wrote".
	if got, want := string(r[1].ToolCalls[0].Arguments), `{"text":"notes.txt has 12 lines","area":"main","tags":["notes","count"]}`; got != want {
		t.Errorf("arguments = %s, want %s", got, want)
	}
	if r[2].DoneReason != "length" || r[0].DoneReason != "stop" {
		t.Errorf("done reasons %q %q", r[2].DoneReason, r[0].DoneReason)
	}
	if r[3].Delay != 20*time.Millisecond || r[3].ChunkSize != 2 {
		t.Errorf("reply 3 = %+v", r[3])
	}
	if !strings.Contains(r[4].Error, "system memory") {
		t.Errorf("reply 4 = %+v", r[4])
	}
}

func TestLoadScriptJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(path, []byte(`{"replies": [{"content": "hi", "delay": "1ms"}, {"tool_calls": [{"name": "t", "arguments": {"z": 1, "a": [true, null]}}]}]}`), 0o644)
	s, err := LoadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != DefaultModel || s.EmbedDims != DefaultEmbedDims || len(s.Replies) != 2 || s.Replies[0].Delay != time.Millisecond {
		t.Errorf("script = %+v", s)
	}
	if got := string(s.Replies[1].ToolCalls[0].Arguments); got != `{"z":1,"a":[true,null]}` {
		t.Errorf("arguments = %s", got)
	}
}

func TestLoadScriptErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string // all must appear in the error
	}{
		{"not yaml", "replies: [\n", []string{"bad.yaml"}},
		{"empty", "", []string{"bad.yaml", "empty script"}},
		{"a list at the top", "- content: x\n", []string{"bad.yaml", "line 1", "mapping"}},
		{"no replies", "model: m\n", []string{"bad.yaml", "no replies"}},
		{"replies not a list", "replies: {content: x}\n", []string{"bad.yaml", "line 1", "want a list"}},
		{"unknown top key", "modle: x\nreplies: []\n", []string{"bad.yaml", "line 1", `unknown key "modle"`}},
		{"unknown reply key", "replies:\n  - content: a\n  - contnet: b\n", []string{"bad.yaml", "replies[1] (line 3)", `unknown key "contnet"`}},
		{"empty reply", "replies:\n  - content: a\n  - chunk_size: 3\n", []string{"bad.yaml", "replies[1] (line 3)", "empty"}},
		{"bad delay", "replies:\n  - content: a\n    delay: soon\n", []string{"bad.yaml", "replies[0] (line 2)", `delay "soon"`}},
		{"negative delay", "replies:\n  - content: a\n    delay: -1s\n", []string{"replies[0] (line 2)", "delay -1s"}},
		{"chunk size not a number", "replies:\n  - content: a\n    chunk_size: big\n", []string{"replies[0] (line 2)", "chunk_size"}},
		{"bad done reason", "replies:\n  - content: a\n    done_reason: stopped\n", []string{"replies[0] (line 2)", `done_reason "stopped"`}},
		{"tool call without name", "replies:\n  - tool_calls:\n      - arguments: {a: 1}\n", []string{"replies[0] (line 2)", "tool_calls[0]: no name"}},
		{"arguments not a mapping", "replies:\n  - tool_calls:\n      - name: t\n        arguments: [1, 2]\n", []string{"replies[0] (line 2)", "tool_calls[0] (line 3)", "arguments: want a mapping"}},
		{"same model names", "model: a\nembed_model: a\nreplies: []\n", []string{"bad.yaml", "different names"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.yaml")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadScript(path)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if _, err := LoadScript(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
}

func TestNewServerChecksScript(t *testing.T) {
	_, err := NewServer(Script{Source: "inline", Replies: []Reply{{Content: "ok"}, {}}})
	if err == nil || !strings.Contains(err.Error(), "inline: replies[1]: empty") {
		t.Errorf("err = %v", err)
	}
	_, err = NewServer(Script{Replies: []Reply{{ToolCalls: []ToolCall{{Name: "t", Arguments: []byte(`[1]`)}}}}})
	if err == nil || !strings.Contains(err.Error(), "arguments must be an object") {
		t.Errorf("err = %v", err)
	}
}

func TestVector(t *testing.T) {
	a := Vector("The build needs Go 1.26", 64)
	if len(a) != 64 {
		t.Fatalf("len = %d", len(a))
	}
	if b := Vector("The build needs Go 1.26", 64); !equal(a, b) {
		t.Error("not deterministic")
	}
	if n := dot(a, a); n < 0.999 || n > 1.001 {
		t.Errorf("norm² = %v, want 1", n)
	}
	related := Vector("the BUILD needs go", 64)
	unrelated := Vector("purple elephants dance quietly", 64)
	if dot(a, related) <= dot(a, unrelated) {
		t.Errorf("shared words should score higher: related %v, unrelated %v", dot(a, related), dot(a, unrelated))
	}
	for _, text := range []string{"", "!!!", "  "} {
		v := Vector(text, 8)
		if n := dot(v, v); n < 0.999 || n > 1.001 {
			t.Errorf("Vector(%q) norm² = %v", text, n)
		}
	}
	if !equal(Vector("", 8), Vector("", 8)) || equal(Vector("!", 8), Vector("?", 8)) {
		t.Error("wordless texts: want deterministic and distinct")
	}
	if Vector("x", 0) != nil {
		t.Error("dims 0 should give nil")
	}
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
