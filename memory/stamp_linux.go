package memory

import (
	"io/fs"
	"syscall"
)

// stampOf identifies the version of a file that fi describes: its device,
// inode, size and modification and change times. Any write to the file, in
// place or by renaming another over it, changes the change time or the
// inode, and no program can set the change time back.
func stampOf(fi fs.FileInfo) (fileStamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStamp{}, false
	}
	return fileStamp{
		Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: fi.Size(),
		Mtime: fi.ModTime().UnixNano(), Ctime: int64(st.Ctim.Sec)*1e9 + int64(st.Ctim.Nsec),
	}, true
}
