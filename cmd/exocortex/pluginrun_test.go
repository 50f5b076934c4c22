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

// oneReplyScript is a scripted model that answers at once.
const oneReplyScript = `model: e2e
replies:
  - content: '{"thoughts":["done"],"tool_name":"response","tool_args":{"text":"All done."}}'
`

// twoIterationScript calls a tool that does not exist, then answers: two
// requests, so that what is told once is seen to be told once.
const twoIterationScript = `model: e2e
replies:
  - content: '{"thoughts":["look"],"tool_name":"no_such_tool","tool_args":{}}'
  - content: '{"thoughts":["done"],"tool_name":"response","tool_args":{"text":"All done."}}'
`

// pluginHome is a home with one test plugin installed (built from pkg) and a
// scripted model, for runs of the real binary.
type pluginHome struct {
	exe, home, script string
}

func newPluginHome(t *testing.T, pkg, name, script string) *pluginHome {
	t.Helper()
	h := &pluginHome{exe: sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex"), home: t.TempDir()}
	plugins := filepath.Join(h.home, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	copyExecutable(t, sdktest.BuildPlugin(t, pkg), filepath.Join(plugins, name))
	h.script = filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(h.script, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

// exo runs the binary with args in a fresh directory; it fails the test on a
// non-zero exit.
func (h *pluginHome) exo(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(h.exe, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+h.home)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exocortex %s: %v\nstderr:\n%s", strings.Join(args, " "), err, errb.String())
	}
	return string(out), errb.String()
}

// run is `run -p` on the scripted model; the answer must reach stdout.
func (h *pluginHome) run(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	out, errOut := h.exo(t, append([]string{"run", "-p", "Answer.", "--model", "script:" + h.script}, args...)...)
	if !strings.Contains(out, "All done.") {
		t.Errorf("stdout %q lacks the answer; stderr:\n%s", out, errOut)
	}
	return out, errOut
}

// linesWith are the lines of s that contain sub.
func linesWith(s, sub string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}
