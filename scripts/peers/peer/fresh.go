package peer

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// FreshCopies copies the binary at each path into a new directory and points
// the path at its copy, so that every binary starts from the same page-cache
// state; done removes the directory. An empty path, or one with no file, is
// left as it is (the harness reports a binary that is not there).
//
// Why: the kernel may hold a file read often (a binary run hundreds of times
// by the test suite, say) in 2 MB pages, and a process that maps it then has
// whole 2 MB pages resident where it touched a few 4 KB ones. Measured here,
// the same exocortex build showed a PSS of 90.8 MB run from bin/ and 63.9 MB
// run from a fresh copy, while crush's stayed at 67.4 MB: the ratio between
// the two said more about the files' histories than about the programs. A
// copy is a new file, whose page cache fills in small pages as it runs.
func FreshCopies(paths ...*string) (done func(), err error) {
	dir, err := os.MkdirTemp("", "peers-bin-")
	if err != nil {
		return nil, fmt.Errorf("a directory for fresh copies of the binaries: %w", err)
	}
	done = func() { os.RemoveAll(dir) }
	for i, p := range paths {
		if *p == "" {
			continue
		}
		if _, err := os.Stat(*p); err != nil {
			continue
		}
		// Numbered: two builds of one program have the same name.
		dst := filepath.Join(dir, strconv.Itoa(i), filepath.Base(*p))
		if err := copyExecutable(*p, dst); err != nil {
			done()
			return nil, err
		}
		*p = dst
	}
	return done, nil
}

func copyExecutable(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("copying %s for a fresh start: %w", src, err)
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copying %s for a fresh start: %w", src, err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	return nil
}
