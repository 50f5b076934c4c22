package a0port

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// Options are the choices of a port beyond the tree and the plugin's name.
type Options struct {
	// Python is the interpreter the ported plugin runs on (its plugin.json
	// command); "" is the SDK's (python.Interpreter). config.yaml's python:
	// names it for `plugins port`, --python for one port. The tree is checked
	// against it: the syntax, the imports, and the names a file takes from
	// the standard library that are newer than it (needsPython).
	Python string
}

// pyVersion is a Python version, major and minor.
type pyVersion struct{ major, minor int }

func (v pyVersion) String() string { return fmt.Sprintf("%d.%d", v.major, v.minor) }
func (v pyVersion) less(w pyVersion) bool {
	return v.major < w.major || v.major == w.major && v.minor < w.minor
}

// interpreterVersion asks the interpreter for its version.
func interpreterVersion(ctx context.Context, python string) (pyVersion, error) {
	out, err := exec.CommandContext(ctx, python, "-I", "-S", "-c", "import sys; print(sys.version_info[0], sys.version_info[1])").Output()
	if err != nil {
		return pyVersion{}, fmt.Errorf("asking %s for its version: %w (name an installed interpreter with python: in config.yaml or --python)", python, err)
	}
	var v pyVersion
	if _, err := fmt.Sscan(string(out), &v.major, &v.minor); err != nil {
		return pyVersion{}, fmt.Errorf("reading the version %s answered (%q): %w", python, out, err)
	}
	return v, nil
}

// newNames are names of the standard library a file may import that appeared
// in a later Python than 3.9, with the version that has them (from the
// Python documentation's "Added in version" notes).
var newNames = map[string]pyVersion{
	"typing.override": {3, 12}, "typing.TypeAliasType": {3, 12}, "typing.get_protocol_members": {3, 13},
	"typing.ReadOnly": {3, 13}, "typing.TypeIs": {3, 13}, "typing.NoDefault": {3, 13},
	"typing.Self": {3, 11}, "typing.LiteralString": {3, 11}, "typing.Never": {3, 11}, "typing.assert_never": {3, 11},
	"typing.reveal_type": {3, 11}, "typing.Required": {3, 11}, "typing.NotRequired": {3, 11}, "typing.TypeVarTuple": {3, 11},
	"typing.Unpack": {3, 11}, "typing.dataclass_transform": {3, 11}, "typing.assert_type": {3, 11},
	"typing.TypeAlias": {3, 10}, "typing.ParamSpec": {3, 10}, "typing.Concatenate": {3, 10}, "typing.TypeGuard": {3, 10},
	"warnings.deprecated": {3, 13}, "itertools.batched": {3, 12}, "datetime.UTC": {3, 11},
	"tomllib": {3, 11}, "asyncio.TaskGroup": {3, 11}, "asyncio.timeout": {3, 11}, "enum.StrEnum": {3, 11},
	"contextlib.chdir": {3, 11}, "pathlib.UnsupportedOperation": {3, 13},
}

var fromImportRE = regexp.MustCompile(`^\s*from\s+([\w.]+)\s+import\s+\(?([^)#]+)`)
var importRE = regexp.MustCompile(`^\s*import\s+([\w.]+)`)

// needsPython returns the newest Python a file's imports of the standard
// library need, with the line and the name, when it is newer than have.
func needsPython(code []byte, have pyVersion) (need pyVersion, line int, name string) {
	sc := bufio.NewScanner(bytes.NewReader(code))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		var names []string
		if m := fromImportRE.FindStringSubmatch(text); m != nil {
			for _, part := range strings.Split(m[2], ",") {
				if f := strings.Fields(part); len(f) > 0 {
					names = append(names, m[1]+"."+f[0])
				}
			}
		} else if m := importRE.FindStringSubmatch(text); m != nil {
			names = append(names, m[1])
		}
		for _, nm := range names {
			if v, ok := newNames[nm]; ok && have.less(v) && need.less(v) {
				need, line, name = v, n, nm
			}
		}
	}
	return need, line, name
}

// checkPython notes, for each served file, the Python its imports need when
// the plugin's interpreter is older: the file cannot load on it.
func (r *Report) checkPython(ctx context.Context, files []portFile) {
	have, err := interpreterVersion(ctx, r.Python)
	if err != nil {
		r.PythonVersion = err.Error()
		return
	}
	r.PythonVersion = have.String()
	for _, pf := range files {
		if !pf.served {
			continue
		}
		need, line, name := needsPython(pf.code, have)
		if line == 0 {
			continue
		}
		for i := range r.Files {
			f := &r.Files[i]
			if f.Source != pf.source {
				continue
			}
			f.Status = statusNeedsHand
			f.Notes = append(f.Notes, fmt.Sprintf("line %d: %s needs Python %s; the plugin runs on %s (Python %s): name a newer interpreter with python: in config.yaml or --python, and port again", line, name, need, r.Python, have))
			f.cannotLoad("line " + strconv.Itoa(line) + " needs Python " + need.String())
		}
	}
}
