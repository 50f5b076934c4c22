//go:build !unix

package embed

import (
	"io"
	"os"
)

// mapFile reads f's size bytes where mapping is not available.
func mapFile(f *os.File, size int64) ([]byte, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	return b, nil
}
