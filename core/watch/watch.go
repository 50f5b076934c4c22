// Package watch notices plugins changing on disk, for hot reload, and rebuilds a
// plugin's source when it changes, for `exocortex dev`.
//
// A Watcher watches plugin directories (the directories, never the files, with
// fsnotify; inotify is not recursive, so each plugin subdirectory is watched too)
// and reports plugins that appear, change or disappear, by the rule of package
// discover: an executable directly in the directory, or a subdirectory with a
// plugin.json or an executable of its own name.
//
// Replacing a binary is never one event. `go build -o dir/bin` creates a
// bin-go-tmp-umask probe, removes it, creates bin and writes it in several pieces;
// a temporary file and `mv` give Create, Write, Rename of the temporary name and a
// Create of the final one; `install` removes the file and changes its mode. So the
// watcher waits until a plugin's events have stopped for Debounce (250 ms), skips
// the temporary names discover.Skipped skips, ignores mode changes that do not
// change whether the file is executable, and then checks that the file is complete:
// its size and modification time agree across two stats a moment apart, and it is
// executable. Only then does it report the change, once per burst.
//
// Build (build.go) is the other half of the developer loop: it compiles a plugin's
// source next to its destination and renames the binary into place, so a watcher
// never sees a half-written plugin.
package watch

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/exocortex/exocortex/core/discover"
)

// Defaults of Options.
const (
	DefaultDebounce  = 250 * time.Millisecond
	DefaultStableGap = 20 * time.Millisecond
)

// Kind says what happened to a plugin.
type Kind int

const (
	// Added: a plugin appeared.
	Added Kind = iota + 1
	// Changed: a plugin's executable or files changed.
	Changed
	// Removed: a plugin disappeared (deleted, renamed away, or no longer executable).
	Removed
)

