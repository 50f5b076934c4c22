package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestPluginsStatusName: `plugins status NAME` (and list NAME) shows that
// plugin alone, as /plugins status NAME does; an unknown name is an error
// naming the plugins there are.
func TestPluginsStatusName(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home, dir := t.TempDir(), t.TempDir()
	cases := []struct {
		args     []string
		code     int
		want     []string
		wantNot  []string
		inStderr bool
	}{
		{args: []string{"plugins", "status", "cognition"}, want: []string{"cognition", "crashes:"}, wantNot: []string{"memory-tools", "agent-tools"}},
		{args: []string{"plugins", "list", "safety", "cognition"}, want: []string{"safety", "cognition"}, wantNot: []string{"memory-tools"}},
		{args: []string{"plugins", "status", "nope"}, code: 1, want: []string{`no plugin called "nope"`, "cognition"}, inStderr: true},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, stderr, code := runExo(t, exe, dir, home, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			text := out
			if tc.inStderr {
				text = stderr
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(text, w) {
					t.Errorf("shows %q:\n%s", w, text)
				}
			}
		})
	}
}

// TestContinueWithNothingToContinue: -c with no earlier session says so on
// stderr and starts a new one (as gemini-cli's --resume does); with one, it
// continues it without the warning.
func TestContinueWithNothingToContinue(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home := t.TempDir()
	script, err := filepath.Abs(filepath.Join("testdata", "tui", "session.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	session := func(stdin string) (string, string) {
		cmd := exec.Command(exe, "-c", "--plain", "--model", "script:"+script)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	const warning = "-c: there is no earlier session in"
	out, stderr := session("say hello\n")
	if !strings.Contains(stderr, warning) || !strings.Contains(stderr, "starting a new session") {
		t.Errorf("first -c, nothing to continue:\nstderr:\n%s", stderr)
	}
	if !strings.Contains(out, "Hello from the **scripted** model.") {
		t.Errorf("the new session did not answer:\n%s", out)
	}
	_, stderr = session("")
	if strings.Contains(stderr, warning) {
		t.Errorf("second -c warned although a session exists:\n%s", stderr)
	}
}

// TestRunJSONTimes: every line of run --json carries a real time, the
// notices run makes itself included.
func TestRunJSONTimes(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home := t.TempDir()
	project := t.TempDir()
	// Untrusted prompt overrides make run write a notice of its own.
	if err := os.MkdirAll(filepath.Join(project, ".exocortex", "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, ".exocortex", "prompts", "fw.msg_repeat.md"), []byte("Rewritten.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "tui", "session.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Minute)
	out, stderr, code := runExo(t, exe, project, home, "run", "-p", "say hello", "--json", "--model", "script:"+script)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	kinds := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var line struct {
			Type string    `json:"type"`
			Time time.Time `json:"time"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		kinds[line.Type]++
		if line.Time.Before(start) || line.Time.After(time.Now().Add(time.Minute)) {
			t.Errorf("a %s line has time %s: %s", line.Type, line.Time, sc.Text())
		}
	}
	if kinds["notice"] == 0 || kinds["model"] != 1 {
		t.Errorf("lines by type: %v (want a model line and a notice)", kinds)
	}
}
