package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestSecretTypedInTmux: the operator types a secret's value into a message
// in the terminal session. The transcript shows the placeholder, and the
// value reaches no model request (as sent over the wire), no file under the
// home or the project (the session file, the input history, the logs) and
// not the screen's scrollback.
func TestSecretTypedInTmux(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home, work := t.TempDir(), t.TempDir()
	tm := newTmux(t)
	srv, err := scripted.Start("ollama", scripted.Script{Source: "typed", Replies: []scripted.Reply{
		{Content: `{"thoughts":["noted"],"headline":"answering","tool_name":"response","tool_args":{"text":"Noted the token §§secret(CANARY), without seeing it."}}`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var wire wireLog
	addr := wire.start(t, srv.URL())
	cfg := "model: " + srv.Model() + "\nollama_host: " + addr + "\nsecrets:\n  CANARY: {env: EXO_TEST_CANARY}\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pidFile, script := filepath.Join(dir, "pid"), filepath.Join(dir, "run.sh")
	body := "#!/bin/sh\necho $$ > " + pidFile + "\ncd " + work + "\nexport EXOCORTEX_HOME=" + home +
		"\nexport EXO_TEST_CANARY='" + canaryValue + "'\nexec " + exe + ` "$@"` + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	tm.run("new-session", "-d", "-s", "typed", "-x", "110", "-y", "40", "sh "+script)
	tm.track(pidFile)
	tm.waitFor("typed", "◆ Exocortex", "plugins  ✓")
	tm.typeLine("typed", "deploy with my token "+canaryValue+" please")
	scr := tm.waitFor("typed", "› deploy with my token §§secret(CANARY) please", "Noted the token §§secret(CANARY), without seeing it.")
	tm.keys("typed", "C-d")
	if status := tm.paneDead("typed"); status != 0 {
		t.Fatalf("exit status %d after ctrl+d; the pane:\n%s", status, tm.screen("typed"))
	}
	forms := leakForms(canaryValue)
	assertNoLeak(t, "the terminal", scr, forms)
	wire.mu.Lock()
	bodies := strings.Join(wire.bodies, "\n")
	wire.mu.Unlock()
	if !strings.Contains(bodies, "deploy with my token §§secret(CANARY) please") {
		t.Errorf("the masked message did not reach the model:\n%s", tail(bodies))
	}
	assertNoLeak(t, "the model requests", bodies, forms)
	walkNoLeak(t, home, forms)
	if hist, err := os.ReadFile(filepath.Join(home, "history.jsonl")); err != nil || !strings.Contains(string(hist), "§§secret(CANARY)") {
		t.Errorf("the input history does not keep the masked line (%v): %s", err, hist)
	}
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions: %v", files)
	}
}
