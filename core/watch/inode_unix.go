//go:build unix

package watch

import (
	"io/fs"
	"strconv"
	"syscall"
)

// inode names the file's inode: a binary renamed into place has a new one even
// when its size and time match the old one's.
func inode(fi fs.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return strconv.FormatUint(uint64(st.Ino), 10)
	}
	return ""
}
