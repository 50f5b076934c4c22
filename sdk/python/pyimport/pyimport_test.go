package pyimport

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layer is the test's compatibility layer: helpers.extension and agent, with
// the names they provide.
func layer(module string, names []string) ([]string, bool) {
	have := map[string][]string{"helpers.extension": {"Extension", "extensible"}, "agent": {"Agent", "LoopData", "AgentContext"}}[module]
	if have == nil {
		return nil, false
	}
	var missing []string
	for _, n := range names {
		if !slices.Contains(have, n) {
			missing = append(missing, n)
		}
	}
	return missing, true
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		code string
		want []Import
	}{
		{"plain and aliased", "import os, json as j\n", []Import{{Line: 1, Module: "os"}, {Line: 1, Module: "json"}}},
		{"from, parenthesized over lines", "x = 1\nfrom a.b import (\n    c,\n    d as e,\n)\n", []Import{{Line: 2, Module: "a.b", Names: []string{"c", "d"}}}},
		{"backslash continuation", "from a import b, \\\n    c\n", []Import{{Line: 1, Module: "a", Names: []string{"b", "c"}}}},
		{"relative", "from .m import x\nfrom . import y\n", []Import{{Line: 1, Module: ".m", Names: []string{"x"}, Relative: true}, {Line: 2, Module: ".", Names: []string{"y"}, Relative: true}}},
		{"helpers names are modules", "from helpers import files, log as l\n", []Import{{Line: 1, Module: "helpers.files"}, {Line: 1, Module: "helpers.log"}}},
		{"guarded by ImportError", "try:\n    import openai\nexcept ImportError:\n    openai = None\n", []Import{{Line: 2, Module: "openai", Guarded: true}}},
		{"guarded by a tuple with as", "try:\n    import openai\nexcept (KeyError, ModuleNotFoundError) as e:\n    pass\n", []Import{{Line: 2, Module: "openai", Guarded: true}}},
		{"bare except guards", "try:\n    import openai\nexcept:\n    pass\n", []Import{{Line: 2, Module: "openai", Guarded: true}}},
		{"a narrow except does not", "try:\n    import openai\nexcept KeyError:\n    pass\nexcept ValueError:\n    pass\n", []Import{{Line: 2, Module: "openai"}}},
		{"the second except guards", "try:\n    import openai\nexcept KeyError:\n    pass\nexcept ImportError:\n    pass\n", []Import{{Line: 2, Module: "openai", Guarded: true}}},
		{"finally does not", "try:\n    import openai\nfinally:\n    pass\n", []Import{{Line: 2, Module: "openai"}}},
		{"after the try block", "try:\n    import a\nexcept ImportError:\n    pass\nimport b\n", []Import{{Line: 2, Module: "a", Guarded: true}, {Line: 5, Module: "b"}}},
		{"TYPE_CHECKING", "if TYPE_CHECKING:\n    import x\nimport y\n", []Import{{Line: 2, Module: "x", Guarded: true}, {Line: 3, Module: "y"}}},
		{"in a function", "def f():\n    import x\n", []Import{{Line: 2, Module: "x"}}},
		{"docstring and strings", "\"\"\"Doc.\n\nimport nope\n\"\"\"\ns = 'import nope'\nt = \"\"\"import nope\"\"\"\n# import nope\nimport yes\n", []Import{{Line: 8, Module: "yes"}}},
		{"one-line docstring", "\"\"\"import nope\"\"\"\nimport yes\n", []Import{{Line: 2, Module: "yes"}}},
		{"importlib.import_module with a literal", "import importlib\nm = importlib.import_module(\"helpers.memory\")\n",
			[]Import{{Line: 1, Module: "importlib"}, {Line: 2, Module: "helpers.memory", Dynamic: true}}},
		{"import_module imported by name, single quotes", "from importlib import import_module\nx = import_module('litellm')\n",
			[]Import{{Line: 1, Module: "importlib", Names: []string{"import_module"}}, {Line: 2, Module: "litellm", Dynamic: true}}},
		{"__import__", "mod = __import__( \"openai.types\" , fromlist=[\"x\"])\n", []Import{{Line: 1, Module: "openai.types", Dynamic: true}}},
		{"relative dynamic", "m = importlib.import_module(\".sibling\", __package__)\n", []Import{{Line: 1, Module: ".sibling", Relative: true, Dynamic: true}}},
		{"dynamic, guarded", "try:\n    m = importlib.import_module(\"openai\")\nexcept ImportError:\n    m = None\n",
			[]Import{{Line: 2, Module: "openai", Guarded: true, Dynamic: true}}},
		{"dynamic over lines", "m = importlib.import_module(\n    \"helpers.files\",\n)\n", []Import{{Line: 1, Module: "helpers.files", Dynamic: true}}},
		{"a computed name is not read", "m = importlib.import_module(f\"helpers.{name}\")\nn = __import__(name)\no = import_module(\"helpers.\" + name)\n",
			nil},
		{"in a string or comment", "s = 'importlib.import_module(\"nope\")'\n# __import__(\"nope\")\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse([]byte(tt.code))
			if len(got) != len(tt.want) {
				t.Fatalf("Parse = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g.Line != w.Line || g.Module != w.Module || !slices.Equal(g.Names, w.Names) || g.Relative != w.Relative || g.Guarded != w.Guarded || g.Dynamic != w.Dynamic {
					t.Errorf("import %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// TestCheck checks the fixture plugin testdata/plugin: each import it cannot
// load is found at its line with its kind and fix, and nothing else is.
func TestCheck(t *testing.T) {
	dir := filepath.Join("testdata", "plugin")
	code, err := os.ReadFile(filepath.Join(dir, "main.py"))
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Dir: dir, Provided: layer}
	got, err := env.Check(t.Context(), []Source{{File: "main.py", Code: code}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line   int
		module string
		kind   Kind
		what   string
		fix    string
	}{
		{9, "litellm", KindThirdParty, "litellm, a third-party module not installed for the plugin", "install it in the plugin's environment"},
		{10, "langchain_core.messages", KindThirdParty, "langchain_core, a third-party module", "pip install --target PLUGIN_DIR langchain-core"},
		{22, "tiktoken", KindThirdParty, "tiktoken, a third-party module", "python3-tiktoken"},
		{31, "exo_not_installed_xyz", KindThirdParty, "exo_not_installed_xyz, a third-party module", "install it"},
		{35, "helpers.files", KindAgentZero, "helpers.files, an Agent Zero internal the compatibility layer has no stand-in for", "docs/porting.md"},
		{37, "python.helpers.log", KindMovedHelpers, "moved to helpers", "from helpers.log import ..."},
		{38, "agent", KindAgentZero, "imports Mystery from agent", "remove the name"},
		{41, "helpers.memory", KindAgentZero, "helpers.memory, an Agent Zero internal", "docs/porting.md"},
		{42, "not_installed_vectorlib_xyz", KindThirdParty, "not_installed_vectorlib_xyz, a third-party module", "install it"},
	}
	if len(got) != len(tests) {
		t.Errorf("%d problems, want %d:\n%s", len(got), len(tests), problems(got))
	}
	for _, tt := range tests {
		i := slices.IndexFunc(got, func(p Problem) bool { return p.Line == tt.line && p.Module == tt.module })
		if i < 0 {
			t.Errorf("line %d: %s not found in:\n%s", tt.line, tt.module, problems(got))
			continue
		}
		p := got[i]
		if p.File != "main.py" || p.Kind != tt.kind || !strings.Contains(p.What, tt.what) || !strings.Contains(p.Fix, tt.fix) {
			t.Errorf("line %d: %+v, want kind %s, what ~%q, fix ~%q", tt.line, p, tt.kind, tt.what, tt.fix)
		}
	}
}

// TestCheckWithoutDir: with no plugin directory (a tree being ported), the
// plugin's own modules are not there, and an Agent Zero module the layer
// provides is loadable without a file.
func TestCheckWithoutDir(t *testing.T) {
	tests := []struct {
		name, code string
		want       []string // modules reported
	}{
		{"a local module is third-party without the directory", "import mylocal\n", []string{"mylocal"}},
		{"the layer's module", "from helpers.extension import Extension, extensible\nfrom agent import Agent\n", nil},
		{"the SDK", "import exocortex\nfrom exocortex import a0compat\n", nil},
		{"__future__ and the standard library", "from __future__ import annotations\nimport asyncio, re\n", nil},
		{"installed (Debian's python3-grpcio and python3-protobuf, which the Makefile installs)", "import grpc\nfrom google.protobuf import struct_pb2\n", nil},
		{"models and initialize are Agent Zero's", "import models\nfrom initialize import initialize_agent\n", []string{"initialize", "models"}},
		{"another plugin's helpers", "from plugins._memory.helpers.memory import Memory\n", []string{"plugins._memory.helpers.memory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Env{Provided: layer}.Check(t.Context(), []Source{{File: "x.py", Code: []byte(tt.code)}})
			if err != nil {
				t.Fatal(err)
			}
			var mods []string
			for _, p := range got {
				mods = append(mods, p.Module)
			}
			slices.Sort(mods)
			if !slices.Equal(mods, tt.want) {
				t.Errorf("reported %v, want %v:\n%s", mods, tt.want, problems(got))
			}
		})
	}
}

// TestCheckNoInterpreter: without the interpreter the Agent Zero imports are
// still reported, and the error names the interpreter.
func TestCheckNoInterpreter(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "python3")
	got, err := Env{Provided: layer, Interpreter: missing}.Check(t.Context(), []Source{{File: "x.py", Code: []byte("import litellm\nfrom python.helpers import files\n")}})
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("error %v, want one naming %s", err, missing)
	}
	if len(got) != 1 || got[0].Kind != KindMovedHelpers {
		t.Errorf("got %s, want the python.helpers import only", problems(got))
	}
}

func problems(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.String() + " [" + string(p.Kind) + "]\n")
	}
	return b.String()
}