func (k Kind) String() string {
	switch k {
	case Added:
		return "added"
	case Changed:
		return "changed"
	case Removed:
		return "removed"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Change is one plugin that appeared, changed or disappeared in one directory.
type Change struct {
	Kind Kind
	// Name is the plugin's name by discover's rule.
	Name string
	// Candidate is what discover finds now (Added, Changed), or what it found
	// before (Removed).
	Candidate discover.Candidate
	// Last is the time of the last file-system event of the burst that led to the
	// change: the moment the plugin was last written.
	Last time.Time
}

func (c Change) String() string {
	return fmt.Sprintf("%s %s (%s)", c.Kind, c.Name, c.Candidate.Path)
}

// Options configure a Watcher.
type Options struct {
	// Dirs are the plugin directories. A directory that does not exist yet is
	// picked up when it is created.
	Dirs []discover.Dir
	// Debounce is how long a plugin's events must have stopped before it is
	// looked at (DefaultDebounce when 0).
	Debounce time.Duration
	// StableGap is the pause between the two stats that confirm a file is no
	// longer being written (DefaultStableGap when 0).
	StableGap time.Duration
	Logger    *slog.Logger
}

// Watcher reports plugin changes in a set of plugin directories.
type Watcher struct {
	opts Options
	log  *slog.Logger
	fsw  *fsnotify.Watcher

	// Owned by the Run goroutine (and New before Run starts).
	dirs    map[string]*dirState // by plugin directory path
	roles   map[string]role      // by watched path
	missing map[string]bool      // plugin directories that do not exist yet

	mu      sync.Mutex // guards due and timers; the debounce timers fire on their own goroutines
	timers  map[entryKey]*time.Timer
	last    map[entryKey]time.Time
	due     map[entryKey]bool
	wake    chan struct{}
	closeMu sync.Once
}

// dirState is what the watcher knows about one plugin directory.
type dirState struct {
	dir   discover.Dir
	known map[string]known // by entry name in the directory
}

// known is a plugin as last reported.
type known struct {
	cand  discover.Candidate
	stamp string
}

// entryKey is one top-level entry of a plugin directory: the unit of debouncing.
type entryKey struct{ dir, name string }

// role says what a watched path is to the watcher.
type role struct {
	kind   int    // rolePluginDir, roleInside, roleAncestor
	plugin string // the plugin directory it belongs to
	entry  string // roleInside: the top-level entry it is in
}

const (
	rolePluginDir = iota
	roleInside
	roleAncestor
)

// New sets up the watches and takes stock of the plugins present, which are not
// reported (the host has loaded them already). Call Run to receive changes.
func New(opts Options) (*Watcher, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.StableGap <= 0 {
		opts.StableGap = DefaultStableGap
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching plugin directories: %w", err)
	}
	w := &Watcher{
		opts: opts, log: opts.Logger, fsw: fsw,
		dirs: map[string]*dirState{}, roles: map[string]role{}, missing: map[string]bool{},
		timers: map[entryKey]*time.Timer{}, last: map[entryKey]time.Time{}, due: map[entryKey]bool{},
		wake: make(chan struct{}, 1),
	}
	for _, d := range opts.Dirs {
		d.Path = filepath.Clean(d.Path)
		if _, dup := w.dirs[d.Path]; dup {
			continue
		}
		w.dirs[d.Path] = &dirState{dir: d, known: map[string]known{}}
		if err := w.attach(d.Path, false); err != nil {
			fsw.Close()
			return nil, err
		}
	}
	return w, nil
}

// Close releases the watches. Run returns when it notices.
func (w *Watcher) Close() error {
	var err error
	w.closeMu.Do(func() {
		w.mu.Lock()
		for _, t := range w.timers {
			t.Stop()
		}
		w.mu.Unlock()
		err = w.fsw.Close()
	})
	return err
}

// attach watches a plugin directory and its plugin subdirectories, and records
// its plugins; a directory that does not exist is watched for through its
// nearest existing ancestor. When report is set, the plugins found are debounced
// and reported as added (the directory appeared while running).
func (w *Watcher) attach(path string, report bool) error {
	st := w.dirs[path]
	info, err := os.Stat(path)
	if err != nil || !info.IsDir() {
		w.missing[path] = true
		if err := w.watchAncestor(path); err != nil {
			return err
		}
		// Created between the stat and the watch, its Create event went to no
		// one: look again.
		if info, err := os.Stat(path); err == nil && info.IsDir() {
			return w.attach(path, report)
		}
		return nil
	}
	if err := w.fsw.Add(path); err != nil {
		return fmt.Errorf("watching plugin directory %s: %w", path, err)
	}
	delete(w.missing, path)
	w.roles[path] = role{kind: rolePluginDir, plugin: path}
	entries, _ := os.ReadDir(path)
	for _, e := range entries {
		if discover.Skipped(e.Name()) {
			continue
		}
		full := filepath.Join(path, e.Name())
		if fi, err := os.Stat(full); err == nil && fi.IsDir() {
			w.watchInside(path, e.Name(), full, 0)
		}
		if report {
			w.touch(entryKey{path, e.Name()}, time.Now())
		}
	}
	if !report {
		for _, c := range discover.Scan([]discover.Dir{st.dir}).Plugins {
			name := entryOf(path, c.Path)
			st.known[name] = known{cand: c, stamp: stampOf(c)}
		}
	}
	return nil
}

// watchAncestor watches the nearest existing ancestor of a missing directory,
// and again the next one down while directories on the way appear between a
// stat and its watch (mkdir -p is quicker than a watch).
func (w *Watcher) watchAncestor(missing string) error {
	for {
		p := nearestDir(missing)
		if p == "" {
			return nil
		}
		if _, ok := w.roles[p]; !ok {
			if err := w.fsw.Add(p); err != nil {
				return fmt.Errorf("watching %s for plugin directory %s to appear: %w", p, missing, err)
			}
			w.roles[p] = role{kind: roleAncestor}
		}
		if nearestDir(missing) == p {
			return nil
		}
	}
}

// nearestDir is the nearest existing directory above path ("" for none).
func nearestDir(path string) string {
	for p := filepath.Dir(path); ; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
		if p == filepath.Dir(p) {
			return ""
		}
	}
}

// maxInsideDepth bounds how deep a plugin subdirectory is watched (a Python
// plugin's package directories, say). A plugin written by `exocortex plugins port`
// keeps its Agent Zero files at a0/extensions/python/<hook>/, four levels down.
const maxInsideDepth = 5

// watchInside watches a plugin subdirectory and the directories under it.
func (w *Watcher) watchInside(plugin, entry, path string, depth int) {
	if depth > maxInsideDepth {
		return
	}
	if _, ok := w.roles[path]; ok {
		return
	}
	if err := w.fsw.Add(path); err != nil {
		w.log.Warn("watching a plugin subdirectory", "path", path, "err", err)
		return
	}
	w.roles[path] = role{kind: roleInside, plugin: plugin, entry: entry}
	entries, _ := os.ReadDir(path)
	for _, e := range entries {
		if e.IsDir() && !ignoredInside(e.Name()) {
			w.watchInside(plugin, entry, filepath.Join(path, e.Name()), depth+1)
		}
	}
}

// ignoredInside reports names inside a plugin subdirectory that never make a
// change: caches the plugin writes itself when it runs, hidden files, editor
// leftovers.
func ignoredInside(name string) bool {
	return discover.EditorTemp(name) || name == "__pycache__" || name == "node_modules" || strings.HasSuffix(name, ".pyc")
}

// Run reports changes to fn until ctx ends or the watcher is closed. fn is called
// from Run's goroutine, one change at a time; while it runs, events queue up.
func (w *Watcher) Run(ctx context.Context, fn func(Change)) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return nil
			}
			w.handle(ev)
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost: look at everything again.
				w.log.Warn("plugin watcher overflowed; rescanning", "err", err)
				w.rescanAll()
				continue
			}
			w.log.Warn("plugin watcher", "err", err)
		case <-w.wake:
			for _, k := range w.takeDue() {
				if c, ok := w.settle(k); ok {
					fn(c)
				}
			}
		}
	}
}

