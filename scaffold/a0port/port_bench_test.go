package a0port

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkPort50 ports a 50-file Agent Zero tree (10 hooks x 5 files, each
// using extras, agent data and a standard-library import, so the import check
// asks the interpreter), SDK copy and report included.
func BenchmarkPort50(b *testing.B) {
	src := b.TempDir()
	hooks := []string{"agent_init", "monologue_start", "message_loop_start", "message_loop_prompts_before", "system_prompt",
		"message_loop_prompts_after", "before_main_llm_call", "tool_execute_before", "message_loop_end", "monologue_end"}
	for _, h := range hooks {
		dir := filepath.Join(src, "usr", "extensions", "python", h)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for i := 1; i <= 5; i++ {
			code := fmt.Sprintf("import json\nfrom helpers.extension import Extension\nfrom agent import LoopData\n\n\nclass E%d(Extension):\n    async def execute(self, loop_data=LoopData(), **kwargs):\n        n = self.agent.get_data(\"k%d\") or 0\n        self.agent.set_data(\"k%d\", n + 1)\n        loop_data.extras_temporary[\"e%d\"] = json.dumps(n)\n", i, i, i, i)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("_%02d_ext%d.py", i*10, i)), []byte(code), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := Port(b.Context(), src, filepath.Join(b.TempDir(), "out"), "bench")
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Files) != 50 {
			b.Fatalf("%d files ported", len(r.Files))
		}
	}
}
