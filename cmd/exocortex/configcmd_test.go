package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestConfigCommand runs `exocortex config`, `config check` and `config keys`
// as a user would, on real files.
func TestConfigCommand(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home := t.TempDir()
	path := filepath.Join(home, config.FileName)
	for _, k := range []string{config.EnvModel, config.EnvNumCtx, config.EnvProvider} {
		t.Setenv(k, "")
	}
	dir := t.TempDir()

	// No file: no problems, and every value is a default.
	out, stderr, code := runExo(t, exe, dir, home, "config", "check")
	if code != 0 || !strings.Contains(out, "no problems") {
		t.Fatalf("check without a file: %d %q %q", code, out, stderr)
	}

	bad := "modle: x\nopenai:\n  timeout: -1m\n  max_retries: -7\napproval: sometimes\ntimeouts:\n  tool: -5s\n"
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	wantLines := []string{
		path + ":1: modle: is not a setting (did you mean model?)",
		path + ":3: openai.timeout: -1m0s is not allowed",
		path + ":4: openai.max_retries: -7 is not allowed",
		path + `:5: approval: "sometimes" is not one of default, auto-edit, auto_edit, yolo`,
		path + ":7: timeouts.tool: -5s is not allowed",
	}
	cases := []struct {
		name string
		args []string
	}{
		{"check", []string{"config", "check"}},
		{"show", []string{"config"}},
		{"a session refuses it too", []string{"plugins", "list"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runExo(t, exe, dir, home, tc.args...)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			for _, w := range wantLines {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
	out, _, code = runExo(t, exe, dir, home, "config", "check", "--json")
	var check struct {
		File     string           `json:"file"`
		OK       bool             `json:"ok"`
		Problems []config.Problem `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &check); err != nil || code != 1 || check.OK || len(check.Problems) != 5 || check.File != path {
		t.Fatalf("check --json: exit %d, %v, %+v", code, err, check)
	}
	if p := check.Problems[0]; p.Line != 1 || p.Key != "modle" || p.Suggest != "model" || p.File != path {
		t.Errorf("first problem: %+v", p)
	}

	// Origins: the file with its line, the environment, a flag, the default.
	if err := os.WriteFile(path, []byte("# mine\nmodel: llama3.2\nmax_iterations: 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(config.EnvNumCtx, "4096")
	out, stderr, code = runExo(t, exe, dir, home, "config", "--approval", "yolo", "--json")
	if code != 0 {
		t.Fatalf("config --json: %d %s", code, stderr)
	}
	var shown struct {
		Settings []config.Setting `json:"settings"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatal(err)
	}
	got := map[string]config.Setting{}
	for _, s := range shown.Settings {
		got[s.Key] = s
	}
	for _, want := range []config.Setting{
		{Key: "model", Value: "llama3.2", Origin: config.Origin{Kind: config.OriginFile, File: path, Line: 2}},
		{Key: "max_iterations", Value: "7", Origin: config.Origin{Kind: config.OriginFile, File: path, Line: 3}},
		{Key: "num_ctx", Value: "4096", Origin: config.Origin{Kind: config.OriginEnv, Env: config.EnvNumCtx}},
		{Key: "approval", Value: "yolo", Origin: config.Origin{Kind: config.OriginFlag, Flag: "--approval"}},
		{Key: "unusable_limit", Value: "5", Origin: config.Origin{Kind: config.OriginDefault}},
	} {
		if got[want.Key] != want {
			t.Errorf("%s: %+v, want %+v", want.Key, got[want.Key], want)
		}
	}
	t.Setenv(config.EnvNumCtx, "")
	out, _, _ = runExo(t, exe, dir, home, "config")
	if !strings.Contains(out, "model") || !strings.Contains(out, path+":2") || !strings.Contains(out, "default") {
		t.Errorf("config:\n%s", out)
	}

	// keys: the same list as the declaration, each with a meaning.
	out, _, code = runExo(t, exe, dir, home, "config", "keys", "--json")
	var keys []config.Key
	if err := json.Unmarshal([]byte(out), &keys); err != nil || code != 0 || len(keys) != len(config.Keys()) {
		t.Fatalf("keys --json: exit %d, %v, %d keys, want %d", code, err, len(keys), len(config.Keys()))
	}
	out, _, _ = runExo(t, exe, dir, home, "config", "keys")
	for _, w := range []string{"openai.max_retries (integer)", "or -1 for none", "timeouts.tool (duration), default 2m0s", "model (string), default qwen3:8b, $EXOCORTEX_MODEL"} {
		if !strings.Contains(out, w) {
			t.Errorf("keys lacks %q", w)
		}
	}
	out, _, code = runExo(t, exe, dir, home, "config", "--help")
	if code != 0 || !strings.Contains(out, "config check") || !strings.Contains(out, "config keys") {
		t.Errorf("config --help: %d\n%s", code, out)
	}

	// --version: the Go version, and the commit when the build stamped one.
	out, _, code = runExo(t, exe, dir, home, "--version")
	if code != 0 || !strings.HasPrefix(out, "exocortex ") || !strings.Contains(out, goruntime.Version()) {
		t.Errorf("--version: %d %q", code, out)
	}
	if bi, err := exec.Command("go", "version", "-m", exe).Output(); err == nil {
		for _, l := range strings.Split(string(bi), "\n") {
			if rev, ok := strings.CutPrefix(strings.TrimSpace(l), "build\tvcs.revision="); ok && !strings.Contains(out, rev) {
				t.Errorf("--version %q lacks the stamped commit %s", out, rev)
			}
		}
	}
}

func TestVersionOf(t *testing.T) {
	stamped := func(kv ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/exocortex/exocortex", Version: "(devel)"}}
		for i := 0; i+1 < len(kv); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return bi
	}
	cases := []struct {
		name string
		bi   *debug.BuildInfo
		want []string
	}{
		{"commit", stamped("vcs.revision", "abc123", "vcs.time", "2026-12-01T10:00:00Z", "vcs.modified", "false"),
			[]string{"exocortex (devel)", "commit abc123 (2026-12-01T10:00:00Z)", goruntime.Version()}},
		{"dirty", stamped("vcs.revision", "abc123", "vcs.modified", "true"), []string{"commit abc123+dirty"}},
		{"release", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, []string{"exocortex v1.2.3", "commit unknown"}},
		{"no build info", nil, []string{"exocortex (devel)", "commit unknown", goruntime.Version()}},
	}
	for _, tc := range cases {
		got := versionOf(tc.bi)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tc.name, got, w)
			}
		}
	}
}
