package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/scaffold/a0port"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// canaryValue is the secret of the canary tests: characters that URL and
// JSON encodings change, none that a single-quoted shell word cannot hold.
const canaryValue = "cnry/7Qx9+Zk2p&Wm4v=end"

// leakForms are the texts that must appear nowhere: the value, its base64
// (standard and URL alphabets) and its URL encodings.
func leakForms(v string) []string {
	return []string{v, base64.StdEncoding.EncodeToString([]byte(v)), base64.URLEncoding.EncodeToString([]byte(v)),
		url.QueryEscape(v), url.PathEscape(v)}
}

// wireLog is a proxy in front of a scripted server that keeps every request
// body as it went over the wire.
type wireLog struct {
	mu     sync.Mutex
	bodies []string
}

func (w *wireLog) start(t *testing.T, target string) string {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	base := *u
	base.Path = ""
	proxy := httputil.NewSingleHostReverseProxy(&base)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.mu.Lock()
		w.bodies = append(w.bodies, r.URL.Path+" "+string(b))
		w.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		proxy.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + u.Path
}

// canaryScript is the session the model plays: a shell command that echoes
// the secret and base64-encodes it (and writes its hash, the proof it got
// the value), a Python tool that prints it (and writes its hash), a tool
// error that contains it, an unknown secret name, a memory_save of it, and
// the answer.
func canaryScript() []scripted.Reply {
	call := func(tool string, args map[string]any, expect string) scripted.Reply {
		b, _ := json.Marshal(map[string]any{"thoughts": []string{"step"}, "headline": "step", "tool_name": tool, "tool_args": args})
		return scripted.Reply{Content: string(b), ExpectContains: expect}
	}
	shell := `printf '%s' '§§secret(CANARY)' | sha256sum | cut -d' ' -f1 > shell.sha; ` +
		`echo "raw: §§secret(CANARY)"; printf '%s' '§§secret(CANARY)' | base64; printf 'user:%s\n' '§§secret(CANARY)' | base64`
	py := "import hashlib, urllib.parse\nv = '§§secret(CANARY)'\nprint('py:', v, urllib.parse.quote(v, safe=''))\n" +
		"open('py.sha', 'w').write(hashlib.sha256(v.encode()).hexdigest())\n"
	return []scripted.Reply{
		call("code_execution", map[string]any{"runtime": "terminal", "code": shell}, ""),
		call("code_execution", map[string]any{"runtime": "python", "code": py}, ""),
		call("code_execution", map[string]any{"runtime": "terminal", "code": "cat '/nonexistent/§§secret(CANARY)'"}, ""),
		call("code_execution", map[string]any{"runtime": "terminal", "code": "echo §§secret(NOPE)"}, ""),
		call("memory_save", map[string]any{"key": "deploy_token", "value": "the deploy token is §§secret(CANARY)"}, ""),
		call("response", map[string]any{"text": "done; the token was §§secret(CANARY)"}, ""),
	}
}

