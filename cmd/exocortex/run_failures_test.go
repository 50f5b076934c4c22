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
	if err := os.WriteFile(script, []byte(e2eScript), 0o644); err != nil {
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
