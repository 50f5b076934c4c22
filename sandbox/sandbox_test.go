package sandbox_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exocortex/exocortex/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Launch()
	os.Exit(m.Run())
}

// available skips the test where the machine cannot sandbox.
func available(t *testing.T) {
	t.Helper()
	if st := sandbox.Probe(""); !st.Available {
		t.Skip(st.String())
	}
}

// run runs a shell command under p and returns its output and exit status.
func run(t *testing.T, p sandbox.Policy, dir, script string) (string, int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	if err := sandbox.Wrap(cmd, p, ""); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %q: %v", script, err)
	}
	return string(out), code
}

func TestConfinesWritesAndSecrets(t *testing.T) {
	available(t)
	base := t.TempDir()
	root := filepath.Join(base, "project")
	home := filepath.Join(base, "home")
	for _, d := range []string{root, home, filepath.Join(home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(home, ".bashrc"), []byte("canary\n"), 0o644)
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("PRIVATE KEY\n"), 0o600)
	os.WriteFile(filepath.Join(home, "key.txt"), []byte("API KEY\n"), 0o600)
	os.Symlink(home, filepath.Join(root, "link"))
	p := sandbox.Policy{WriteRoots: []string{root}, Secrets: []string{filepath.Join(home, ".ssh"), filepath.Join(home, "key.txt")}}

	tests := []struct {
		name, script string
		wantOK       bool
		wantOut      string
	}{
		{"write inside the root", "echo hi > inside.txt && cat inside.txt", true, "hi"},
		{"mkdir and rename inside", "mkdir -p a/b && echo x > a/f && mv a/f a/b/g && ls a/b", true, "g"},
		{"read outside", "cat " + home + "/.bashrc", true, "canary"},
		{"rm -rf the home", "rm -rf " + home, false, ""},
		{"clobber through a variable", "H=" + home + "; echo x >| $H/.bashrc", false, ""},
		{"through a symlink in the root", "echo x > link/.bashrc", false, ""},
		{"truncate outside", "truncate -s 0 " + home + "/.bashrc", false, ""},
		{"read the ssh key", "cat " + home + "/.ssh/id_ed25519", false, ""},
		{"read the key file", "cat " + home + "/key.txt", true, ""},
		{"umount the hidden secret", "umount " + home + "/.ssh", false, ""},
		{"write /tmp", "echo x > /tmp/exocortex-sandbox-test-" + strconv.Itoa(os.Getpid()), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code := run(t, p, root, tt.script)
			if (code == 0) != tt.wantOK {
				t.Errorf("exit %d, want ok=%v; output:\n%s", code, tt.wantOK, out)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("output %q, want it to contain %q", out, tt.wantOut)
			}
			if strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, "API KEY") {
				t.Errorf("a secret was read: %q", out)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".bashrc")); string(b) != "canary\n" {
		t.Errorf(".bashrc = %q, want it untouched", b)
	}
	if _, err := os.Stat(filepath.Join(home, ".ssh", "id_ed25519")); err != nil {
		t.Errorf("the key is gone: %v", err)
	}
}

func TestNetworkOff(t *testing.T) {
	available(t)
	dir := t.TempDir()
	// Only the loopback device, down, exists in a network namespace of its own.
	out, _ := run(t, sandbox.Policy{WriteRoots: []string{dir}}, dir, "cat /proc/net/dev")
	if strings.Count(strings.TrimSpace(out), "\n") != 2 || !strings.Contains(out, "lo:") {
		t.Errorf("network off: /proc/net/dev lists more than lo:\n%s", out)
	}
	out, _ = run(t, sandbox.Policy{WriteRoots: []string{dir}, Network: true}, dir, "cat /proc/net/dev")
	if strings.Count(strings.TrimSpace(out), "\n") < 2 {
		t.Logf("network on: /proc/net/dev:\n%s", out)
	}
}

// TestEscapedChildDies: a setsid, nohup'd grandchild dies when the command it
// came from ends, and when the command is killed.
func TestEscapedChildDies(t *testing.T) {
	available(t)
	dir := t.TempDir()
	for _, kill := range []bool{false, true} {
		pidFile := filepath.Join(dir, "pid-"+strconv.FormatBool(kill))
		script := "setsid nohup sh -c 'echo $$ > " + pidFile + ".ns; exec sleep 300' >/dev/null 2>&1 & sleep 0.3; echo started"
		if kill {
			script += "; sleep 300"
		}
		cmd := exec.Command("/bin/sh", "-c", script)
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := sandbox.Wrap(cmd, sandbox.Policy{WriteRoots: []string{dir}}, ""); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sleeper := waitSleeper(t, cmd.Process.Pid)
		if kill {
			_ = cmd.Process.Kill()
		}
		_ = cmd.Wait()
		deadline := time.Now().Add(3 * time.Second)
		for alive(sleeper) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(sleeper) {
			syscall.Kill(sleeper, syscall.SIGKILL)
			t.Errorf("kill=%v: the setsid child %d outlived its command", kill, sleeper)
		}
	}
}

// waitSleeper finds the host pid of the `sleep 300` started under the launcher.
func waitSleeper(t *testing.T, launcher int) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			cl, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if string(cl) != "sleep\x00300\x00" {
				continue
			}
			// Under our launcher: its pid namespace is the launcher's.
			a, _ := os.Readlink("/proc/" + e.Name() + "/ns/pid")
			b, _ := os.Readlink("/proc/" + strconv.Itoa(launcher) + "/ns/pid")
			ppidNS := a != "" && a == b
			if ppidNS && getsid(pid) != launcher {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the setsid child never started")
	return 0
}

func getsid(pid int) int {
	s, _, _ := syscall.Syscall(syscall.SYS_GETSID, uintptr(pid), 0, 0)
	return int(s)
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z'
}
