package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/discover"
)

const testDebounce = 80 * time.Millisecond

// collector runs a watcher over dirs and collects what it reports.
type collector struct {
	ch chan Change
}

func watchDirs(t *testing.T, dirs ...discover.Dir) *collector {
	t.Helper()
	return watchDirsDebounce(t, testDebounce, dirs...)
}

// watchDirsDebounce is watchDirs with a debounce of its own, for the tests whose
// writer pauses between writes: on a loaded machine a pause can stretch past a
// short debounce, and a file that stops growing for longer than the debounce is,
// correctly, complete.
func watchDirsDebounce(t *testing.T, debounce time.Duration, dirs ...discover.Dir) *collector {
	t.Helper()
	w, err := New(Options{Dirs: dirs, Debounce: debounce})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &collector{ch: make(chan Change, 64)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.Run(ctx, func(ch Change) { c.ch <- ch })
	}()
	t.Cleanup(func() {
		cancel()
		w.Close()
		<-done
	})
	return c
}

// next waits for one change.
func (c *collector) next(t *testing.T) Change {
	t.Helper()
	select {
	case ch := <-c.ch:
		return ch
	case <-time.After(5 * time.Second):
		t.Fatal("no change reported within 5 s")
	}
	return Change{}
}

// none checks that nothing is reported for a while.
func (c *collector) none(t *testing.T) {
	t.Helper()
	select {
	case ch := <-c.ch:
		t.Fatalf("unexpected change: %v", ch)
	case <-time.After(4 * testDebounce):
	}
}

func userDir(t *testing.T) discover.Dir {
	return discover.Dir{Path: t.TempDir(), Source: discover.User}
}

