package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/replay"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// BenchmarkReplay60Turns records a 60-turn operator session with the
// built-in suite (the real binary in line mode, its real plugin processes,
// a scripted model streaming at about 80 tokens a second: 8 runes every
// 25 ms, a small local model's pace) and replays it with `exocortex replay`.
// Each turn reads a file through the built-in text_editor and answers: 120
// model calls, 60 tool calls. It reports the recording's wall time
// (recorded_s), the replay's (replay_s) and their ratio; REPLAY_BENCH_TURNS
// changes the number of turns.
//
//	go test ./cmd/exocortex -run '^$' -bench Replay60Turns -benchtime 3x -timeout 30m
func BenchmarkReplay60Turns(b *testing.B) {
	turns := 60
	if s := os.Getenv("REPLAY_BENCH_TURNS"); s != "" {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			turns = v
		}
	}
	exe := sdktest.BuildPlugin(b, "github.com/exocortex/exocortex/cmd/exocortex")
	home, work := b.TempDir(), b.TempDir()
	if err := os.WriteFile(filepath.Join(work, "notes.txt"), []byte("remember the milk\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	var replies []map[string]any
	var input strings.Builder
	for i := 1; i <= turns; i++ {
		replies = append(replies,
			map[string]any{"thoughts": []string{fmt.Sprintf("Turn %d: the notes first.", i)}, "headline": "Reading", "tool_name": "text_editor", "tool_args": map[string]any{"action": "read", "path": "notes.txt"}},
			map[string]any{"thoughts": []string{"Read them."}, "headline": "Answering", "tool_name": "response", "tool_args": map[string]any{"text": fmt.Sprintf("Answer %d: the notes say to remember the milk.", i)}})
		fmt.Fprintf(&input, "question %d: what do the notes say?\n", i)
	}
	var rs []map[string]any
	for _, r := range replies {
		content, _ := json.Marshal(r)
		rs = append(rs, map[string]any{"content": string(content), "chunk_size": 8, "delay": "25ms"})
	}
	body, _ := json.Marshal(map[string]any{"model": "bench", "replies": rs})
	script := filepath.Join(b.TempDir(), "script.yaml")
	if err := os.WriteFile(script, body, 0o644); err != nil {
		b.Fatal(err)
	}
	rec := exec.Command(exe, "--model", "script:"+script, "--session", "bench")
	rec.Dir, rec.Env, rec.Stdin = work, append(os.Environ(), "EXOCORTEX_HOME="+home), strings.NewReader(input.String())
	var stderr bytes.Buffer
	rec.Stderr = &stderr
	start := time.Now()
	if out, err := rec.Output(); err != nil {
		b.Fatalf("recording: %v\n%s\n%s", err, stderr.String(), out)
	}
	recorded := time.Since(start)
	loaded, err := replay.Load(filepath.Join(home, "sessions", "bench.jsonl"))
	if err != nil || len(loaded.Turns) != turns {
		b.Fatalf("the recording: %v (%d turns)", err, len(loaded.Turns))
	}

	b.ResetTimer()
	var took time.Duration
	for range b.N {
		// Not --check: this measures the cost; that a long session replays
		// clean is TestReplayLongSessionIsClean's.
		cmd := exec.Command(exe, "replay", "bench")
		cmd.Dir, cmd.Env = work, append(os.Environ(), "EXOCORTEX_HOME="+home, "OLLAMA_HOST=http://127.0.0.1:9")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		took += time.Since(start)
		if err != nil {
			b.Fatalf("replay: %v\n%s", err, out)
		}
	}
	b.StopTimer()
	per := took / time.Duration(b.N)
	b.ReportMetric(recorded.Seconds(), "recorded_s")
	b.ReportMetric(per.Seconds(), "replay_s")
	b.ReportMetric(per.Seconds()/recorded.Seconds(), "ratio")
}
