package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/exocortex/exocortex/sdk/sdktest"
)

// served is an `exocortex serve` process started by a test.
type served struct {
	url, home string
	cmd       *exec.Cmd
	mu        sync.Mutex
	stderr    bytes.Buffer
	stopped   bool
}

func (s *served) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// serveBinary is the exocortex binary the serve tests run. Under `go test
// -race` it is built with the race detector as well, so a race in the serve
// process (or in its built-in plugins, the same binary) is caught: its report
// fails the test (served.stop).
func serveBinary(t *testing.T) string {
	t.Helper()
	if !raceBuild {
		return sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	}
	exe, err := raceServe()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// raceServe builds the race-detecting exocortex once per test process.
var raceServe = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "exocortex-race-")
	if err != nil {
		return "", err
	}
	exe := filepath.Join(dir, "exocortex")
	out, err := exec.Command("go", "build", "-race", "-o", exe, "github.com/exocortex/exocortex/cmd/exocortex").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build -race ./cmd/exocortex: %v\n%s", err, out)
	}
	return exe, nil
})

// startServe runs `exe serve` on a free loopback port with the scripted model
// script and config.yaml config in a new home holding plugins (name → path),
// until the test ends, and returns it once it listens.
func startServe(t *testing.T, exe, script, config string, plugins map[string]string, env ...string) *served {
	t.Helper()
	return startServeIn(t, t.TempDir(), exe, script, config, plugins, env...)
}

// startServeIn is startServe in the home directory home (a restart).
func startServeIn(t *testing.T, home, exe, script, config string, plugins map[string]string, env ...string) *served {
	t.Helper()
	for name, path := range plugins {
		copyExecutable(t, path, filepath.Join(home, "plugins", name))
	}
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	scriptFile := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(scriptFile, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &served{home: home}
	s.cmd = exec.Command(exe, "serve", "--addr", "127.0.0.1:0", "--model", "script:"+scriptFile)
	s.cmd.Dir = t.TempDir()
	s.cmd.Env = append(os.Environ(), append([]string{"EXOCORTEX_HOME=" + home, "EXOCORTEX_API_KEY=", "EXOCORTEX_AGENT_KEY="}, env...)...)
	pr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.stderr.WriteString(line + "\n")
			s.mu.Unlock()
			if _, url, ok := strings.Cut(line, "listening on "); ok {
				url, _, _ = strings.Cut(url, " ")
				found <- url
			}
		}
	}()
	t.Cleanup(func() { s.stop(t) })
	select {
	case s.url = <-found:
	case <-time.After(90 * time.Second):
		t.Fatalf("exocortex serve did not listen within 90s; stderr:\n%s", s.log())
	}
	return s
}

// stop ends the server with SIGTERM and waits for it (once).
func (s *served) stop(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	stopped := s.stopped
	s.stopped = true
	s.mu.Unlock()
	if stopped {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exocortex serve ended with %v after SIGTERM; stderr:\n%s", err, s.log())
		} else if strings.Contains(s.log(), "WARNING: DATA RACE") {
			t.Errorf("exocortex serve found a data race; stderr:\n%s", s.log())
		}
		// The built-in plugins' stderr goes to the home's log.
		if b, _ := os.ReadFile(filepath.Join(s.home, "logs", "exocortex.log")); bytes.Contains(b, []byte("WARNING: DATA RACE")) {
			t.Errorf("a plugin of exocortex serve found a data race; %s:\n%s", filepath.Join(s.home, "logs", "exocortex.log"), b)
		}
	case <-time.After(60 * time.Second):
		_ = s.cmd.Process.Kill()
		t.Errorf("exocortex serve did not stop within 60s of SIGTERM; stderr:\n%s", s.log())
	}
}

// do sends a JSON request (body "" for none) with the headers hdr (name,
// value, ...) and returns the status and the decoded answer.
func (s *served) do(t *testing.T, method, path, body string, hdr ...string) (int, map[string]any) {
	t.Helper()
	status, b := s.raw(t, method, path, body, hdr...)
	var out map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s %s: the answer %q is not a JSON object: %v", method, path, b, err)
		}
	}
	return status, out
}

func (s *served) raw(t *testing.T, method, path, body string, hdr ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v\nstderr:\n%s", method, path, err, s.log())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// curl runs curl with args and returns the status and the decoded body.
func curl(t *testing.T, args ...string) (int, map[string]any) {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed (apt-get install curl)")
	}
	out, err := exec.Command("curl", append([]string{"-sS", "-w", "\n%{http_code}"}, args...)...).Output()
	if err != nil {
		t.Fatalf("curl %v: %v", args, err)
	}
	i := bytes.LastIndexByte(out, '\n')
	var status int
	if _, err := fmt.Sscan(string(out[i+1:]), &status); err != nil {
		t.Fatalf("curl %v: no status in %q", args, out)
	}
	var body map[string]any
	if b := bytes.TrimSpace(out[:i]); len(b) > 0 {
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatalf("curl %v: the answer %q is not a JSON object: %v", args, b, err)
		}
	}
	return status, body
}

// serveBuild builds the plugin package pkg for a serve test.
func serveBuild(t *testing.T, pkg string) string {
	t.Helper()
	return sdktest.BuildPlugin(t, pkg)
}

// mkSession makes an empty session file, as the terminal leaves one, so
// that api_message may name it.
func mkSession(t *testing.T, s *served, name string) {
	t.Helper()
	dir := filepath.Join(s.home, "sessions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}