// TestSecretCanary runs a whole scripted session through `exocortex run
// --json` on both model protocols, with a secret from the environment and a
// ported Agent Zero tree loaded, and then looks for the value everywhere it
// could have gone: the model requests as sent over the wire, every file
// under the home and the project, the --json events. The commands that
// needed the value got it: the hashes they wrote are the value's.
func TestSecretCanary(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	for _, provider := range []string{"ollama", "openai"} {
		t.Run(provider, func(t *testing.T) {
			home, project := t.TempDir(), t.TempDir()
			if _, err := a0port.Port(t.Context(), a0Helpers, filepath.Join(home, "plugins", "a0-keeper"), "a0-keeper"); err != nil {
				t.Fatal(err)
			}
			srv, err := scripted.Start(provider, scripted.Script{Source: "canary", Replies: canaryScript()})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			var wire wireLog
			addr := wire.start(t, srv.URL())
			cfg := "model: " + srv.Model() + "\nprovider: " + provider + "\n" +
				"secrets:\n  CANARY: {env: EXO_TEST_CANARY}\n"
			if provider == "openai" {
				cfg += "openai:\n  base_url: " + addr + "\n"
			} else {
				cfg += "ollama_host: " + addr + "\n"
			}
			if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(exe, "run", "-p", "Deploy with the token.", "--json")
			cmd.Dir = project
			// The ported tree puts values back into tool arguments itself, at
			// tool_execute_before, from its own A0_SECRET_ variable (Agent
			// Zero's way): its answer is masked like every plugin's, so the
			// values never reach the TOOL SPECS block or the history.
			cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home, "EXO_TEST_CANARY="+canaryValue, "A0_SECRET_CANARY="+canaryValue)
			stdout, stderr := runScripted(t, cmd, srv)

			// The tools got the value.
			sum := sha256.Sum256([]byte(canaryValue))
			for _, f := range []string{"shell.sha", "py.sha"} {
				b, err := os.ReadFile(filepath.Join(project, f))
				if err != nil || strings.TrimSpace(string(b)) != hex.EncodeToString(sum[:]) {
					t.Errorf("%s = %q (%v): the tool did not receive the secret's value", f, b, err)
				}
			}
			// The value went nowhere else.
			forms := leakForms(canaryValue)
			wire.mu.Lock()
			bodies := strings.Join(wire.bodies, "\n")
			wire.mu.Unlock()
			// What the tools printed reached the model, masked.
			for _, want := range []string{"raw: §§secret(CANARY)", "py: §§secret(CANARY) §§secret(CANARY)", "/nonexistent/§§secret(CANARY)",
				// The unknown name meets the ported tree's own unmasking
				// first, at tool_execute_before: it raises, as in Agent Zero,
				// and the guard fails closed (the host's own "names no
				// secret" answer is core/loop's TestSecrets).
				"secret placeholder §§secret(NOPE) has no value", "Secrets you may use in tool arguments",
				// the ported tree ran, and TOOL SPECS repeated a call that worked
				"A0-MARKER-secrets masked=", "Last call that worked: "} {
				if !strings.Contains(bodies, want) {
					t.Errorf("no model request has %q", want)
				}
			}
			assertNoLeak(t, "the model requests", bodies, forms)
			assertNoLeak(t, "run --json", stdout.String(), forms)
			assertNoLeak(t, "stderr", stderr.String(), forms)
			for _, dir := range []string{home, project} {
				walkNoLeak(t, dir, forms)
			}
			if !strings.Contains(stdout.String(), `"signal":"tool_blocked","text":"The call to \"code_execution\" was not run: _10_unmask raised`) {
				t.Error("the unknown secret's call was not blocked by the ported guard in the events")
			}
		})
	}
}

// runScripted runs cmd (an `exocortex run --json` against srv) to its end,
// failing the test when it fails or leaves scripted replies, and returns its
// standard output and error.
func runScripted(t *testing.T, cmd *exec.Cmd, srv scripted.Running) (stdout, stderr *bytes.Buffer) {
	t.Helper()
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("exocortex run: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), tail(stdout.String()))
	}
	for _, f := range srv.Failures() {
		t.Errorf("scripted server: %v", f)
	}
	if n := srv.Remaining(); n != 0 {
		t.Errorf("%d scripted replies left: the session stopped early\n%s", n, tail(stdout.String()))
	}
	return stdout, stderr
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

func assertNoLeak(t *testing.T, where, text string, forms []string) {
	t.Helper()
	for _, f := range forms {
		if i := strings.Index(text, f); i >= 0 {
			t.Errorf("%s holds the secret (%q) at %d: …%s…", where, f, i, text[max(0, i-120):min(len(text), i+len(f)+40)])
		}
	}
}

// walkNoLeak reads every file under dir.
func walkNoLeak(t *testing.T, dir string, forms []string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		assertNoLeak(t, path, string(b), forms)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Errorf("no files under %s", dir)
	}
}

