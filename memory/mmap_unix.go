//go:build unix

package memory

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// fileMapping is a file mapped into memory, copy-on-write: the vector
// graphs use its arrays in place and write to them (a link added, a node
// deleted) without changing the file. It is unmapped once nothing refers to
// it any more (the graphs hold it), never while a graph may read it.
type fileMapping struct{ b []byte }

// mapFile maps the first size bytes of f privately, readable and writable.
func mapFile(f *os.File, size int64) (*fileMapping, error) {
	if size == 0 {
		return &fileMapping{}, nil
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("%s is too large to map (%d bytes)", f.Name(), size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", f.Name(), err)
	}
	m := &fileMapping{b: b}
	runtime.AddCleanup(m, func(b []byte) { syscall.Munmap(b) }, b)
	return m, nil
}
