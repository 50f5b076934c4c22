package sdktest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// BuildPlugin compiles the plugin main package pkgPath (an import path such as
// "github.com/exocortex/exocortex/examples/hello", resolved in the test's module, or a
// directory, absolute or starting with "." and relative to the test's working
// directory, built from inside so that it may be its own module) and returns the path of a copy of the binary inside
// t.TempDir(), which the test may move, replace or delete.
//
// Each package is compiled once per test binary run; later calls copy the cached
// binary. A build failure fails the test with the compiler's output.
func BuildPlugin(t testing.TB, pkgPath string) string {
	t.Helper()
	cached, err := buildCache.build(pkgPath)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(cached))
	if err := copyFile(cached, dst); err != nil {
		t.Fatalf("copy plugin binary for %s: %v", pkgPath, err)
	}
	return dst
}

// buildCache is the one piece of package state: the binaries built by this test
// process. It is what "once per test binary run" means, so it cannot live in a test;
// its own mutex guards it.
var buildCache = &builds{entries: make(map[string]*buildEntry)}

type builds struct {
	mu      sync.Mutex
	dir     string
	entries map[string]*buildEntry
}

type buildEntry struct {
	once sync.Once
	path string
	err  error
}

func (b *builds) build(pkgPath string) (string, error) {
	key := pkgPath
	if strings.HasPrefix(pkgPath, ".") || filepath.IsAbs(pkgPath) {
		abs, err := filepath.Abs(pkgPath)
		if err != nil {
			return "", fmt.Errorf("build plugin %s: %w", pkgPath, err)
		}
		key = abs
	}
	b.mu.Lock()
	if b.dir == "" {
		dir, err := newCacheDir()
		if err != nil {
			b.mu.Unlock()
			return "", fmt.Errorf("build plugin %s: %w", pkgPath, err)
		}
		b.dir = dir
	}
	e := b.entries[key]
	if e == nil {
		e = &buildEntry{}
		b.entries[key] = e
	}
	dir := b.dir
	n := len(b.entries)
	b.mu.Unlock()

	e.once.Do(func() {
		goBin, err := goCommand()
		if err != nil {
			e.err = err
			return
		}
		out := filepath.Join(dir, strconv.Itoa(n), filepath.Base(key))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			e.err = fmt.Errorf("build plugin %s: %w", pkgPath, err)
			return
		}
		cmd := exec.Command(goBin, "build", "-o", out, key)
		if filepath.IsAbs(key) {
			// A directory builds from inside, so a plugin with its own go.mod
			// builds in its own module.
			cmd = exec.Command(goBin, "build", "-o", out, ".")
			cmd.Dir = key
		}
		if output, err := cmd.CombinedOutput(); err != nil {
			e.err = fmt.Errorf("go build %s: %v\n%s", pkgPath, err, output)
			return
		}
		e.path = out
	})
	return e.path, e.err
}

// newCacheDir makes this process's cache directory, first removing those of
// processes that have ended (the directory is named after the process id, since
// nothing runs when a test binary exits).
func newCacheDir() (string, error) {
	prefix := "exocortex-sdktest-"
	old, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
	for _, d := range old {
		pidStr, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), prefix), "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || processAlive(pid) {
			continue
		}
		_ = os.RemoveAll(d)
	}
	return os.MkdirTemp("", fmt.Sprintf("%s%d-", prefix, os.Getpid()))
}

// goCommand finds the go tool: the one on PATH, else the one of GOROOT.
func goCommand() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	if root := os.Getenv("GOROOT"); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("build plugin: the go command is not on PATH and GOROOT is not set")
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