// TestSecretsBadInput: a secret that cannot be read or masked stops `run`
// before anything starts, naming the secret and what to do, and `secrets
// list --json` shows each secret's state without its value.
func TestSecretsBadInput(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	dir := t.TempDir()
	loose := filepath.Join(dir, "loose")
	if err := os.WriteFile(loose, []byte("a-long-enough-secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(loose, 0o644)
	tests := []struct {
		name, secrets string
		env           []string
		want          []string
	}{
		{"common word", "W: {env: EXO_TEST_WORD}", []string{"EXO_TEST_WORD=password123"}, []string{"secret W", "common word"}},
		{"short", "S: {env: EXO_TEST_SHORT}", []string{"EXO_TEST_SHORT=abc"}, []string{"secret S", "3 characters"}},
		{"loose permissions", "F: {file: " + loose + "}", nil, []string{"secret F", loose, "0644", "chmod 600"}},
		{"unreadable", "U: {file: " + filepath.Join(dir, "missing") + "}", nil, []string{"secret U", "missing", "cannot be read"}},
		{"unset variable", "E: {env: EXO_TEST_UNSET_VAR}", nil, []string{"secret E", "EXO_TEST_UNSET_VAR is not set"}},
		{"no keyring", "K: {keyring: nothing-here}", nil, []string{"secret K", "keyring exocortex/nothing-here"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			script := filepath.Join(home, "script.yaml")
			if err := os.WriteFile(script, []byte("replies:\n  - content: '"+answer+"'\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("model: script:"+script+"\nsecrets:\n  "+tt.secrets+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(exe, "run", "-p", "hello", "--json")
			cmd.Dir = t.TempDir()
			cmd.Env = append(append(os.Environ(), "EXOCORTEX_HOME="+home, "DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(dir, "no-bus")), tt.env...)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("run started with a bad secret:\n%s", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("run's error does not say %q:\n%s", w, out)
				}
			}
			lcmd := exec.Command(exe, "secrets", "list", "--json")
			lcmd.Env = cmd.Env
			lout, err := lcmd.Output()
			if err != nil {
				t.Fatalf("secrets list: %v", err)
			}
			var rep struct {
				Secrets []secretRow `json:"secrets"`
			}
			if err := json.Unmarshal(lout, &rep); err != nil || len(rep.Secrets) != 1 || rep.Secrets[0].OK || rep.Secrets[0].Error == "" {
				t.Errorf("secrets list --json = %s (%v)", lout, err)
			}
			for _, e := range tt.env {
				if v := e[strings.Index(e, "=")+1:]; strings.Contains(string(out)+string(lout), v) {
					t.Errorf("the value %q is shown", v)
				}
			}
		})
	}
}

// TestLintUndeclaredSecretRead ports the keeper tree, whose files read
// secrets through Agent Zero's helpers.secrets and whose plugin declares no
// uses_secrets: the real `exocortex lint --json` reports each read (EXO139)
// at its file and line.
func TestLintUndeclaredSecretRead(t *testing.T) {
	home := t.TempDir()
	plugins := filepath.Join(home, "plugins")
	if _, err := a0port.Port(t.Context(), a0Helpers, filepath.Join(plugins, "a0-keeper"), "a0-keeper"); err != nil {
		t.Fatal(err)
	}
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	out, errOut, _ := runExo(t, exe, t.TempDir(), home, "lint", "--dir", plugins, "--json")
	rep := report(t, out)
	var files []string
	for _, f := range rep.Findings {
		if f.Code == "EXO139" && f.Plugin == "a0-keeper" {
			files = append(files, f.File)
		}
	}
	for _, want := range []string{"tool_execute_before/_10_unmask.py:", "message_loop_prompts_after/_75_secrets.py:"} {
		found := false
		for _, f := range files {
			found = found || strings.Contains(f, want)
		}
		if !found {
			t.Errorf("no EXO139 at %s; EXO139 at %v\n%s", want, files, errOut)
		}
	}
}
