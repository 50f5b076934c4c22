package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/scaffold/a0port"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestRunShowsSettingsToPortedPlugin runs the real `exocortex run` with a
// ported file that reads helpers.settings: the session's settings reach the
// plugin as the app passes them (config.yaml's utility_model and num_ctx, and
// the model of the call: the one the --model script names).
func TestRunShowsSettingsToPortedPlugin(t *testing.T) {
	home := t.TempDir()
	plugin := filepath.Join(home, "plugins", "a0-settings")
	if _, err := a0port.Port(t.Context(), "testdata/a0settings", plugin, "a0-settings"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, config.FileName), []byte("utility_model: settings-util:1b\nnum_ctx: 6144\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(script, []byte("model: settings-e2e\nreplies:\n  - content: '{\"thoughts\":[\"done\"],\"tool_name\":\"response\",\"tool_args\":{\"text\":\"done\"}}'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	cmd := exec.Command(exe, "run", "-p", "hello", "--model", "script:"+script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), config.HomeEnv+"="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if _, err := cmd.Output(); err != nil {
		t.Fatalf("exocortex run: %v\nstderr:\n%s", err, stderr.String())
	}
	got, err := os.ReadFile(filepath.Join(plugin, "settings_seen.txt"))
	if err != nil {
		t.Fatalf("the ported file wrote no settings: %v\nstderr:\n%s", err, stderr.String())
	}
	if want := "chat=settings-e2e util=settings-util:1b ctx=6144"; string(got) != want { // the script names its model
		t.Errorf("the ported file saw %q, want %q", got, want)
	}
}
