package watch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/exocortex/exocortex/core/discover"
)

// BuildOptions say what Build compiles and where the plugin goes.
type BuildOptions struct {
	// Src is the plugin's source directory: a main package, in its own module or
	// in the one around it. It is built from inside.
	Src string
	// Dest is the plugin's executable, e.g. $EXOCORTEX_HOME/plugins/NAME.
	Dest string
	// Go is the go command ("go" on PATH when "").
	Go string
	// Flags are extra `go build` flags, e.g. -race or -ldflags=...
	Flags []string
	// Env is added to the build's environment.
	Env []string
}

// Diagnostic is one compiler message with its place.
type Diagnostic struct {
	// File is the path as the compiler printed it, relative to Src when it was
	// inside.
	File         string
	Line, Column int
	Message      string
}

func (d Diagnostic) String() string {
	if d.Column > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Column, d.Message)
	}
	return fmt.Sprintf("%s:%d: %s", d.File, d.Line, d.Message)
}

// BuildError is a failed build. The plugin at Dest was not touched.
type BuildError struct {
	Src string
	// Diagnostics are the compiler's file:line messages; Output is everything
	// the go command printed.
	Diagnostics []Diagnostic
	Output      string
	Err         error
}

func (e *BuildError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "building %s failed (%v); the installed plugin is unchanged", e.Src, e.Err)
	if len(e.Diagnostics) > 0 {
		for _, d := range e.Diagnostics {
			b.WriteString("\n  " + d.String())
		}
	} else if out := strings.TrimSpace(e.Output); out != "" {
		b.WriteString("\n  " + strings.ReplaceAll(out, "\n", "\n  "))
	}
	return b.String()
}

func (e *BuildError) Unwrap() error { return e.Err }

// diagLine matches "path/file.go:12:5: message" and "file.py:12: message".
var diagLine = regexp.MustCompile(`^(\S+\.(?:go|py)):(\d+)(?::(\d+))?: (.*)$`)

// Build compiles the plugin in o.Src into a hidden temporary file beside o.Dest
// (".NAME.tmp", a name plugin discovery skips) and renames it onto o.Dest, so the
// plugin directory only ever holds the old binary or the complete new one. A
// failed build leaves o.Dest as it was and returns a *BuildError with the
// compiler's file:line diagnostics.
func Build(ctx context.Context, o BuildOptions) error {
	goBin := o.Go
	if goBin == "" {
		p, err := exec.LookPath("go")
		if err != nil {
			return fmt.Errorf("building %s: the go command is not on PATH: %w", o.Src, err)
		}
		goBin = p
	}
	dir := filepath.Dir(o.Dest)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("building %s: creating the plugin directory: %w", o.Src, err)
	}
	tmp := filepath.Join(dir, "."+filepath.Base(o.Dest)+".tmp")
	args := append([]string{"build", "-o", tmp}, o.Flags...)
	args = append(args, ".")
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = o.Src
	cmd.Env = append(os.Environ(), o.Env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		_ = os.Remove(tmp)
		if ctx.Err() != nil {
			return fmt.Errorf("building %s: %w", o.Src, ctx.Err())
		}
		return &BuildError{Src: o.Src, Output: string(out), Diagnostics: parseDiagnostics(o.Src, out), Err: err}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("building %s: %w", o.Src, err)
	}
	if err := os.Rename(tmp, o.Dest); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("installing %s as %s: %w", o.Src, o.Dest, err)
	}
	return nil
}

// parseDiagnostics picks the file:line messages out of go build's output.
func parseDiagnostics(src string, out []byte) []Diagnostic {
	var ds []Diagnostic
	for _, line := range strings.Split(string(bytes.TrimSpace(out)), "\n") {
		m := diagLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		d := Diagnostic{File: filepath.Clean(m[1]), Message: m[4]}
		d.Line, _ = strconv.Atoi(m[2])
		d.Column, _ = strconv.Atoi(m[3])
		if filepath.IsAbs(d.File) {
			if rel, err := filepath.Rel(src, d.File); err == nil && !strings.HasPrefix(rel, "..") {
				d.File = rel
			}
		}
		ds = append(ds, d)
	}
	return ds
}

// SourceFile reports whether a file is part of what Build compiles: Go sources
// (tests excluded), go.mod and go.sum.
func SourceFile(name string) bool {
	base := filepath.Base(name)
	if discover.EditorTemp(base) {
		return false
	}
	return (strings.HasSuffix(base, ".go") && !strings.HasSuffix(base, "_test.go")) || base == "go.mod" || base == "go.sum"
}

// PluginFile reports whether a file of a plugin's directory (a Python
// plugin's, copied whole by InstallDir) is part of it: not an editor's
// temporary file (discover.EditorTemp) nor compiled bytecode.
func PluginFile(name string) bool {
	base := filepath.Base(name)
	return !discover.EditorTemp(base) && !strings.HasSuffix(base, ".pyc")
}

