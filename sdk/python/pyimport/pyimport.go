// Package pyimport finds the imports of a Python plugin's files that the plugin
// cannot load, each with its file, line and fix. It is the one implementation
// behind two reports: `exocortex plugins port` (scaffold/a0port), which names
// them in the porting report of an Agent Zero tree, and `exocortex lint`, which
// repeats them for a ported plugin and finds the same in any Python plugin.
//
// An import is loadable when its module is in the standard library, is the
// SDK (exocortex), is one of the plugin's own (a file or package in the
// plugin's directory, which Python puts first on the import path), is an
// Agent Zero module the compatibility layer provides a stand-in for (asked of
// Env.Provided: the list lives with the port, which writes the stand-ins), or
// is installed where the plugin's interpreter (python.Interpreter) finds it.
// What is left is one of three kinds, each with its own fix:
//
//	KindMovedHelpers  python.helpers, which Agent Zero v1.7 moved to helpers (seam 10)
//	KindAgentZero     an Agent Zero internal the layer has no stand-in for
//	KindThirdParty    a third-party module not installed for the plugin (litellm, openai, ...)
//
// Imports are read from the text (Parse) without running the file, the
// statements and the dynamic imports with a literal name
// (importlib.import_module("helpers.x"), import_module(...), __import__(...));
// a name computed at run time cannot be read and is left out. An import
// inside a try block whose except catches ImportError (or anything broader),
// or under `if TYPE_CHECKING:`, cannot fail the file and is left out. Whether a
// module is in the standard library or installed is asked of the interpreter,
// once per Check for all names (importlib.util.find_spec, which imports
// nothing for a top-level name).
package pyimport

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/exocortex/exocortex/sdk/python"
)

// Kind is why an import cannot be loaded.
type Kind string

const (
	// KindMovedHelpers: python.helpers, which Agent Zero v1.7 moved to helpers
	// (seam 10 of the seed's table).
	KindMovedHelpers Kind = "python_helpers"
	// KindAgentZero: an Agent Zero module (helpers, agent, models, initialize,
	// plugins, python) the compatibility layer has no stand-in for.
	KindAgentZero Kind = "agent_zero"
	// KindThirdParty: a module that is not in the standard library, not the
	// plugin's own and not installed where the plugin's interpreter finds it.
	KindThirdParty Kind = "third_party"
)

// agentZeroRoots are the top-level packages of Agent Zero's own modules: its
// root modules and folders (extensions and tools are packages of its tree, and
// v1.7 installs plugins under usr/plugins/).
var agentZeroRoots = map[string]bool{"helpers": true, "agent": true, "models": true, "initialize": true, "plugins": true, "python": true,
	"extensions": true, "tools": true, "usr": true, "api": true}

// IsAgentZero reports whether module is one of Agent Zero's own (its first
// component is helpers, agent, models, initialize, plugins, python,
// extensions, tools, usr or api).
func IsAgentZero(module string) bool {
	top, _, _ := strings.Cut(module, ".")
	return agentZeroRoots[top]
}

// Import is one module an import statement names.
type Import struct {
	// Line is the statement's first line (1-based).
	Line int
	// Module is the module, dotted; for `from helpers import a, b` (Agent
	// Zero's helpers package, whose names are modules) there is one Import per
	// name: helpers.a, helpers.b.
	Module string
	// Names are what `from Module import ...` takes from it (nil for `import
	// Module` and for the expanded helpers imports).
	Names []string
	// Relative is true for `from . import x` and `from .m import x`: the
	// file's own package, never checked.
	Relative bool
	// Guarded is true inside a try block whose except catches ImportError (or
	// ModuleNotFoundError, Exception, BaseException, or everything), or under
	// `if TYPE_CHECKING:`: a failure there does not fail the file.
	Guarded bool
	// Dynamic is true for importlib.import_module("name") and
	// __import__("name") with a literal name.
	Dynamic bool
	// InFunction is true inside a def's body: the import runs when the
	// function is called, not when the module loads, so a failure there fails
	// that call, not the file's load.
	InFunction bool
}

