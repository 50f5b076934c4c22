//go:build unix

package embed

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps f's size bytes read-only. The mapping is never unmapped: the
// words and vectors of a table used in place point into it for as long as the
// process may use them (a file replaced by rename keeps its old mapping valid).
func mapFile(f *os.File, size int64) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("map %s: %d bytes is too large", f.Name(), size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", f.Name(), err)
	}
	return b, nil
}
