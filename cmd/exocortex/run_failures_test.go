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

// TestRunReportsFailuresOnStderr runs `run -p` without --json, as a script
// would: a plugin that crashes mid-turn and an untrusted project's prompt
// overrides each get a line on stderr, and the answer still reaches stdout.
func TestRunReportsFailuresOnStderr(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	crash := sdktest.BuildPlugin(t, "./testdata/crashonce")
	home := t.TempDir()
	plugins := filepath.Join(home, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	copyExecutable(t, crash, filepath.Join(plugins, "crashonce"))
	script := filepath.Join(t.TempDir(), "e2e.yaml")
	if err := os.WriteFile(script, []byte(strings.NewReplacer(handledFailure, "", utilityReply, "").Replace(e2eScript)), 0o644); err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	overrides := filepath.Join(project, ".exocortex", "prompts")
	if err := os.MkdirAll(overrides, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(overrides, "fw.msg_repeat.md"), []byte("Rewritten.\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(exe, "run", "-p", "Say hello, then answer.", "--model", "script:"+script)
	cmd.Dir = project
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home, "EXOCORTEX_TEST_CRASH_MARKER="+filepath.Join(t.TempDir(), "crashed"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exocortex run: %v\nstderr:\n%s", err, stderr.String())
	}
	if strings.TrimSpace(string(out)) == "" {
		t.Errorf("no answer on stdout; stderr:\n%s", stderr.String())
	}
	for _, want := range []string{
		"warning: plugin crashonce crashed or hung and was stopped",
		"prompt overrides in " + overrides + " are not loaded",
	} {
		if n := strings.Count(stderr.String(), want); n != 1 {
			t.Errorf("stderr has %q %d times, want once:\n%s", want, n, stderr.String())
		}
	}
}

// stagingNoteScript has the model stage a note (the tool opens the staging
// log, which quarantines a malformed line), then answer.
const stagingNoteScript = `model: e2e
replies:
  - content: '{"thoughts":["note"],"headline":"note","tool_name":"staging_note","tool_args":{"text":"remember the e2e run"}}'
  - content: '{"thoughts":["done"],"tool_name":"response","tool_args":{"text":"Noted."}}'
`

// TestRunReportsQuarantinedStagingLine: a staging line that a real run's
// staging_note call quarantines gets exactly one stderr line, which names the
// file, the line and what to do; the records around it are kept.
func TestRunReportsQuarantinedStagingLine(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home := t.TempDir()
	staged := filepath.Join(home, "staging.jsonl")
	inbox := `{"v":1,"seq":1,"ts":"2026-11-25T10:00:00Z","kind":"note","session":"s0","payload":{"text":"first"}}
{"v":1,"seq":2,"ts":"2026-11-25T10:00:01Z","kind":"note","session":"s0","payload":{"text":"broken
{"v":1,"seq":2,"ts":"2026-11-25T10:00:02Z","kind":"note","session":"s0","payload":{"text":"third"}}
`
	if err := os.WriteFile(staged, []byte(inbox), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "note.yaml")
	if err := os.WriteFile(script, []byte(stagingNoteScript), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "-p", "Stage a note.", "--model", "script:"+script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exocortex run: %v\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(string(out), "Noted.") {
		t.Errorf("stdout %q lacks the answer; stderr:\n%s", out, stderr.String())
	}
	var lines []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "quarantined") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("stderr has %d quarantine lines, want 1:\n%s", len(lines), stderr.String())
	}
	for _, want := range []string{"line 2 of " + staged, staged + ".quarantine", "correct it and stage it again", "delete it"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the quarantine line lacks %q: %s", want, lines[0])
		}
	}
	b, err := os.ReadFile(staged)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"first"`, `"third"`, "remember the e2e run"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the staging log lost %s:\n%s", want, b)
		}
	}
}
