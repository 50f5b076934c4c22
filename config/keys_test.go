package config

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/exocortex/exocortex/config/internal/keydocs"
)

// TestKeyDocsCurrent fails when keydocs_gen.go is older than the comments
// it is generated from (run `go generate ./config`).
func TestKeyDocsCurrent(t *testing.T) {
	want, err := keydocs.Render(".")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("keydocs_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("keydocs_gen.go is stale: run `go generate ./config` (or make generate)")
	}
}

// TestEveryKeyIsDescribed: every key has a meaning, and every duration and
// count a rule, so `config keys` explains all of them and Validate checks all
// of them with one rule.
func TestEveryKeyIsDescribed(t *testing.T) {
	for _, f := range fields(reflect.TypeFor[Config]()) {
		if fieldDoc(f.docKey()) == "" {
			t.Errorf("%s (%s) has no doc comment (or keydocs_gen.go is stale: go generate ./config)", f.path, f.docKey())
		}
		if numeric(f.valueType()) {
			switch ruleOf(f).kind {
			case "positive", "nonnegative", "any":
			default:
				t.Errorf("%s is a duration or count without a check tag (positive, nonnegative, nonnegative|-1 or any)", f.path)
			}
		}
	}
}

func TestKeys(t *testing.T) {
	byKey := map[string]Key{}
	for _, k := range Keys() {
		byKey[k.Key] = k
	}
	cases := []Key{
		{Key: "model", Type: "string", Default: "qwen3:8b", Env: EnvModel},
		{Key: "timeouts.tool", Type: "duration", Default: "2m0s", Rule: "a duration (e.g. 10s, 2m, 1h30m) above zero"},
		{Key: "timeouts.tools.NAME", Type: "map of duration", Rule: "a duration (e.g. 10s, 2m, 1h30m) above zero"},
		{Key: "openai.max_retries", Type: "integer", Default: "0", Rule: "a whole number of 0 or more (0 takes the default), or -1 for none"},
		{Key: "approval", Type: "string", Default: "default", Allowed: []string{"default", "auto-edit", "auto_edit", "yolo"}},
		{Key: "tools.code_execution.work_dir", Type: "string", Default: "the project directory"},
		{Key: "tools.web_search.api_key", Type: "string", Env: EnvSearchKey, Secret: true},
		{Key: "plugin_dirs", Type: "list of string"},
	}
	for _, want := range cases {
		got, ok := byKey[want.Key]
		if !ok {
			t.Errorf("no key %s", want.Key)
			continue
		}
		if got.Doc == "" {
			t.Errorf("%s: no doc", want.Key)
		}
		got.Doc = ""
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n%#v\nwant\n%#v", want.Key, got, want)
		}
	}
	if d := byKey["tools.code_execution.shell"].Doc; d == "" || d != byKey["tools.code_execution.node"].Doc {
		t.Errorf("a group's comment is not shared: shell %q, node %q", d, byKey["tools.code_execution.node"].Doc)
	}
}
