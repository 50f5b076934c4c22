package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/replay"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestReplayRerunTools records a two-turn operator session whose turns read
// a file through the built-in text_editor, changes the file, and replays:
// without --rerun-tools the recorded result is served (no difference), with it
// the read runs again in the sandbox and the new content is reported as the
// history that differs, at the turn and iteration that read it.
func TestReplayRerunTools(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home, work := t.TempDir(), t.TempDir()
	notes := filepath.Join(work, "notes.txt")
	if err := os.WriteFile(notes, []byte("remember the milk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := map[string]any{"thoughts": []string{"the notes first"}, "tool_name": "text_editor", "tool_args": map[string]any{"action": "read", "path": "notes.txt"}}
	answer := map[string]any{"thoughts": []string{"read them"}, "tool_name": "response", "tool_args": map[string]any{"text": "The notes say what they say."}}
	script := writeScript(t, 64, 0, read, answer, read, answer)
	t.Setenv("OLLAMA_HOST", "http://127.0.0.1:9") // the replays reach no model
	rec := exec.Command(exe, "--model", "script:"+script, "--session", "rr")
	rec.Dir, rec.Env = work, append(os.Environ(), "EXOCORTEX_HOME="+home)
	rec.Stdin = strings.NewReader("what do the notes say?\nand now?\n")
	if out, err := rec.CombinedOutput(); err != nil {
		t.Fatalf("recording: %v\n%s", err, out)
	}
	if err := os.WriteFile(notes, []byte("buy the bread\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name  string
		args  []string
		bread bool // the new content reaches the replayed history
	}{
		{"recorded results", []string{"replay", "rr", "--json", "--check"}, false},
		{"rerun", []string{"replay", "rr", "--json", "--rerun-tools"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := runExo(t, exe, work, home, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d\nstderr:\n%s\nstdout:\n%s", code, stderr, out)
			}
			rep := decodeReport(t, out, stderr)
			if len(rep.Divergences) != 0 {
				t.Fatalf("divergences %+v: the same calls were made", rep.Divergences)
			}
			var at [][2]int
			for _, id := range rep.Differences {
				for _, d := range id.Differences {
					if d.Kind == replay.History && strings.Contains(d.Replayed, "buy the bread") && strings.Contains(d.Recorded, "remember the milk") {
						at = append(at, [2]int{id.Turn, id.Iteration})
					}
				}
			}
			if !tc.bread {
				if len(rep.Differences) != 0 {
					t.Fatalf("served the recorded results, yet differences: %s", out)
				}
				return
			}
			if len(at) == 0 || at[0] != [2]int{1, 2} {
				t.Fatalf("the re-run read's new content is reported at %v, want first at turn 1 iteration 2:\n%s", at, out)
			}
		})
	}
}