// handle routes one fsnotify event to the plugin entry it concerns.
func (w *Watcher) handle(ev fsnotify.Event) {
	name := filepath.Clean(ev.Name)
	parent := filepath.Dir(name)
	now := time.Now()

	// A plugin directory itself was removed or renamed away: wait for it again.
	if r, ok := w.roles[name]; ok && r.kind == rolePluginDir && ev.Has(fsnotify.Remove|fsnotify.Rename) {
		delete(w.roles, name)
		_ = w.fsw.Remove(name)
		st := w.dirs[name]
		for entry := range st.known {
			w.touch(entryKey{name, entry}, now)
		}
		w.missing[name] = true
		_ = w.watchAncestor(name)
		return
	}

	pr, ok := w.roles[parent]
	if !ok {
		return
	}
	switch pr.kind {
	case roleAncestor:
		// Something appeared on the way to a missing plugin directory.
		if ev.Has(fsnotify.Create) {
			for m := range w.missing {
				if m == name || strings.HasPrefix(m, name+string(filepath.Separator)) {
					_ = w.attach(m, true)
				}
			}
		}
	case rolePluginDir:
		entry := filepath.Base(name)
		if discover.Skipped(entry) {
			return
		}
		key := entryKey{parent, entry}
		if ev.Op == fsnotify.Chmod && !w.execChanged(key) {
			return
		}
		if ev.Has(fsnotify.Create) {
			if fi, err := os.Stat(name); err == nil && fi.IsDir() {
				w.watchInside(parent, entry, name, 0)
			}
		}
		if ev.Has(fsnotify.Remove | fsnotify.Rename) {
			w.forgetInside(name)
		}
		w.touch(key, now)
	case roleInside:
		base := filepath.Base(name)
		if ignoredInside(base) {
			return
		}
		key := entryKey{pr.plugin, pr.entry}
		if ev.Op == fsnotify.Chmod && !w.execChanged(key) {
			return
		}
		if ev.Has(fsnotify.Create) {
			if fi, err := os.Stat(name); err == nil && fi.IsDir() {
				w.watchInside(pr.plugin, pr.entry, name, depthBelow(filepath.Join(pr.plugin, pr.entry), name))
			}
		}
		w.touch(key, now)
	}
}

func depthBelow(root, path string) int {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return maxInsideDepth + 1
	}
	return strings.Count(rel, string(filepath.Separator))
}

// forgetInside drops the roles of a removed plugin subdirectory (inotify drops
// the watches itself).
func (w *Watcher) forgetInside(path string) {
	for p, r := range w.roles {
		if r.kind == roleInside && (p == path || strings.HasPrefix(p, path+string(filepath.Separator))) {
			delete(w.roles, p)
		}
	}
}

// execChanged reports whether a mode change changed whether the entry is a
// plugin: the only mode change that matters (chmod +x on a new script).
func (w *Watcher) execChanged(k entryKey) bool {
	st := w.dirs[k.dir]
	_, had := st.known[k.name]
	_, has := w.candidate(st.dir, k.name)
	return had != has
}

// touch (re)starts an entry's debounce timer.
func (w *Watcher) touch(k entryKey, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last[k] = at
	if t, ok := w.timers[k]; ok {
		t.Reset(w.opts.Debounce)
		return
	}
	w.timers[k] = time.AfterFunc(w.opts.Debounce, func() {
		w.mu.Lock()
		w.due[k] = true
		w.mu.Unlock()
		select {
		case w.wake <- struct{}{}:
		default:
		}
	})
}

// takeDue returns the entries whose debounce has run out, in a stable order.
func (w *Watcher) takeDue() []entryKey {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]entryKey, 0, len(w.due))
	for k := range w.due {
		out = append(out, k)
		delete(w.due, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].dir != out[j].dir {
			return out[i].dir < out[j].dir
		}
		return out[i].name < out[j].name
	})
	return out
}

