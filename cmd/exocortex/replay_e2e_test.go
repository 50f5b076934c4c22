package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/replay"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// replayScript is a three-turn session: an answer; a hello_time call and an
// answer; a hello_time call the replayrefuse plugin refuses, another call
// and an answer.
var replayScript = []map[string]any{
	{"thoughts": []string{"greet"}, "tool_name": "response", "tool_args": map[string]any{"text": "Hello."}},
	{"thoughts": []string{"look"}, "tool_name": "hello_time", "tool_args": map[string]any{"name": "first"}},
	{"thoughts": []string{"answer"}, "tool_name": "response", "tool_args": map[string]any{"text": "The tool answered."}},
	{"thoughts": []string{"look again"}, "tool_name": "hello_time", "tool_args": map[string]any{"name": "refuse-me"}},
	{"thoughts": []string{"once more"}, "tool_name": "hello_time", "tool_args": map[string]any{"name": "second"}},
	{"thoughts": []string{"answer"}, "tool_name": "response", "tool_args": map[string]any{"text": "Done, token §§secret(REPLAY_TOKEN)."}},
}

// replaySetup builds the binary and the plugins, and records a three-turn
// operator session (line mode) in a fresh home. The home's config names a
// secret whose value the operator types: the recording must hold its
// placeholder only.
func replaySetup(t *testing.T) (exe, home string, dirs map[string]string) {
	t.Helper()
	exe = sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home = t.TempDir()
	copyExecutable(t, sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/examples/hello"), filepath.Join(home, "plugins", "hello"))
	dirs = map[string]string{}
	for _, name := range []string{"replayprobe", "replayrefuse"} {
		dirs[name] = t.TempDir()
		copyExecutable(t, sdktest.BuildPlugin(t, "./testdata/"+name), filepath.Join(dirs[name], name))
	}
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("secrets:\n  REPLAY_TOKEN: {env: REPLAY_TOKEN}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, 8, 0, replayScript...)
	cmd := exec.Command(exe, "--model", "script:"+script, "--session", "rec")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home, "REPLAY_TOKEN=tok-9f8e7d6c5b")
	cmd.Stdin = strings.NewReader("say hello\nuse the tool\nmy token is tok-9f8e7d6c5b, use the tool twice\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("recording the session: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), out)
	}
	return exe, home, dirs
}

