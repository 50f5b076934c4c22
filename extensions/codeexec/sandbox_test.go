package codeexec

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/sandbox"
)

// TestMain lets the test binary act as the sandbox launcher, as the exocortex
// binary does.
func TestMain(m *testing.M) {
	sandbox.Launch()
	os.Exit(m.Run())
}

func needSandbox(t *testing.T) {
	t.Helper()
	if st := sandbox.Probe(""); !st.Available {
		t.Skip(st.String())
	}
}

// hostPIDs finds the live processes whose command line is exactly argv, by the
// host's /proc (a sandboxed shell reports the pids of its own namespace).
func hostPIDs(argv ...string) []int {
	want := strings.Join(argv, "\x00") + "\x00"
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); string(b) == want && !gone(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// escapees is a command that leaves processes behind in every way a shell
// can: a background job, a setsid+nohup child, a double fork out of a
// subshell, each sleeping for a tell-tale number of seconds.
func escapees(n int) (string, [][]string) {
	a, b, c := strconv.Itoa(n), strconv.Itoa(n+1), strconv.Itoa(n+2)
	code := "sleep " + a + " &\nsetsid nohup sleep " + b + " >/dev/null 2>&1 &\n(setsid sh -c 'sleep " + c + " & ' &)\nsleep 0.3; echo started"
	return code, [][]string{{"sleep", a}, {"sleep", b}, {"sleep", c}}
}

func waitAllGone(t *testing.T, what string, procs [][]string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, argv := range procs {
		for len(hostPIDs(argv...)) > 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if pids := hostPIDs(argv...); len(pids) > 0 {
			for _, p := range pids {
				syscall.Kill(p, syscall.SIGKILL)
			}
			t.Errorf("%s: %v (pids %v) survived", what, argv, pids)
		}
	}
}

// modes are the ways a shell runs: in the sandbox (its PID namespace kills
// what is left), with the sandbox turned off (tools.sandbox.
// UNSAFE_disable_sandbox) and with the sandbox unavailable on this machine; in
// the last two a child subreaper (sandbox.Reap) holds what left the session.
var modes = []struct {
	name   string
	helper string // the helper plugin's mode (helperEnv)
}{
	{"sandboxed", "sandboxed"},
	{"sandbox off", "unconfined"},
	{"sandbox unavailable", "unavailable"},
}

// serveIn starts the tool in the named mode (see modes).
func serveIn(t *testing.T, mode string, cfg config.CodeExecution) *harness {
	t.Helper()
	switch mode {
	case "sandboxed":
		needSandbox(t)
	case "unconfined":
		cfg.Confine.Off = true
	}
	h := serve(t, cfg)
	if mode == "unavailable" {
		h.r.probe = forcedUnavailable
	}
	return h
}

// forcedUnavailable is the probe of a kernel without the sandbox.
func forcedUnavailable() sandbox.Status {
	return sandbox.Status{Reason: "forced unavailable by the test"}
}

// TestTimeoutKillsEscapedChildren: in every mode, the time limit kills
// everything the command started, setsid and nohup children included, and
// keeps the shell.
func TestTimeoutKillsEscapedChildren(t *testing.T) {
	for i, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			h := serveIn(t, m.helper, config.CodeExecution{Timeout: config.Duration(time.Second)})
			h.r.grace = 2 * time.Second // a loaded machine: let the shell print its marker
			h.ok("KEEP=yes")
			base := 3101 + 10*i
			code, procs := escapees(base)
			res := h.run(map[string]any{"runtime": "terminal", "code": code + "\nsleep " + strconv.Itoa(base-1)})
			if !strings.Contains(res.GetError(), "time limit") {
				t.Fatalf("error = %q, content:\n%s", res.GetError(), res.GetContent())
			}
			waitAllGone(t, "after the time limit", append(procs, []string{"sleep", strconv.Itoa(base - 1)}))
			if got := h.ok("echo $KEEP"); got != "yes" {
				t.Errorf("the shell lost its state: %q", got)
			}
		})
	}
}

