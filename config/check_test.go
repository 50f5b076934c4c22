package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestInspectNamesEveryProblem writes each bad configuration into a real
// config.yaml (or the environment) and checks the problems Inspect reports:
// each names the file and line (or the variable), the key, what is wrong and,
// for a misspelling, what was meant.
func TestInspectNamesEveryProblem(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		env  map[string]string
		want []Problem // File is filled in with the test's path when Env is empty
	}{
		{name: "misspelled key", yaml: "modle: x\n",
			want: []Problem{{Line: 1, Key: "modle", Message: "is not a setting", Suggest: "model"}}},
		{name: "misspelled nested key", yaml: "timeouts:\n  tol: 5s\n",
			want: []Problem{{Line: 2, Key: "timeouts.tol", Message: "is not a setting", Suggest: "timeouts.tool"}}},
		{name: "key at the wrong level", yaml: "compress: 5s\n",
			want: []Problem{{Line: 1, Key: "compress", Message: "is not a setting", Suggest: "timeouts.compress"}}},
		{name: "tab on the first line", yaml: "\tmodel: x\n",
			want: []Problem{{Line: 1, Message: "a tab indents this line; YAML indents with spaces only (replace the tab with spaces)"}}},
		{name: "tabs nested", yaml: "timeouts:\n\ttool: 5s\n  \tdefault: 1s\n",
			want: []Problem{{Line: 2, Message: "a tab indents this line; YAML indents with spaces only (replace the tab with spaces)"},
				{Line: 3, Message: "a tab indents this line; YAML indents with spaces only (replace the tab with spaces)"}}},
		{name: "approval not a mode", yaml: "approval: sometimes\n",
			want: []Problem{{Line: 1, Key: "approval", Message: `"sometimes" is not one of default, auto-edit, auto_edit, yolo`}}},
		{name: "approval misspelled", yaml: "approval: yollo\n",
			want: []Problem{{Line: 1, Key: "approval", Message: `"yollo" is not one of default, auto-edit, auto_edit, yolo`, Suggest: "yolo"}}},
		{name: "negative openai timeout", yaml: "openai:\n  timeout: -1m\n",
			want: []Problem{{Line: 2, Key: "openai.timeout", Message: "-1m0s is not allowed: give a duration (e.g. 10s, 2m, 1h30m) of 0 or more (0 takes the default)"}}},
		{name: "negative max_retries", yaml: "openai:\n  max_retries: -7\n",
			want: []Problem{{Line: 2, Key: "openai.max_retries", Message: "-7 is not allowed: give a whole number of 0 or more (0 takes the default), or -1 for none"}}},
		{name: "negative tool timeout", yaml: "timeouts:\n  tool: -5s\n",
			want: []Problem{{Line: 2, Key: "timeouts.tool", Message: "-5s is not allowed: give a duration (e.g. 10s, 2m, 1h30m) above zero; the default is 2m0s"}}},
		{name: "zero default timeout", yaml: "timeouts:\n  default: 0s\n",
			want: []Problem{{Line: 2, Key: "timeouts.default", Message: "0s is not allowed: give a duration (e.g. 10s, 2m, 1h30m) above zero; the default is 10s"}}},
		{name: "map entry", yaml: "timeouts:\n  tools:\n    code_execution: -1s\n",
			want: []Problem{{Line: 3, Key: "timeouts.tools.code_execution", Message: "-1s is not allowed: give a duration (e.g. 10s, 2m, 1h30m) above zero"}}},
		{name: "negative tool count", yaml: "tools:\n  code_execution:\n    output_limit: -3\n",
			want: []Problem{{Line: 3, Key: "tools.code_execution.output_limit", Message: "-3 is not allowed: give a whole number of 0 or more (0 takes the default); the default is 10000"}}},
		{name: "zero iterations", yaml: "max_iterations: 0\n",
			want: []Problem{{Line: 1, Key: "max_iterations", Message: "0 is not allowed: give a whole number above zero; the default is 25"}}},
		{name: "negative idle sleep", yaml: "idle_sleep: -1m\n",
			want: []Problem{{Line: 1, Key: "idle_sleep", Message: "-1m0s is not allowed: give a duration (e.g. 10s, 2m, 1h30m) of 0 or more (0 turns it off); the default is 10m0s"}}},
		{name: "not a number", yaml: "max_iterations: abc\n",
			want: []Problem{{Line: 1, Key: "max_iterations", Message: `"abc" is not a whole number`}}},
		{name: "not a duration", yaml: "timeouts:\n  default: soon\n",
			want: []Problem{{Line: 2, Key: "timeouts.default", Message: `"soon" is not a duration (write e.g. 10s, 2m or 1h30m)`}}},
		{name: "section given a value", yaml: "timeouts: 5s\n",
			want: []Problem{{Line: 1, Key: "timeouts", Message: `is "5s"; want a section of key: value lines`}}},
		{name: "set twice", yaml: "model: a\nmodel: b\n",
			want: []Problem{{Line: 2, Key: "model", Message: "is set twice (first on line 1); keep one"}}},
		{name: "sandbox network", yaml: "tools:\n  sandbox:\n    network: of\n",
			want: []Problem{{Line: 3, Key: "tools.sandbox.network", Message: `"of" is not one of on, off`, Suggest: "off"}}},
		{name: "bad environment number", env: map[string]string{EnvNumCtx: "lots"},
			want: []Problem{{Env: EnvNumCtx, Key: "num_ctx", Message: `"lots" is not a whole number`}}},
		{name: "negative environment number", env: map[string]string{EnvNumCtx: "-5"},
			want: []Problem{{Env: EnvNumCtx, Key: "num_ctx", Message: "-5 is not allowed: give a whole number of 0 or more (0 asks the model)"}}},
		{name: "unknown provider in the environment", env: map[string]string{EnvProvider: "lmstudio"},
			want: []Problem{{Env: EnvProvider, Key: "provider", Message: `"lmstudio" is not one of ollama, openai`}}},
		{name: "every problem at once", yaml: "modle: x\nmax_iterations: -1\nopenai:\n  max_retries: -7\n",
			want: []Problem{{Line: 1, Key: "modle", Message: "is not a setting", Suggest: "model"},
				{Line: 2, Key: "max_iterations", Message: "-1 is not allowed: give a whole number above zero; the default is 25"},
				{Line: 4, Key: "openai.max_retries", Message: "-7 is not allowed: give a whole number of 0 or more (0 takes the default), or -1 for none"}}},
		{name: "not YAML", yaml: "model: x\nmax_iterations: 3\n  bad: indent\n",
			want: []Problem{{Line: 3, Message: "not valid YAML: mapping values are not allowed in this context"}}},
		{name: "a tab inside a block of text is YAML", yaml: "utility_model: |\n  qwen3\n  \tsmall\n"},
		{name: "allowed values", yaml: "openai:\n  max_retries: -1\n  timeout: 0s\nnum_ctx: 0\nidle_sleep: 0s\ntools:\n  memory:\n    idle_close: -1s\napproval: auto-edit\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			path := filepath.Join(home, FileName)
			if tc.yaml != "" {
				if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, got := Inspect(home, func(k string) string { return tc.env[k] })
			want := Problems(nil)
			for _, p := range tc.want {
				if p.Env == "" {
					p.File = path
				}
				want = append(want, p)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("problems:\n%#v\nwant:\n%#v", got, want)
			}
			if len(want) == 0 {
				return
			}
			// Load refuses the same configuration, naming every problem.
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, err := Load(home)
			if err == nil {
				t.Fatal("Load accepted it")
			}
			for _, p := range want {
				if !strings.Contains(err.Error(), p.Error()) {
					t.Errorf("Load's error lacks %q:\n%v", p.Error(), err)
				}
			}
			if !strings.Contains(err.Error(), "exocortex config --help") {
				t.Errorf("Load's error does not say where to read on: %v", err)
			}
		})
	}
}

