//go:build !unix

package memory

import (
	"io"
	"os"
)

// fileMapping holds a file's bytes; where memory mapping is not available
// they are read into memory.
type fileMapping struct{ b []byte }

// mapFile reads the first size bytes of f.
func mapFile(f *os.File, size int64) (*fileMapping, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), b); err != nil {
		return nil, err
	}
	return &fileMapping{b: b}, nil
}