// Fingerprint is a digest of the names and contents of the files under src
// that match accepts (directories WatchFiles skips left out), so a change
// that leaves them as they were (a save without an edit, a formatter
// rewriting the same text, a burst of events split by the debounce) can be
// told from a real one and is not built again.
func Fingerprint(src string, match func(name string) bool) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file removed while walking
		}
		if d.IsDir() {
			if p != src && skipSourceDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !match(p) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", src, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// WatchSource calls fn once a burst of changes to the Go sources, go.mod or
// go.sum under src (recursively, hidden directories, testdata and vendor left
// out) has been quiet for debounce. It returns when ctx ends.
func WatchSource(ctx context.Context, src string, debounce time.Duration, fn func(changed []string)) error {
	return WatchFiles(ctx, src, debounce, SourceFile, fn)
}

// WatchFiles is WatchSource for the files match accepts (by path).
func WatchFiles(ctx context.Context, src string, debounce time.Duration, match func(name string) bool, fn func(changed []string)) error {
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s: %w", src, err)
	}
	defer fsw.Close()
	addTree := func(root string) error {
		return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if p != root && skipSourceDir(d.Name()) {
				return filepath.SkipDir
			}
			if err := fsw.Add(p); err != nil {
				return fmt.Errorf("watching %s: %w", p, err)
			}
			return nil
		})
	}
	if err := addTree(src); err != nil {
		return err
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	changed := map[string]bool{}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fsw.Events:
			if !ok {
				return nil
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() && !skipSourceDir(filepath.Base(ev.Name)) {
					_ = addTree(ev.Name)
					continue
				}
			}
			if ev.Op == fsnotify.Chmod || !match(ev.Name) {
				continue
			}
			rel, err := filepath.Rel(src, ev.Name)
			if err != nil {
				rel = ev.Name
			}
			changed[rel] = true
			timer.Reset(debounce)
		case err, ok := <-fsw.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				changed["(events lost)"] = true
				timer.Reset(debounce)
			}
		case <-timer.C:
			list := make([]string, 0, len(changed))
			for f := range changed {
				list = append(list, f)
			}
			clear(changed)
			slices.Sort(list)
			fn(list)
		}
	}
}

func skipSourceDir(name string) bool {
	return strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || name == "node_modules" || name == "__pycache__"
}

// InstallDir copies a plugin directory (a Python plugin with its plugin.json,
// say) to dest through a hidden temporary copy beside it and two renames, so
// the plugin directory only ever holds the old copy or the complete new one.
// Hidden files, caches and dest itself (when it is inside src) are left out.
func InstallDir(src, dest string) error {
	parent := filepath.Dir(dest)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("installing %s: %w", src, err)
	}
	base := filepath.Base(dest)
	tmp := filepath.Join(parent, "."+base+".tmp")
	old := filepath.Join(parent, "."+base+".old")
	_ = os.RemoveAll(tmp)
	_ = os.RemoveAll(old)
	absDest, _ := filepath.Abs(dest)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if p != src && (ignoredInside(d.Name()) || skipSourceDir(d.Name())) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if abs, _ := filepath.Abs(p); abs == absDest {
			return filepath.SkipDir
		}
		out := filepath.Join(tmp, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, fi.Mode().Perm())
	})
	if err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("installing %s into %s: %w", src, dest, err)
	}
	if _, err := os.Lstat(dest); err == nil {
		if err := os.Rename(dest, old); err != nil {
			_ = os.RemoveAll(tmp)
			return fmt.Errorf("installing %s: moving the old copy aside: %w", dest, err)
		}
	}
	if err := os.Rename(tmp, dest); err != nil {
		_ = os.Rename(old, dest)
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("installing %s: %w", dest, err)
	}
	return os.RemoveAll(old)
}

// pySyntaxCheck parses every file named on its command line and prints each
// syntax error as "file:line:col: message".
const pySyntaxCheck = `import ast, sys
bad = 0
for f in sys.argv[1:]:
    try:
        with open(f, encoding="utf-8") as fh:
            ast.parse(fh.read(), f)
    except SyntaxError as e:
        print(f"{e.filename}:{e.lineno}:{e.offset or 0}: {e.msg}")
        bad = 1
sys.exit(bad)
`

// InstallPython checks that the Python files of the plugin in src parse (with
// interpreter), then installs the directory at dest with InstallDir. A syntax
// error is a *BuildError with its file:line, and dest is left as it was.
func InstallPython(ctx context.Context, src, dest, interpreter string) error {
	var files []string
	_ = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p != src && d.IsDir() && (skipSourceDir(d.Name()) || ignoredInside(d.Name()) || d.Name() == "exocortex") {
			return filepath.SkipDir // the SDK's own copy is not the plugin's code
		}
		if !d.IsDir() && strings.HasSuffix(p, ".py") {
			rel, _ := filepath.Rel(src, p)
			files = append(files, rel)
		}
		return nil
	})
	if len(files) > 0 {
		cmd := exec.CommandContext(ctx, interpreter, append([]string{"-B", "-c", pySyntaxCheck}, files...)...)
		cmd.Dir = src
		out, err := cmd.CombinedOutput()
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("checking %s: %w", src, ctx.Err())
			}
			return &BuildError{Src: src, Output: string(out), Diagnostics: parseDiagnostics(src, out), Err: err}
		}
	}
	return InstallDir(src, dest)
}