var (
	importRE = regexp.MustCompile(`^import\s+(.+)$`)
	fromRE   = regexp.MustCompile(`^from\s+(\.*)([\w.]*)\s+import\s+(.+)$`)
	tryRE    = regexp.MustCompile(`^try\s*:`)
	defRE    = regexp.MustCompile(`^(?:async\s+)?def\s`)
	exceptRE = regexp.MustCompile(`^except\b\s*(.*?)\s*(?:as\s+\w+\s*)?:`)
	typeChk  = regexp.MustCompile(`^if\s+(?:typing\.)?TYPE_CHECKING\s*:`)
	broadRE  = regexp.MustCompile(`\b(?:ImportError|ModuleNotFoundError|Exception|BaseException)\b`)
	// A dynamic import whose first argument is about to start: its string is
	// kept by stripStrings; dynamicRE then reads the name.
	dynOpenRE = regexp.MustCompile(`\b(?:import_module|__import__)\(\s*$`)
	dynamicRE = regexp.MustCompile(`\b(?:import_module|__import__)\(\s*["'](\.*)([\w.]*)["']\s*(?:[,)]|$)`)
)

// line is a logical line of Python: its first physical line, its indentation
// and its text with comments removed and continuations joined.
type line struct {
	n      int
	indent int
	text   string
}

// logicalLines splits code into logical lines, leaving out those inside
// triple-quoted strings, comments and blank lines; a statement continued in
// brackets or after a backslash is joined onto its first line.
func logicalLines(code []byte) []line {
	sc := bufio.NewScanner(bytes.NewReader(code))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	var out []line
	var cur *line
	depth := 0
	cont := false
	inString := "" // the triple quote a docstring was opened with
	for n := 1; sc.Scan(); n++ {
		raw := sc.Text()
		text := raw
		if inString != "" {
			i := strings.Index(text, inString)
			if i < 0 {
				continue
			}
			text = text[i+3:]
			inString = ""
			if cur == nil && strings.TrimSpace(text) == "" {
				continue
			}
		}
		prev := ""
		if cur != nil && (depth > 0 || cont) {
			prev = cur.text
		}
		text, inString = stripStrings(prev, text)
		if cur != nil && (depth > 0 || cont) {
			cur.text += " " + strings.TrimSpace(text)
		} else {
			t := strings.TrimSpace(text)
			if t == "" {
				continue
			}
			out = append(out, line{n: n, indent: len(raw) - len(strings.TrimLeft(raw, " \t")), text: t})
			cur = &out[len(out)-1]
		}
		depth += strings.Count(text, "(") + strings.Count(text, "[") + strings.Count(text, "{") -
			strings.Count(text, ")") - strings.Count(text, "]") - strings.Count(text, "}")
		depth = max(depth, 0)
		cont = strings.HasSuffix(strings.TrimRight(text, " \t"), "\\")
		if cont {
			cur.text = strings.TrimSuffix(strings.TrimRight(cur.text, " \t"), "\\")
		}
	}
	return out
}

// stripStrings removes a comment and the contents of string literals from one
// physical line (an import statement has no strings; other statements only
// need their brackets counted), except the first argument of a dynamic import
// (import_module("x"), __import__("x")), and returns the triple quote left
// open, if any.
//
// prev is the logical line so far when s continues it.
func stripStrings(prev, s string) (string, string) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '#':
			return b.String(), ""
		case c == '"' || c == '\'':
			q := string(c)
			if strings.HasPrefix(s[i:], strings.Repeat(q, 3)) {
				q = strings.Repeat(q, 3)
			}
			end := strings.Index(s[i+len(q):], q)
			if end < 0 {
				if len(q) == 3 {
					return b.String(), q
				}
				return b.String(), "" // an unclosed quote: the rest is a string
			}
			if lit := s[i+len(q) : i+len(q)+end]; dynOpenRE.MatchString(prev+" "+b.String()) && !strings.ContainsAny(lit, `"'()[]{}`) {
				b.WriteString(`"` + lit + `"`)
				i += len(q) + end + len(q) - 1
				continue
			}
			b.WriteString(`""`)
			i += len(q) + end + len(q) - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), ""
}

