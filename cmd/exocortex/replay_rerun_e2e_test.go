package main

import (
	"errors"
	"io/fs"
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

// TestReplayRerunToolsDeniesHeldWrites records a `run -p` session (approval
// yolo) whose text_editor write out of bounds the action boundary holds, and
// replays it: from the recording the held call gets its recorded answer (no
// difference); with --rerun-tools a held call that is not read-only is denied
// (there is no operator to ask), reported where the paths parted, and the file
// is not written.
func TestReplayRerunToolsDeniesHeldWrites(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home, work := t.TempDir(), t.TempDir()
	target := filepath.Join("/usr/local", "exocortex-replay-probe-"+filepath.Base(work)+".txt")
	write := map[string]any{"thoughts": []string{"write"}, "tool_name": "text_editor", "tool_args": map[string]any{"action": "write", "path": target, "content": "x"}}
	done := map[string]any{"thoughts": []string{"done"}, "tool_name": "response", "tool_args": map[string]any{"text": "Done."}}
	script := writeScript(t, 64, 0, write, done)
	if out, stderr, code := runExo(t, exe, work, home, "run", "-p", "write the probe", "--session", "held", "--approval", "yolo", "--model", "script:"+script); code != 0 {
		t.Fatalf("recording: exit %d\nstderr:\n%s\nstdout:\n%s", code, stderr, out)
	}
	t.Setenv("OLLAMA_HOST", "http://127.0.0.1:9")
	if out, stderr, code := runExo(t, exe, work, home, "replay", "held", "--check"); code != 0 {
		t.Fatalf("replay from the recording: exit %d\nstderr:\n%s\nstdout:\n%s", code, stderr, out)
	}
	out, stderr, code := runExo(t, exe, work, home, "replay", "held", "--json", "--rerun-tools")
	if code != 0 {
		t.Fatalf("replay --rerun-tools: exit %d\nstderr:\n%s", code, stderr)
	}
	rep := decodeReport(t, out, stderr)
	if len(rep.Divergences) != 1 {
		t.Fatalf("divergences %+v, want one (the held write denied)\n%s", rep.Divergences, out)
	}
	d := rep.Divergences[0]
	if d.Turn != 1 || d.Iteration != 1 || !strings.HasPrefix(d.Recorded, "ran text_editor") || !strings.HasPrefix(d.Replayed, "refused text_editor") || !strings.Contains(d.Replayed, "tier 4") {
		t.Errorf("divergence %+v, want turn 1 iteration 1, ran → refused by the boundary", d)
	}
	if _, err := os.Stat(target); !errors.Is(err, fs.ErrNotExist) {
		os.Remove(target)
		t.Errorf("%s was written during the replay (stat: %v)", target, err)
	}
}
