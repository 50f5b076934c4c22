package lint

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/exocortex/exocortex/prompts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// TestFindPromptText searches real files: a Python plugin's sources (the
// extension declared nearest above the text is named), a user override's
// opening (an override carries its built-in prompt's signal), a plugin
// without the text, and a built-in plugin (never searched: the binary embeds
// the prompts).
func TestFindPromptText(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "plugins")
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("watcher/main.py", `
class A:
    def spec(self): return exo.Spec(name="first_ext")
class B:
    def spec(self): return exo.Spec(name="second_ext")
    def hist_add_before(self, call, req):
        if req.message.content.startswith("There is no tool called"):
            pass
`)
	write("watcher/plugin.json", `{"command": ["/usr/bin/python3", "main.py"]}`)
	write("watcher/exocortex/signals.py", `# the SDK copy is not searched: "There is no tool called"`)
	write("overridden.py", `if msg.content.startswith("STOP LOOPING NOW, please"): pass`)
	write("quiet/main.py", `print("nothing to see")`)
	over := filepath.Join(root, "prompts")
	if err := os.MkdirAll(over, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(over, "fw.msg_repeat.md"), []byte("STOP LOOPING NOW, please: {{x}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := LoadPrompts(prompts.Embedded(), over)
	if err != nil {
		t.Fatal(err)
	}
	manifest := func(names ...string) *exocortexv1.ManifestResponse {
		m := &exocortexv1.ManifestResponse{}
		for _, n := range names {
			m.Extensions = append(m.Extensions, &exocortexv1.ExtensionSpec{Name: n})
		}
		return m
	}
	plugins := []Plugin{
		{Name: "watcher", Path: filepath.Join(dir, "watcher"), Dir: dir, Manifest: manifest("first_ext", "second_ext")},
		{Name: "overridden", Path: filepath.Join(dir, "overridden.py"), Dir: dir, Manifest: manifest("only_ext")},
		{Name: "quiet", Path: filepath.Join(dir, "quiet"), Dir: dir, Manifest: manifest("q")},
		{Name: "builtin", Path: filepath.Join(dir, "watcher", "main.py"), Manifest: manifest("b")},
	}
	got, err := FindPromptText(plugins, ps)
	if err != nil {
		t.Fatal(err)
	}
	want := []PromptText{
		{Plugin: "watcher", File: filepath.Join(dir, "watcher", "main.py"), Extension: "second_ext", Prompt: "prompts/fw.msg_tool_not_found.md", Signal: "tool_not_found", Text: "There is no tool"},
		{Plugin: "overridden", File: filepath.Join(dir, "overridden.py"), Extension: "only_ext", Prompt: filepath.Join(over, "fw.msg_repeat.md"), Signal: "repeat", Text: "STOP LOOPING NOW"},
	}
	if len(got) != len(want) {
		t.Fatalf("found %+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("hit %d = %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func TestNeedle(t *testing.T) {
	for _, tt := range []struct{ opening, want string }{
		{"Your reply is word for word the same as your previous one,", "Your reply is word"},
		{"There is no tool called \"", "There is no tool"},
		{"The call to \"", ""}, // too short to mean the prompt
		{"LOOP DETECTED.", "LOOP DETECTED"},
	} {
		if got := needle(tt.opening, needleMax); got != tt.want {
			t.Errorf("needle(%q) = %q, want %q", tt.opening, got, tt.want)
		}
	}
}

// TestFindShortPromptPhrases: a prompt whose opening is shorter than needleMin
// (fw.msg_tool_blocked: `The call to "{{tool_name}}" was not run: ...`) is found
// where a plugin's source holds one of its first line's phrases as a whole
// string literal, and not where the words are part of other text or sit in an
// executable's string data.
func TestFindShortPromptPhrases(t *testing.T) {
	ps, err := LoadPrompts(prompts.Embedded(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file, body string
		want             string // the text found, "" for none
	}{
		{"python prefix", "main.py", `if m.content.startswith("The call to"): pass`, "The call to"},
		{"python phrase in single quotes", "main.py", `if 'was not run' in m.content: pass`, "was not run"},
		{"go prefix with the quote kept", "main.go", "if strings.HasPrefix(m.Content, `The call to \"`) {}", "The call to"},
		{"go prefix with its space", "main.go", `if strings.HasPrefix(m.Content, "The call to ") {}`, "The call to"},
		{"longer sentence", "main.py", `print("The call to arms was heard")`, ""},
		{"not a literal", "main.py", `# The call to the API is slow`, ""},
		{"binary data", "plugin.bin", "\x00\x01The call to\"was not run\"\x00", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "p", tc.file)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			m := &exocortexv1.ManifestResponse{Extensions: []*exocortexv1.ExtensionSpec{{Name: "porter"}}}
			got, err := FindPromptText([]Plugin{{Name: "p", Path: path, Dir: dir, Manifest: m}}, ps)
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, g := range got {
				if g.Signal == "tool_blocked" {
					texts = append(texts, g.Text)
				}
			}
			switch {
			case tc.want == "" && len(texts) > 0:
				t.Errorf("found %q in %s", texts, tc.body)
			case tc.want != "" && (len(texts) != 1 || texts[0] != tc.want):
				t.Errorf("found %q, want %q (signal tool_blocked)", texts, tc.want)
			}
		})
	}
}