// Parse returns the imports of a Python file, in order.
func Parse(code []byte) []Import {
	lines := logicalLines(code)
	guarded := make([]bool, len(lines))
	inFn := make([]bool, len(lines))
	for i, l := range lines {
		if defRE.MatchString(l.text) {
			for j := i + 1; j < len(lines) && lines[j].indent > l.indent; j++ {
				inFn[j] = true
			}
		}
		switch {
		case typeChk.MatchString(l.text):
			for j := i + 1; j < len(lines) && lines[j].indent > l.indent; j++ {
				guarded[j] = true
			}
		case tryRE.MatchString(l.text):
			// The block's lines, then its except clauses at the try's indentation.
			j := i + 1
			for j < len(lines) && lines[j].indent > l.indent {
				j++
			}
			catches := false
			for k := j; k < len(lines) && lines[k].indent == l.indent; k++ {
				m := exceptRE.FindStringSubmatch(lines[k].text)
				if m == nil {
					if !strings.HasPrefix(lines[k].text, "except") {
						break
					}
					continue
				}
				if m[1] == "" || broadRE.MatchString(m[1]) {
					catches = true
				}
				for k+1 < len(lines) && lines[k+1].indent > l.indent {
					k++
				}
			}
			if catches {
				for k := i + 1; k < j; k++ {
					guarded[k] = true
				}
			}
		}
	}
	var out []Import
	for i, l := range lines {
		// A statement after a colon on one line: "try: import x".
		text := l.text
		for _, m := range dynamicRE.FindAllStringSubmatch(text, -1) {
			if m[1]+m[2] != "" {
				out = append(out, Import{Line: l.n, Module: m[1] + m[2], Relative: m[1] != "", Guarded: guarded[i], Dynamic: true, InFunction: inFn[i]})
			}
		}
		if m := importRE.FindStringSubmatch(text); m != nil {
			for _, part := range strings.Split(m[1], ",") {
				mod := strings.TrimSpace(strings.Split(strings.TrimSpace(part), " as ")[0])
				if mod != "" {
					out = append(out, Import{Line: l.n, Module: mod, Guarded: guarded[i], InFunction: inFn[i]})
				}
			}
			continue
		}
		m := fromRE.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		names := splitNames(m[3])
		switch {
		case m[1] != "":
			out = append(out, Import{Line: l.n, Module: m[1] + m[2], Names: names, Relative: true, Guarded: guarded[i], InFunction: inFn[i]})
		case m[2] == "helpers":
			// Agent Zero's helpers is a package of modules, imported by name.
			for _, n := range names {
				out = append(out, Import{Line: l.n, Module: "helpers." + n, Guarded: guarded[i], InFunction: inFn[i]})
			}
		default:
			out = append(out, Import{Line: l.n, Module: m[2], Names: names, Guarded: guarded[i], InFunction: inFn[i]})
		}
	}
	return out
}

func splitNames(list string) []string {
	var out []string
	for _, n := range strings.Split(strings.Trim(strings.TrimSpace(list), "()"), ",") {
		n = strings.TrimSpace(strings.Split(strings.TrimSpace(n), " as ")[0])
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// Source is one file to check: its name as the findings give it and its text.
type Source struct {
	File string
	Code []byte
}

// Problem is an import the plugin cannot load.
type Problem struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Module string `json:"module"`
	Kind   Kind   `json:"kind"`
	What   string `json:"what"`
	Fix    string `json:"fix"`
}

// String is the problem as one line: file:line: what; fix.
func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s; fix: %s", p.File, p.Line, p.What, p.Fix)
}

// Env is where the files' imports are resolved.
type Env struct {
	// Dir is the plugin's directory, whose modules are the plugin's own; ""
	// when there is none yet (a tree being ported).
	Dir string
	// Provided reports whether the compatibility layer provides the Agent
	// Zero module, and which of names (from module import names) it does not;
	// nil: it provides none.
	Provided func(module string, names []string) (missing []string, ok bool)
	// Interpreter answers which modules are in the standard library or
	// installed; python.Interpreter when "".
	Interpreter string
}

// distributions are the pip distributions, and Debian's packages, of the
// modules whose import name is not their distribution's name (bs4 is
// beautifulsoup4 on pip, python3-bs4 in Debian); any other module is
// distribution <module> and package python3-<module> ("_" as "-").
var distributions = map[string][2]string{
	"bs4": {"beautifulsoup4", "python3-bs4"}, "yaml": {"PyYAML", "python3-yaml"}, "PIL": {"Pillow", "python3-pil"},
	"cv2": {"opencv-python", "python3-opencv"}, "sklearn": {"scikit-learn", "python3-sklearn"},
	"dateutil": {"python-dateutil", "python3-dateutil"}, "dotenv": {"python-dotenv", "python3-dotenv"},
	"docx": {"python-docx", "python3-docx"}, "fitz": {"PyMuPDF", "python3-fitz"}, "Crypto": {"pycryptodome", "python3-pycryptodome"},
	"jwt": {"PyJWT", "python3-jwt"}, "magic": {"python-magic", "python3-magic"}, "serial": {"pyserial", "python3-serial"},
	"git": {"GitPython", "python3-git"}, "imapclient": {"IMAPClient", "python3-imapclient"},
	"telegram": {"python-telegram-bot", "python3-python-telegram-bot"}, "google": {"protobuf", "python3-protobuf"},
	"attr": {"attrs", "python3-attr"}, "langchain_core": {"langchain-core", "python3-langchain-core"},
	"faiss": {"faiss-cpu", "python3-faiss"}, "duckduckgo_search": {"duckduckgo-search", "python3-duckduckgo-search"},
}