// TestProblemText: a problem reads file:line: key: message (did you mean X?).
func TestProblemText(t *testing.T) {
	cases := []struct {
		p    Problem
		want string
	}{
		{Problem{File: "/h/config.yaml", Line: 3, Key: "modle", Message: "is not a setting", Suggest: "model"}, "/h/config.yaml:3: modle: is not a setting (did you mean model?)"},
		{Problem{Env: "EXOCORTEX_NUM_CTX", Key: "num_ctx", Message: `"x" is not a whole number`}, `EXOCORTEX_NUM_CTX: num_ctx: "x" is not a whole number`},
		{Problem{File: "/h/config.yaml", Message: "yaml: bad"}, "/h/config.yaml: yaml: bad"},
	}
	for _, tc := range cases {
		if got := tc.p.Error(); got != tc.want {
			t.Errorf("%#v: %q, want %q", tc.p, got, tc.want)
		}
	}
}

// TestOrigins: each value says where it came from.
func TestOrigins(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, FileName)
	os.WriteFile(path, []byte("# settings\nmodel: llama3.2\ntimeouts:\n  tools:\n    code_execution: 3m\n"), 0o600)
	env := map[string]string{EnvNumCtx: "4096", EnvEmbedder: "none"}
	l, ps := Inspect(home, func(k string) string { return env[k] })
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	l.SetFlag("approval", "--approval")
	cases := []struct {
		key  string
		want Origin
	}{
		{"model", Origin{Kind: OriginFile, File: path, Line: 2}},
		{"timeouts.tools.code_execution", Origin{Kind: OriginFile, File: path, Line: 5}},
		{"num_ctx", Origin{Kind: OriginEnv, Env: EnvNumCtx}},
		{"tools.memory.embedder", Origin{Kind: OriginEnv, Env: EnvEmbedder}},
		{"approval", Origin{Kind: OriginFlag, Flag: "--approval"}},
		{"max_iterations", Origin{Kind: OriginDefault}},
	}
	for _, tc := range cases {
		if got := l.Origin(tc.key); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.key, got, tc.want)
		}
	}
	if l.Config.NumCtx != 4096 || l.Config.Tools.Memory.Embedder != "none" || l.Config.Model != "llama3.2" {
		t.Errorf("values: %+v", l.Config)
	}
}

// TestSettings: the effective values, the tools' defaults filled in, a
// secret hidden, a map's entries one by one.
func TestSettings(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, FileName)
	os.WriteFile(path, []byte("tools:\n  web_search:\n    api_key: tvly-secret\ntimeouts:\n  extensions:\n    recall: 2s\n"), 0o600)
	l, ps := Inspect(home, func(string) string { return "" })
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	got := map[string]Setting{}
	for _, s := range l.Settings("/proj") {
		got[s.Key] = s
	}
	cases := []Setting{
		{Key: "tools.web_search.api_key", Value: "(set)", Origin: Origin{Kind: OriginFile, File: path, Line: 3}},
		{Key: "timeouts.extensions.recall", Value: "2s", Origin: Origin{Kind: OriginFile, File: path, Line: 6}},
		{Key: "tools.code_execution.work_dir", Value: "/proj", Origin: Origin{Kind: OriginDefault}},
		{Key: "timeouts.tools", Value: "", Origin: Origin{Kind: OriginDefault}},
		{Key: "max_iterations", Value: "25", Origin: Origin{Kind: OriginDefault}},
	}
	for _, want := range cases {
		if got[want.Key] != want {
			t.Errorf("%s: %+v, want %+v", want.Key, got[want.Key], want)
		}
	}
}