func writeExec(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestGoBuildSequence plays the events `go build -o dir/bin` produces: the
// umask probe, then the binary created and written in pieces. One change is
// reported, after the last piece, for the complete file.
func TestGoBuildSequence(t *testing.T) {
	const debounce = 600 * time.Millisecond
	d := userDir(t)
	c := watchDirsDebounce(t, debounce, d)
	probe := filepath.Join(d.Path, "greeter-go-tmp-umask")
	writeExec(t, probe, "")
	os.Remove(probe)
	bin := filepath.Join(d.Path, "greeter")
	f, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, err := f.WriteString(strings.Repeat("x", 1000)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	lastWrite := time.Now()
	f.Close()
	ch := c.next(t)
	if ch.Kind != Added || ch.Name != "greeter" || ch.Candidate.Path != bin {
		t.Fatalf("change = %v, want greeter added", ch)
	}
	if fi, _ := os.Stat(bin); fi.Size() != 5000 {
		t.Fatalf("reported before the file was complete")
	}
	if ch.Last.Before(lastWrite.Add(-debounce / 2)) {
		t.Errorf("Last = %v, before the last write at %v", ch.Last, lastWrite)
	}
	c.none(t)
}

// TestRenameIntoPlace: a temporary file renamed onto the plugin is one change;
// the temporary name is never reported.
func TestRenameIntoPlace(t *testing.T) {
	d := userDir(t)
	bin := filepath.Join(d.Path, "greeter")
	writeExec(t, bin, "v1")
	c := watchDirs(t, d)
	tmp := filepath.Join(d.Path, ".greeter.tmp")
	writeExec(t, tmp, "version two")
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	if ch := c.next(t); ch.Kind != Changed || ch.Name != "greeter" {
		t.Fatalf("change = %v, want greeter changed", ch)
	}
	c.none(t)
}

func TestRemoveAndNotExecutable(t *testing.T) {
	d := userDir(t)
	bin := filepath.Join(d.Path, "greeter")
	writeExec(t, bin, "v1")
	c := watchDirs(t, d)

	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if ch := c.next(t); ch.Kind != Removed || ch.Name != "greeter" || ch.Candidate.Path != bin {
		t.Fatalf("change = %v, want greeter removed", ch)
	}
	// A file that is not executable is not a plugin, until chmod +x.
	script := filepath.Join(d.Path, "notes.py")
	if err := os.WriteFile(script, []byte("print()"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.none(t)
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	if ch := c.next(t); ch.Kind != Added || ch.Name != "notes" {
		t.Fatalf("change = %v, want notes added after chmod +x", ch)
	}
	// A mode change that does not change executability is ignored.
	if err := os.Chmod(script, 0o700); err != nil {
		t.Fatal(err)
	}
	c.none(t)
}

// TestSkippedNames: editor backups, hidden files and manifests beside the
// binaries are never plugins.
func TestSkippedNames(t *testing.T) {
	d := userDir(t)
	c := watchDirs(t, d)
	for _, name := range []string{".hidden", "greeter~", "x.swp", "README.md", "build.tmp", "bin-go-tmp-umask", "4913", "greeter___jb_tmp___", "#greeter#"} {
		writeExec(t, filepath.Join(d.Path, name), "x")
	}
	c.none(t)
}

// TestPluginSubdirectory: a plugin.json plugin changes when any of its files
// does, and not when it writes its own caches.
func TestPluginSubdirectory(t *testing.T) {
	d := userDir(t)
	pdir := filepath.Join(d.Path, "recall")
	if err := os.MkdirAll(filepath.Join(pdir, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pdir, "plugin.json"), []byte(`{"command":["python3","main.py"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pdir, "main.py"), []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := watchDirs(t, d)

	if err := os.WriteFile(filepath.Join(pdir, "pkg", "util.py"), []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ch := c.next(t); ch.Kind != Changed || ch.Name != "recall" || ch.Candidate.Path != pdir {
		t.Fatalf("change = %v, want recall changed", ch)
	}
	if err := os.MkdirAll(filepath.Join(pdir, "__pycache__"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pdir, "__pycache__", "main.cpython-312.pyc"), []byte("c"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.none(t)
	// An editor's temporaries beside the sources, written and removed, are
	// not a change either (discover.EditorTemp).
	for _, name := range []string{".main.py.swp", "4913", "main.py~", ".#main.py", "#main.py#", "main.py___jb_tmp___", "main.py.kate-swp"} {
		p := filepath.Join(pdir, name)
		if err := os.WriteFile(p, []byte("tmp"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(p)
	}
	c.none(t)

	// A new subdirectory becomes a plugin once it has an executable of its name.
	sub := filepath.Join(d.Path, "echo")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	c.none(t)
	writeExec(t, filepath.Join(sub, "echo"), "bin")
	if ch := c.next(t); ch.Kind != Added || ch.Name != "echo" || ch.Candidate.Path != filepath.Join(sub, "echo") {
		t.Fatalf("change = %v, want echo added", ch)
	}
	if err := os.RemoveAll(pdir); err != nil {
		t.Fatal(err)
	}
	// RemoveAll deletes the files before their directory: a watcher that
	// looks in between (a loaded machine stretches the moment) truthfully
	// sees the plugin changed first. What must follow is its removal.
	ch := c.next(t)
	if ch.Kind == Changed && ch.Name == "recall" {
		ch = c.next(t)
	}
	if ch.Kind != Removed || ch.Name != "recall" {
		t.Fatalf("change = %v, want recall removed", ch)
	}
}

// TestDirectoryAppearsLater: a plugin directory that does not exist when the
// watch starts is picked up when it is created.
func TestDirectoryAppearsLater(t *testing.T) {
	root := t.TempDir()
	d := discover.Dir{Path: filepath.Join(root, "home", "plugins"), Source: discover.User}
	c := watchDirs(t, d)
	if err := os.MkdirAll(d.Path, 0o755); err != nil {
		t.Fatal(err)
	}
	writeExec(t, filepath.Join(d.Path, "greeter"), "bin")
	if ch := c.next(t); ch.Kind != Added || ch.Name != "greeter" {
		t.Fatalf("change = %v, want greeter added", ch)
	}
	// And when it is deleted and created again.
	if err := os.RemoveAll(d.Path); err != nil {
		t.Fatal(err)
	}
	if ch := c.next(t); ch.Kind != Removed {
		t.Fatalf("change = %v, want greeter removed", ch)
	}
	if err := os.MkdirAll(d.Path, 0o755); err != nil {
		t.Fatal(err)
	}
	writeExec(t, filepath.Join(d.Path, "greeter"), "bin2")
	if ch := c.next(t); ch.Kind != Added || ch.Name != "greeter" {
		t.Fatalf("change = %v, want greeter added again", ch)
	}
}

// TestStillBeingWritten: a file whose size changes between the two stats is
// not reported until it is complete.
func TestStillBeingWritten(t *testing.T) {
	d := userDir(t)
	w, err := New(Options{Dirs: []discover.Dir{d}, Debounce: testDebounce, StableGap: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	bin := filepath.Join(d.Path, "greeter")
	writeExec(t, bin, "part")
	stop := make(chan struct{})
	go func() {
		// A writer that appends faster than the stable gap.
		f, _ := os.OpenFile(bin, os.O_APPEND|os.O_WRONLY, 0o755)
		defer f.Close()
		for {
			select {
			case <-stop:
				return
			default:
				_, _ = f.WriteString("y")
				time.Sleep(5 * time.Millisecond)
			}
		}
	}()
	cand, ok := w.candidate(d, "greeter")
	if !ok {
		t.Fatal("greeter not found")
	}
	if w.stable(cand) {
		t.Error("a file being appended to was taken as complete")
	}
	close(stop)
	time.Sleep(10 * time.Millisecond)
	if !w.stable(cand) {
		t.Error("a complete file was taken as incomplete")
	}
}

func TestBuild(t *testing.T) {
	src := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(src, "go.mod"), []byte("module example.com/p\n\ngo 1.26\n"), 0o644))
	must(os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644))
	dest := filepath.Join(t.TempDir(), "plugins", "p")
	if err := Build(context.Background(), BuildOptions{Src: src, Dest: dest}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dest)
	if err != nil || !discover.Executable(fi.Mode()) {
		t.Fatalf("no executable at %s: %v", dest, err)
	}
	before, _ := os.ReadFile(dest)

	must(os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {\n\tundefinedThing()\n}\n"), 0o644))
	err = Build(context.Background(), BuildOptions{Src: src, Dest: dest})
	var be *BuildError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v, want a BuildError", err)
	}
	if len(be.Diagnostics) != 1 || be.Diagnostics[0].File != "main.go" || be.Diagnostics[0].Line != 4 || !strings.Contains(be.Diagnostics[0].Message, "undefinedThing") {
		t.Fatalf("diagnostics = %v\noutput: %s", be.Diagnostics, be.Output)
	}
	if !strings.Contains(err.Error(), "main.go:4:2: undefined: undefinedThing") {
		t.Errorf("error does not show the place inline: %v", err)
	}
	after, _ := os.ReadFile(dest)
	if string(after) != string(before) {
		t.Error("a failed build changed the installed plugin")
	}
	entries, _ := os.ReadDir(filepath.Dir(dest))
	if len(entries) != 1 {
		t.Errorf("the plugin directory holds leftovers: %v", entries)
	}
}

func TestWatchSource(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan []string, 4)
	ready := make(chan struct{})
	go func() {
		close(ready)
		_ = WatchSource(ctx, src, testDebounce, func(files []string) { got <- files })
	}()
	<-ready
	time.Sleep(50 * time.Millisecond) // let the watches be set up
	for _, f := range []string{"main_test.go", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(src, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(src, "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	for _, f := range []string{"main.go", "inner/x.go", "go.mod"} {
		if err := os.WriteFile(filepath.Join(src, f), []byte("package main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case files := <-got:
		if strings.Join(files, ",") != "go.mod,inner/x.go,main.go" {
			t.Fatalf("changed = %v", files)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no rebuild asked for")
	}
}

func TestInstallDir(t *testing.T) {
	src := t.TempDir()
	for name, body := range map[string]string{"plugin.json": `{"command":["python3","main.py"]}`, "main.py": "v1", "pkg/util.py": "u", ".git/HEAD": "x", "__pycache__/main.pyc": "c"} {
		p := filepath.Join(src, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plugins := t.TempDir()
	dest := filepath.Join(plugins, "notes")
	for _, v := range []string{"v1", "v2"} {
		os.WriteFile(filepath.Join(src, "main.py"), []byte(v), 0o644)
		if err := InstallDir(src, dest); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dest, "main.py")); string(b) != v {
			t.Fatalf("installed main.py = %q, want %q", b, v)
		}
	}
	for _, gone := range []string{".git", "__pycache__"} {
		if _, err := os.Stat(filepath.Join(dest, gone)); err == nil {
			t.Errorf("%s was copied", gone)
		}
	}
	if _, err := os.Stat(filepath.Join(dest, "pkg", "util.py")); err != nil {
		t.Error("a package directory was not copied")
	}
	if entries, _ := os.ReadDir(plugins); len(entries) != 1 {
		t.Errorf("leftovers in the plugin directory: %v", entries)
	}
	res := discover.Scan([]discover.Dir{{Path: plugins, Source: discover.User}})
	if len(res.Plugins) != 1 || res.Plugins[0].Name != "notes" {
		t.Errorf("discovery finds %v", res.Plugins)
	}
}