// sameNameElsewhere are the modules whose Debian package of the usual name
// installs another distribution under the same import name: advising it would
// install the wrong library (python3-crontab is python-crontab, whose crontab
// module is not the crontab distribution Agent Zero pins).
var sameNameElsewhere = map[string]string{
	"crontab": "python-crontab",
}

// Distribution returns the pip distribution and Debian package names of a
// third-party module (its top-level name counts).
func Distribution(module string) (pip, debian string) {
	top, _, _ := strings.Cut(module, ".")
	if d, ok := distributions[top]; ok {
		return d[0], d[1]
	}
	return top, "python3-" + strings.ReplaceAll(strings.ToLower(top), "_", "-")
}

// InstallFix is how a third-party module is installed for a Python plugin:
// where its interpreter finds it (see sdk/python/README.md). debian says
// whether Debian has its package, when known (Unknown: not asked).
func InstallFix(module string, debian Availability) string {
	pip, deb := Distribution(module)
	where := fmt.Sprintf("install it in the plugin's environment, where %s finds it: ", python.Interpreter)
	target := fmt.Sprintf("`pip install --target PLUGIN_DIR %s` (the plugin's directory is first on its import path)", pip)
	top, _, _ := strings.Cut(module, ".")
	if other, ok := sameNameElsewhere[top]; ok {
		return where + fmt.Sprintf("%s (not Debian's %s: it is %s, another library under the same module name); or rewrite the use against the SDK", target, deb, other)
	}
	switch debian {
	case Available:
		return where + fmt.Sprintf("apt-get install %s (Debian's package), or %s; or rewrite the use against the SDK", deb, target)
	case Absent:
		return where + fmt.Sprintf("%s (Debian has no %s); or rewrite the use against the SDK", target, deb)
	}
	return where + fmt.Sprintf("Debian's %s package if there is one (apt-get install %s), or %s; or rewrite the use against the SDK", deb, deb, target)
}

// Availability is whether Debian has a module's package.
type Availability int

// The answers of apt-cache (Unknown: not asked, or it could not say).
const (
	Unknown Availability = iota
	Available
	Absent
)

