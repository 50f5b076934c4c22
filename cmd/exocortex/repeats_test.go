package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestRepeatedPromptBlocksAreReported runs a real plugin that returns the same
// block twice for every request, over two iterations: a plain `run -p` has
// one stderr line naming the plugin, the extension, the block and the hook,
// and --json one notice with code repeated_block.
func TestRepeatedPromptBlocksAreReported(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	rep := sdktest.BuildPlugin(t, "./testdata/repeater")
	home := t.TempDir()
	plugins := filepath.Join(home, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	copyExecutable(t, rep, filepath.Join(plugins, "repeater"))
	script := filepath.Join(t.TempDir(), "answer.yaml")
	if err := os.WriteFile(script, []byte(`model: e2e
replies:
  - content: '{"thoughts":["look"],"tool_name":"no_such_tool","tool_args":{}}'
  - content: '{"thoughts":["done"],"tool_name":"response","tool_args":{"text":"All done."}}'
`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(exe, append([]string{"run", "-p", "Answer.", "--model", "script:" + script}, args...)...)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("exocortex run: %v\nstderr:\n%s", err, stderr.String())
		}
		return string(out), stderr.String()
	}

	_, stderr := run()
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "same prompt block") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("stderr has %d repeated-block lines, want 1 over two requests:\n%s", len(lines), stderr)
	}
	for _, want := range []string{"warning: plugin repeater, extension repeat_notes", `"notes"`, "2 times", "message_loop_prompts_after"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the line lacks %q: %s", want, lines[0])
		}
	}

	out, _ := run("--json")
	n := 0
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e loop.Event
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == loop.EventNotice && e.Code == loop.NoticeRepeatedBlock {
			n++
			if e.Plugin != "repeater" || e.Extension != "repeat_notes" {
				t.Errorf("the notice names %s/%s, want repeater/repeat_notes", e.Plugin, e.Extension)
			}
		}
	}
	if n != 1 {
		t.Errorf("--json has %d repeated_block notices, want 1", n)
	}
}