// replayCmd runs exocortex replay with no model reachable: the Ollama host
// points at a closed port.
func replayCmd(t *testing.T, exe, home string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(exe, append([]string{"replay"}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home, "OLLAMA_HOST=http://127.0.0.1:9", "REPLAY_TOKEN=tok-9f8e7d6c5b")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func decodeReport(t *testing.T, out, stderr string) *replay.Report {
	t.Helper()
	var rep replay.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("replay --json wrote no report: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr)
	}
	return &rep
}

// TestReplay records a multi-turn operator session and replays it through
// real plugin processes with the recorded replies: unchanged, with a plugin
// that adds a prompt block, and with one that refuses a tool call.
func TestReplay(t *testing.T) {
	exe, home, dirs := replaySetup(t)

	// The secret the operator typed is recorded as its placeholder.
	recDir := filepath.Join(home, "sessions", "rec"+replay.DirSuffix)
	err := filepath.WalkDir(recDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if bytes.Contains(b, []byte("tok-9f8e7d6c5b")) {
			t.Errorf("%s holds the secret's value", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(recDir, replay.EventsFile)); !bytes.Contains(b, []byte("§§secret(REPLAY_TOKEN)")) {
		t.Errorf("the recording has no placeholder for the secret")
	}

	t.Run("unchanged", func(t *testing.T) {
		out, stderr, code := replayCmd(t, exe, home, "rec", "--check")
		if code != 0 || !strings.Contains(out, "no difference") || !strings.Contains(out, "replayed 3 turns, 6 iterations") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
		}
	})

	t.Run("block added", func(t *testing.T) {
		out, stderr, code := replayCmd(t, exe, home, "rec", "--check", "--json", "--plugin-dir", dirs["replayprobe"])
		if code != 1 {
			t.Fatalf("--check exit %d, want 1\nstderr:\n%s", code, stderr)
		}
		rep := decodeReport(t, out, stderr)
		seen := map[[2]int]bool{}
		for _, id := range rep.Differences {
			for _, d := range id.Differences {
				if d.Kind == replay.BlockAdded && d.Extension == "replay_probe" && d.Hook == "message_loop_prompts_before" && d.What == "PROBE" && d.Plugin == "replayprobe" {
					seen[[2]int{id.Turn, id.Iteration}] = true
				}
			}
		}
		for _, ti := range [][2]int{{1, 1}, {2, 1}, {2, 2}, {3, 1}, {3, 2}, {3, 3}} {
			if !seen[ti] {
				t.Errorf("turn %d iteration %d: no PROBE block reported; report:\n%s", ti[0], ti[1], out)
			}
		}
		if len(rep.Divergences) != 0 {
			t.Errorf("a block changes no path, got divergences %+v", rep.Divergences)
		}
		// The readable diff names the extension and hook.
		text, _, _ := replayCmd(t, exe, home, "rec", "--plugin-dir", dirs["replayprobe"])
		if !strings.Contains(text, `+ block "PROBE" by replay_probe @message_loop_prompts_before (replayprobe)`) {
			t.Errorf("the readable diff does not show the block:\n%s", text)
		}
	})

	t.Run("agent zero port", func(t *testing.T) {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("skipping: python3 is not installed (make test installs it)")
		}
		ported := t.TempDir()
		tree, err := filepath.Abs(filepath.Join("testdata", "a0constructs"))
		if err != nil {
			t.Fatal(err)
		}
		if _, stderr, code := runExo(t, exe, t.TempDir(), home, "plugins", "port", tree, "--out", filepath.Join(ported, "a0c"), "--name", "a0c"); code != 0 {
			t.Fatalf("plugins port: exit %d: %s", code, stderr)
		}
		out, stderr, code := replayCmd(t, exe, home, "rec", "--json", "--check", "--plugin-dir", ported, "--allow-wiring-errors")
		if code != 1 {
			t.Fatalf("--check exit %d, want 1\nstderr:\n%s", code, stderr)
		}
		found := false
		for _, id := range decodeReport(t, out, stderr).Differences {
			for _, d := range id.Differences {
				found = found || d.Kind == replay.BlockAdded && d.Plugin == "a0c" && d.Extension == "a0_house_rules"
			}
		}
		if !found {
			t.Errorf("the ported extension's block is not reported:\n%s", out)
		}
	})

	t.Run("tool refused", func(t *testing.T) {
		out, stderr, code := replayCmd(t, exe, home, "rec", "--json", "--plugin-dir", dirs["replayrefuse"])
		if code != 0 {
			t.Fatalf("exit %d without --check\nstderr:\n%s", code, stderr)
		}
		rep := decodeReport(t, out, stderr)
		if len(rep.Divergences) != 1 {
			t.Fatalf("divergences %+v, want one\n%s", rep.Divergences, out)
		}
		d := rep.Divergences[0]
		if d.Turn != 3 || d.Iteration != 1 || !strings.HasPrefix(d.Recorded, "ran hello_time") || !strings.HasPrefix(d.Replayed, "refused hello_time") {
			t.Errorf("divergence %+v, want turn 3 iteration 1, ran → refused", d)
		}
		// The turn stopped there: nothing of iterations 2 and 3 is compared.
		for _, id := range rep.Differences {
			if id.Turn == 3 && id.Iteration > 1 {
				t.Errorf("turn 3 iteration %d was compared after the divergence", id.Iteration)
			}
			if id.Turn < 3 {
				t.Errorf("turn %d differs before the refused call: %+v", id.Turn, id.Differences)
			}
		}
	})
}

// TestReplayRunJSON replays a run --json file: each message content once in
// the stream, referenced by hash after.
func TestReplayRunJSON(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home := t.TempDir()
	copyExecutable(t, sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/examples/hello"), filepath.Join(home, "plugins", "hello"))
	script := writeScript(t, 8, 0, replayScript[1:3]...)
	cmd := exec.Command(exe, "run", "-p", "use the tool", "--json", "--model", "script:"+script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "run.jsonl")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := replay.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Turns) != 1 || len(rec.Turns[0].Iterations) != 2 {
		t.Fatalf("loaded %d turns, want 1 of 2 iterations", len(rec.Turns))
	}
	// The second request repeats the user message: by hash only.
	if n := bytes.Count(out, []byte(`"part":"history","content":"use the tool"`)); n != 1 {
		t.Errorf("the user message's content is in the stream's requests %d times, want once", n)
	}
	stdout, stderr, code := replayCmd(t, exe, home, file, "--check")
	if code != 0 || !strings.Contains(stdout, "no difference") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
