//go:build !unix

package watch

import "io/fs"

func inode(fs.FileInfo) string { return "" }