func (w *Watcher) rescanAll() {
	now := time.Now()
	for path, st := range w.dirs {
		for entry := range st.known {
			w.touch(entryKey{path, entry}, now)
		}
		entries, _ := os.ReadDir(path)
		for _, e := range entries {
			if !discover.Skipped(e.Name()) {
				w.touch(entryKey{path, e.Name()}, now)
			}
		}
	}
}

// settle looks at an entry whose events have stopped and decides what changed.
func (w *Watcher) settle(k entryKey) (Change, bool) {
	st := w.dirs[k.dir]
	w.mu.Lock()
	last := w.last[k]
	w.mu.Unlock()
	cand, has := w.candidate(st.dir, k.name)
	if has && !w.stable(cand) {
		// Still being written: wait for another quiet period.
		w.touch(k, last)
		return Change{}, false
	}
	w.mu.Lock()
	delete(w.timers, k)
	w.mu.Unlock()
	prev, had := st.known[k.name]
	switch {
	case !has && !had:
		return Change{}, false
	case !has:
		delete(st.known, k.name)
		return Change{Kind: Removed, Name: prev.cand.Name, Candidate: prev.cand, Last: last}, true
	}
	stamp := stampOf(cand)
	st.known[k.name] = known{cand: cand, stamp: stamp}
	switch {
	case !had:
		return Change{Kind: Added, Name: cand.Name, Candidate: cand, Last: last}, true
	case prev.cand.Name != cand.Name:
		// Renamed in place (a plugin.json appeared in a directory that held an
		// executable of another name, say): the old one went, a new one came.
		// Reported as a change of the new name; the host rescans anyway.
		return Change{Kind: Changed, Name: cand.Name, Candidate: cand, Last: last}, true
	case prev.stamp == stamp:
		return Change{}, false
	}
	return Change{Kind: Changed, Name: cand.Name, Candidate: cand, Last: last}, true
}

// candidate applies discover's rule to one entry of a plugin directory.
func (w *Watcher) candidate(d discover.Dir, entry string) (discover.Candidate, bool) {
	for _, c := range discover.Scan([]discover.Dir{d}).Plugins {
		if entryOf(d.Path, c.Path) == entry {
			return c, true
		}
	}
	return discover.Candidate{}, false
}

// entryOf is the top-level entry of dir that path is or is under.
func entryOf(dir, path string) string {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return filepath.Base(path)
	}
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return first
}

// stable reports whether a candidate's executable is complete: executable, and
// the same size and modification time across two stats StableGap apart. A
// plugin started through plugin.json has no executable of its own to check.
func (w *Watcher) stable(c discover.Candidate) bool {
	fi, err := os.Stat(c.Path)
	if err != nil {
		return false
	}
	if fi.IsDir() {
		return true
	}
	if !discover.Executable(fi.Mode()) {
		return false
	}
	time.Sleep(w.opts.StableGap)
	fi2, err := os.Stat(c.Path)
	if err != nil {
		return false
	}
	return fi.Size() == fi2.Size() && fi.ModTime().Equal(fi2.ModTime()) && discover.Executable(fi2.Mode())
}

// stampOf identifies a candidate's contents cheaply: size, modification time and
// inode of its executable, or of every file of its subdirectory (caches left out).
func stampOf(c discover.Candidate) string {
	h := sha256.New()
	add := func(rel string, fi fs.FileInfo) {
		var b [16]byte
		binary.LittleEndian.PutUint64(b[:8], uint64(fi.Size()))
		binary.LittleEndian.PutUint64(b[8:], uint64(fi.ModTime().UnixNano()))
		h.Write([]byte(rel))
		h.Write(b[:])
		h.Write([]byte(fi.Mode().String()))
		h.Write([]byte(inode(fi)))
	}
	fi, err := os.Stat(c.Path)
	if err != nil {
		return ""
	}
	if !fi.IsDir() {
		add("", fi)
		return fmt.Sprintf("%x", h.Sum(nil))
	}
	_ = filepath.WalkDir(c.Path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p != c.Path && ignoredInside(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if depthBelow(c.Path, p) > maxInsideDepth {
				return filepath.SkipDir
			}
			return nil
		}
		if fi, err := d.Info(); err == nil {
			rel, _ := filepath.Rel(c.Path, p)
			add(rel, fi)
		}
		return nil
	})
	return fmt.Sprintf("%x", h.Sum(nil))
}