// Check returns the imports of files that the plugin cannot load, by file and
// line. When the interpreter cannot be asked, the third-party imports cannot be
// told from installed ones: the Agent Zero ones are still returned, with an
// error naming the interpreter.
func (e Env) Check(ctx context.Context, files []Source) ([]Problem, error) {
	type pending struct {
		file string
		imp  Import
	}
	var out []Problem
	var ask []pending
	tops := map[string]bool{}
	for _, f := range files {
		for _, imp := range Parse(f.Code) {
			if imp.Relative || imp.Guarded {
				continue
			}
			top, _, _ := strings.Cut(imp.Module, ".")
			switch {
			case top == python.Package || top == "__future__":
				continue
			case e.local(imp.Module):
				continue
			case strings.HasPrefix(imp.Module+".", "python.helpers."):
				sub := strings.TrimPrefix(strings.TrimPrefix(imp.Module, "python.helpers"), ".")
				use := "from helpers." + sub + " import ..."
				if sub == "" {
					use = "from helpers import ..."
				}
				out = append(out, Problem{File: f.File, Line: imp.Line, Module: imp.Module, Kind: KindMovedHelpers,
					What: "imports python.helpers, which Agent Zero v1.7 moved to helpers: the file fails to load, silently",
					Fix:  "use `" + use + "`"})
			case agentZeroRoots[top]:
				missing, ok := []string(nil), false
				if e.Provided != nil {
					missing, ok = e.Provided(imp.Module, imp.Names)
				}
				switch {
				case !ok:
					out = append(out, Problem{File: f.File, Line: imp.Line, Module: imp.Module, Kind: KindAgentZero,
						What: fmt.Sprintf("imports %s, an Agent Zero internal the compatibility layer has no stand-in for: the file cannot load", imp.Module),
						Fix:  "rewrite the use against the SDK (docs/porting.md maps Agent Zero's internals to Exocortex's), or remove the import"})
				case len(missing) > 0:
					out = append(out, Problem{File: f.File, Line: imp.Line, Module: imp.Module, Kind: KindAgentZero,
						What: fmt.Sprintf("imports %s from %s, which the compatibility layer's %s does not provide: the file cannot load", strings.Join(missing, ", "), imp.Module, imp.Module),
						Fix:  "rewrite the use against the SDK (docs/porting.md maps Agent Zero's internals to Exocortex's), or remove the name from the import"})
				}
			case e.shimmed(imp.Module, imp.Names):
				// A third-party module the layer stands in for
				// (langchain_core.messages): the shim is on the plugin's path.
				continue
			default:
				ask = append(ask, pending{f.File, imp})
				tops[top] = true
			}
		}
	}
	var err error
	if len(ask) > 0 {
		var found map[string]bool
		found, err = e.available(ctx, tops)
		if err == nil {
			for _, p := range ask {
				top, _, _ := strings.Cut(p.imp.Module, ".")
				if found[top] {
					continue
				}
				out = append(out, Problem{File: p.file, Line: p.imp.Line, Module: p.imp.Module, Kind: KindThirdParty,
					What: fmt.Sprintf("imports %s, a third-party module not installed for the plugin (not in the standard library, not the plugin's own): the file cannot load", top),
					Fix:  InstallFix(top, Unknown)})
			}
		}
	}
	slices.SortFunc(out, func(a, b Problem) int {
		return cmp.Or(strings.Compare(a.File, b.File), a.Line-b.Line, strings.Compare(a.Module, b.Module))
	})
	return out, err
}

// local reports whether module is the plugin's own: a module or package in
// Dir (a package's submodule as a file or package in it; below a plain module,
// the rest are its attributes).
func (e Env) local(module string) bool {
	if e.Dir == "" {
		return false
	}
	dir := e.Dir
	parts := strings.Split(module, ".")
	for i, p := range parts {
		if fi, err := os.Stat(filepath.Join(dir, p+".py")); err == nil && !fi.IsDir() {
			return true
		}
		fi, err := os.Stat(filepath.Join(dir, p))
		if err != nil || !fi.IsDir() {
			// A name in a package's __init__ is not a module: only the first
			// component must be a file here for a module that is not Agent
			// Zero's (whose stand-ins are files).
			return i > 0 && !agentZeroRoots[parts[0]]
		}
		dir = filepath.Join(dir, p)
	}
	return true
}

// resolveScript reads top-level module names, one per line, and prints a JSON
// object: name -> true when the name is in the standard library or installed
// where this interpreter finds it (its own path, without the current
// directory). find_spec of a top-level name imports nothing.
const resolveScript = `import importlib.util, json, os, sys
cwd = os.getcwd()
sys.path[:] = [p for p in sys.path if p not in ("", cwd)]
std = set(getattr(sys, "stdlib_module_names", ())) | set(sys.builtin_module_names)
out = {}
for name in sys.stdin.read().split():
    try:
        out[name] = name in std or importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        out[name] = False
print(json.dumps(out))
`

// available asks the interpreter which of names are in the standard library
// or installed.
func (e Env) available(ctx context.Context, names map[string]bool) (map[string]bool, error) {
	interp := cmp.Or(e.Interpreter, python.Interpreter)
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	slices.Sort(list)
	cmd := exec.CommandContext(ctx, interp, "-c", resolveScript)
	cmd.Dir = os.TempDir()
	cmd.Stdin = strings.NewReader(strings.Join(list, "\n"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("asking %s which imports are installed: %w (%s): third-party imports are not checked; install Debian's python3", interp, err, strings.TrimSpace(stderr.String()))
	}
	found := map[string]bool{}
	if err := json.Unmarshal(out, &found); err != nil {
		return nil, fmt.Errorf("asking %s which imports are installed: %w", interp, err)
	}
	return found, nil
}

// shimmed reports whether Provided serves module with every name imported.
func (e Env) shimmed(module string, names []string) bool {
	if e.Provided == nil {
		return false
	}
	missing, ok := e.Provided(module, names)
	return ok && len(missing) == 0
}
