package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// scaffoldScript is the scripted model of the session `plugins new` records
// for a new plugin's `make replay`: a read of the plugin's README through
// the built-in text_editor, then an answer — two iterations, a tool call
// and its result, the hooks of every stage.
const scaffoldScript = `model: scripted
replies:
  - content: '{"thoughts": ["The README says what the plugin does."], "headline": "Reading", "tool_name": "text_editor", "tool_args": {"action": "read", "path": "README.md"}}'
  - content: '{"thoughts": ["I have read it."], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "The README describes the plugin."}}'
`

// errNotExocortex: the running binary cannot record the session.
var errNotExocortex = errors.New("recording a session for make replay: this binary is not exocortex")

// scaffoldSession is where a scaffolded plugin's recorded session goes.
const scaffoldSession = "testdata/session.jsonl"

// recordScaffoldSession records a session for the plugin just written in
// dir, before the plugin is installed: `exocortex run --json` with the
// scripted model above, in dir, through today's plugins. make replay then
// shows what the plugin changes in it.
func recordScaffoldSession(ctx context.Context, dir string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("recording a session for make replay: %w", err)
	}
	if testing.Testing() {
		// In a test binary the executable is the test, not exocortex: it
		// would run the tests again instead of the session.
		return errNotExocortex
	}
	script, err := os.CreateTemp("", "exocortex-scaffold-*.yaml")
	if err != nil {
		return fmt.Errorf("recording a session for make replay: %w", err)
	}
	defer os.Remove(script.Name())
	if _, err := script.WriteString(scaffoldScript); err != nil {
		script.Close()
		return fmt.Errorf("recording a session for make replay: %w", err)
	}
	script.Close()
	cmd := exec.CommandContext(ctx, exe, "run", "-p", "What does README.md say?", "--json", "--model", "script:"+script.Name(), "--provider", "ollama")
	cmd.Dir = dir
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("recording a session for make replay (exocortex run): %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	path := filepath.Join(dir, filepath.FromSlash(scaffoldSession))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("recording a session for make replay: %w", err)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		return fmt.Errorf("recording a session for make replay: %w", err)
	}
	return nil
}
