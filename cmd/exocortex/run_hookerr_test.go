package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestRunReportsHookErrorsOnStderr runs a plain `run -p` (no --json) with a
// plugin whose extensions change their request and read a key they did not
// declare: each refusal gets one stderr line naming the plugin, the
// extension, the hook and what to do, and the answer still reaches stdout.
func TestRunReportsHookErrorsOnStderr(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	bad := sdktest.BuildPlugin(t, "./testdata/misbehave")
	home := t.TempDir()
	plugins := filepath.Join(home, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	copyExecutable(t, bad, filepath.Join(plugins, "misbehave"))
	script := filepath.Join(t.TempDir(), "answer.yaml")
	// Two iterations: the extensions fail at both, and each failure is told once.
	if err := os.WriteFile(script, []byte(`model: e2e
replies:
  - content: '{"thoughts":["look"],"tool_name":"no_such_tool","tool_args":{}}'
  - content: '{"thoughts":["done"],"tool_name":"response","tool_args":{"text":"All done."}}'
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "-p", "Answer.", "--model", "script:"+script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exocortex run: %v\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(string(out), "All done.") {
		t.Errorf("stdout %q lacks the answer; stderr:\n%s", out, stderr.String())
	}
	for _, tc := range []struct {
		extension string
		wants     []string
	}{
		{"misbehave_mutator", []string{"plugin misbehave", "message_loop_end", "changed its request's reply", "MessageLoopEndResponse.intervention", "the call was skipped"}},
		{"misbehave_peeker", []string{"plugin misbehave", "message_loop_end", `state key "failure_tracker"`, "Reads", "the call was skipped"}},
	} {
		var lines []string
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.HasPrefix(l, "warning: ") && strings.Contains(l, tc.extension) {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 {
			t.Errorf("stderr has %d lines for %s, want 1:\n%s", len(lines), tc.extension, stderr.String())
			continue
		}
		for _, w := range tc.wants {
			if !strings.Contains(lines[0], w) {
				t.Errorf("the line for %s lacks %q: %s", tc.extension, w, lines[0])
			}
		}
	}
}

// TestRunReportsLateStateWrite: a state change a plugin makes from a goroutine
// after its hook call returned is refused, and a plain `run -p` says so once on
// stderr, naming the plugin, the extension, the hook and the key.
func TestRunReportsLateStateWrite(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	late := sdktest.BuildPlugin(t, "./testdata/latewrite")
	home := t.TempDir()
	plugins := filepath.Join(home, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	copyExecutable(t, late, filepath.Join(plugins, "latewrite"))
	script := filepath.Join(t.TempDir(), "answer.yaml")
	if err := os.WriteFile(script, []byte(`model: e2e
replies:
  - content: '{"thoughts":["done"],"tool_name":"response","tool_args":{"text":"All done."}}'
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "-p", "Answer.", "--model", "script:"+script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exocortex run: %v\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(string(out), "All done.") {
		t.Errorf("stdout %q lacks the answer; stderr:\n%s", out, stderr.String())
	}
	var lines []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "after its call") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("stderr has %d late-write lines, want 1:\n%s", len(lines), stderr.String())
	}
	for _, want := range []string{"plugin latewrite", "extension late_writer", `"latewrite_note"`, "monologue_start", "refused", "before the method returns"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the late-write line lacks %q: %s", want, lines[0])
		}
	}
	events, err := os.ReadFile(filepath.Join(home, "logs", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(events), `"kind":"late_state_write","plugin":"latewrite","extension":"late_writer"`) {
		t.Errorf("events.jsonl has no late_state_write event:\n%s", events)
	}
}
