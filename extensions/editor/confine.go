package editor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// roots are the directories the editor may touch, each as configured (made
// absolute) and as resolved through symbolic links.
type roots struct {
	given []string
	real  []string
}

// newRoots resolves the configured roots; each must exist.
func newRoots(list []string) (roots, error) {
	if len(list) == 0 {
		return roots{}, errors.New("no roots are configured: set tools.editor.roots in config.yaml")
	}
	var r roots
	for _, d := range list {
		abs, err := filepath.Abs(d)
		if err != nil {
			return roots{}, fmt.Errorf("root %s: %w", d, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return roots{}, fmt.Errorf("root %s does not exist or cannot be resolved (%v): create it or correct tools.editor.roots", abs, err)
		}
		r.given = append(r.given, abs)
		r.real = append(r.real, real)
	}
	return r, nil
}

// within reports whether p is dir or below it (both clean and absolute).
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

func withinAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if within(p, d) {
			return true
		}
	}
	return false
}

// escapeError is a path the editor refuses because it leaves the roots.
type escapeError struct {
	path, why string
	roots     []string
}

func (e *escapeError) Error() string {
	return fmt.Sprintf("%s is refused: %s; text_editor works only inside %s (give a path relative to %s)",
		e.path, e.why, strings.Join(e.roots, ", "), e.roots[0])
}

// resolve maps the path the model gave to a real path inside a root, with every
// symbolic link resolved. A relative path starts at the first root. Refused:
// a path that leaves the roots lexically (through ".." or as an absolute path
// elsewhere), and one whose existing part leads outside through a symbolic link
// (a link to a file or a directory outside, or a dangling link whose target is
// outside: a write would create it there). The part of the path that does not exist yet cannot
// hold links, so the resolved path is where a write will land.
func (r roots) resolve(p string) (string, error) { return r.resolveDepth(p, p, 0) }

// maxLinks bounds the dangling links followed by hand (as the kernel bounds
// link chains).
const maxLinks = 40

func (r roots) resolveDepth(p, shown string, depth int) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errors.New(`"path" is empty`)
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%q holds a NUL byte", shown)
	}
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
	} else {
		abs = filepath.Join(r.given[0], p)
	}
	if !withinAny(abs, r.given) && !withinAny(abs, r.real) {
		why := "it is an absolute path outside the allowed roots"
		if !filepath.IsAbs(p) {
			why = `its ".." components lead outside the allowed roots`
		}
		if depth > 0 {
			why = fmt.Sprintf("a symbolic link on the way leads to %s", abs)
		}
		return "", &escapeError{path: shown, why: why, roots: r.given}
	}
	// Find the longest prefix that exists (a dangling link exists for Lstat).
	existing, rest := abs, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: %w", shown, err)
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		// A dangling link: where it points is where a write would land, so
		// judge that path instead.
		target, lerr := os.Readlink(existing)
		if lerr != nil || depth >= maxLinks {
			return "", fmt.Errorf("%s: resolving %s: %w", shown, existing, err)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(existing), target)
		}
		return r.resolveDepth(filepath.Join(target, rest), shown, depth+1)
	}
	if rest != "" {
		real = filepath.Join(real, rest)
	}
	if !withinAny(real, r.real) {
		return "", &escapeError{path: shown, why: fmt.Sprintf("a symbolic link on the way leads to %s", real), roots: r.given}
	}
	return real, nil
}