// TestResetKillsEscapedChildren: in every mode, runtime reset ends all the
// session started, including what left its process group and session.
func TestResetKillsEscapedChildren(t *testing.T) {
	for i, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			h := serveIn(t, m.helper, config.CodeExecution{Timeout: config.Duration(20 * time.Second)})
			code, procs := escapees(3201 + 10*i)
			h.ok(code)
			if len(hostPIDs(procs[1]...)) == 0 {
				t.Fatalf("the setsid child %v is not running", procs[1])
			}
			h.run(map[string]any{"runtime": "reset"})
			waitAllGone(t, "after reset", procs)
		})
	}
}

// TestPluginDeathKillsEverything: in every mode, when the plugin process is
// killed outright (the host's exit or its deadline), the shell and every
// process it started die, setsid and nohup children included.
func TestPluginDeathKillsEverything(t *testing.T) {
	for i, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			if m.helper == "sandboxed" {
				needSandbox(t)
			}
			code, procs := escapees(3301 + 10*i)
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPlugin$")
			cmd.Env = append(os.Environ(), helperEnv+"="+m.helper, helperCode+"="+code)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			sc := bufio.NewScanner(stdout)
			for sc.Scan() && sc.Text() != "ready" {
			}
			if len(hostPIDs(procs[1]...)) == 0 {
				t.Fatalf("the setsid child %v is not running", procs[1])
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			waitAllGone(t, "after the plugin died", procs)
		})
	}
}

// TestSandboxedShellConfined: the shell writes inside the work directory and
// its scratch directory, not outside; the result says nothing about the
// sandbox when it is on.
func TestSandboxedShellConfined(t *testing.T) {
	needSandbox(t)
	outside := t.TempDir()
	canary := filepath.Join(outside, "canary")
	os.WriteFile(canary, []byte("alive"), 0o644)
	h := serve(t, config.CodeExecution{Timeout: config.Duration(20 * time.Second)})
	if got := h.ok("echo ok > in.txt && cat in.txt && f=$(mktemp) && echo tmp > $f && cat $f"); got != "ok\ntmp" {
		t.Errorf("inside: %q", got)
	}
	res := h.run(map[string]any{"runtime": "terminal", "code": "rm -rf " + outside + "; echo x >| " + canary})
	if res.GetError() == "" {
		t.Errorf("writing outside succeeded: %q", res.GetContent())
	}
	if b, _ := os.ReadFile(canary); string(b) != "alive" {
		t.Errorf("canary = %q", b)
	}
}

// TestEndedSessionsSweepSparesTheNext: a sandboxed shell that exited leaves
// its session to be killed (swept by its PID namespace) while the next
// session starts. The kernel gives a freed namespace's id to the next one
// made, so the sweep must hold the old namespace until it is done, or it kills
// the next session's shell (TestShellExit under -race: "the shell could not
// take the command (broken pipe)").
func TestEndedSessionsSweepSparesTheNext(t *testing.T) {
	needSandbox(t)
	dir := t.TempDir()
	policy := sandbox.Policy{WriteRoots: []string{dir}}
	old, err := startSession("bash", dir, t.TempDir(), &policy, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out := old.exec(t.Context(), RuntimeTerminal, "", "exit 3", 20*time.Second, time.Second, nil); !out.exited {
		t.Fatalf("the shell did not exit: %+v", out)
	}
	<-old.exited
	// The kernel frees a namespace's id a moment after its last process
	// (RCU): sessions are started until one would have got it, or five.
	var next *session
	for i := 0; i < 5; i++ {
		if next != nil {
			next.kill()
			time.Sleep(50 * time.Millisecond)
		}
		if next, err = startSession("bash", dir, t.TempDir(), &policy, nil); err != nil {
			t.Fatal(err)
		}
		if old.ns != "" && old.ns == next.ns {
			t.Errorf("a new session's sandbox got the ended one's namespace id %s while it was still to be swept", old.ns)
			break
		}
	}
	defer next.kill()
	old.kill()
	out := next.exec(t.Context(), RuntimeTerminal, "", "echo alive", 20*time.Second, time.Second, nil)
	if text, _, _ := out.output.text(1000); !out.finished || !strings.Contains(text, "alive") {
		t.Fatalf("the next session's shell after the ended one was swept: finished %v, %q, %s", out.finished, text, out.reason)
	}
}
