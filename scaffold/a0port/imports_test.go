package a0port

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/sdk/python/pyimport"
)

// TestPortNamesImportsItCannotLoad ports testdata/imports, whose file imports
// third-party modules that are not installed (litellm, langchain_core, openai),
// one guarded by try/except ImportError (tiktoken) and an Agent Zero internal
// (models): the report names each import by file and line with its kind, the
// third-party ones as such with how to install them, and Lint on the ported
// plugin returns the same findings for the files under a0/.
func TestPortNamesImportsItCannotLoad(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	r, err := Port(t.Context(), "testdata/imports", out, "imports")
	if err != nil {
		t.Fatal(err)
	}
	if r.ImportCheck != "" {
		t.Fatalf("imports not checked: %s", r.ImportCheck)
	}
	const file = "usr/extensions/python/message_loop_prompts_after/_50_third_party.py"
	tests := []struct {
		line   int
		module string
		kind   pyimport.Kind
		fix    string
	}{
		{3, "litellm", pyimport.KindThirdParty, "install it in the plugin's environment"},
		{4, "langchain_core.prompts", pyimport.KindThirdParty, "pip install --target PLUGIN_DIR langchain-core"},
		{5, "openai", pyimport.KindThirdParty, "python3-openai"},
		{10, "models", pyimport.KindAgentZero, "rewrite the use against the SDK"},
	}
	if len(r.Imports) != len(tests) {
		t.Errorf("%d imports reported, want %d: %v", len(r.Imports), len(tests), r.Imports)
	}
	for _, tt := range tests {
		if !slices.ContainsFunc(r.Imports, func(p pyimport.Problem) bool {
			return p.File == file && p.Line == tt.line && p.Module == tt.module && p.Kind == tt.kind && strings.Contains(p.Fix, tt.fix)
		}) {
			t.Errorf("%s:%d %s (%s, fix ~%q) not reported: %v", file, tt.line, tt.module, tt.kind, tt.fix, r.Imports)
		}
	}

	// The file needs a hand, its note naming the third-party module as such;
	// the plain file is untouched.
	for _, f := range r.Files {
		notes := strings.Join(f.Notes, "\n")
		switch f.Source {
		case file:
			if f.Status != statusNeedsHand || !f.noLoad || !strings.Contains(notes, "line 3: imports litellm, a third-party module not installed for the plugin: install it") {
				t.Errorf("%s: status %q, cannot load %v, notes:\n%s", f.Source, f.Status, f.noLoad, notes)
			}
			if strings.Contains(notes, "tiktoken") {
				t.Errorf("the guarded import of tiktoken is named: %s", notes)
			}
		default:
			if strings.Contains(notes, "third-party") {
				t.Errorf("%s: %s", f.Source, notes)
			}
		}
	}

	// PORT.md lists third-party modules apart from Agent Zero's internals.
	md, err := os.ReadFile(filepath.Join(out, reportMarkdownName))
	if err != nil {
		t.Fatal(err)
	}
	section := string(md[strings.Index(string(md), "## Imports the plugin cannot load (4)"):])
	third := strings.Index(section, "Third-party modules, not installed for the plugin:")
	internal := strings.Index(section, "Agent Zero internals the compatibility layer has no stand-in for:")
	if third < 0 || internal < 0 || !strings.Contains(section[third:internal], file+":3: imports litellm") || !strings.Contains(section[internal:], file+":10: imports models") {
		t.Errorf("PORT.md's imports section:\n%s", section)
	}

	// Lint on the ported plugin: the same findings, for the files under a0/.
	c, err := Lint(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Imports) != len(r.Imports) {
		t.Fatalf("lint has %d imports, the port %d:\n%v\n%v", len(c.Imports), len(r.Imports), c.Imports, r.Imports)
	}
	for i, p := range r.Imports {
		want := p
		want.File = "a0/" + strings.TrimPrefix(p.File, "usr/")
		if c.Imports[i] != want {
			t.Errorf("lint %+v, want the port's %+v", c.Imports[i], want)
		}
	}
}
