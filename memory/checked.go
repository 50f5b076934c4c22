package memory

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/exocortex/exocortex/staging"
)

// CheckedFile lists the store's files that Open verified in full (state.snap,
// vectors.hnsw) and the version of each it verified: device, inode, size,
// modification and change time. While a file still has exactly that stamp it
// has not been written since (any write, in place or by renaming another file
// over it, changes its change time or its inode, and no program can set a
// change time back), so a later Open skips the passes that read all of it (the
// snapshot's CRC-32C; the vector file's body checksums and link checks) and
// checks only headers, sizes and what it decodes anyway. The journal is
// stamped too, under the snapshot's checkpoint (journalKey): while it keeps
// the stamp it had when its first bytes were verified against that
// checkpoint's checksum, Open skips that read (any append changes the stamp,
// so the first open after a session that wrote reads it again). A file whose stamp
// differs, or that has none, is verified in full again. It is a cache: a
// missing or unreadable list only means everything is verified.
//
// A stamp is recorded only for a file whose change time is at least
// stampMargin old when it is verified: the system keeps change times at a
// clock tick's resolution, so a write in the same tick as the one that made
// the file would otherwise go unseen. A file Close just wrote is therefore
// verified in full by the next Open, and stamped by the first Open a second
// later. Damage below the file system (a disk that changes bytes without a
// write) is found by `exocortex memory replay --verify` (Store.CheckFiles),
// which always reads everything.
const CheckedFile = "checked.json"

const (
	checkedVersion = 1
	stampMargin    = time.Second
)

// fileStamp is one version of a file (see CheckedFile).
type fileStamp struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime_ns"`
	Ctime int64  `json:"ctime_ns"`
}

type checkedList struct {
	Version int                  `json:"version"`
	Files   map[string]fileStamp `json:"files"`
	CRC32C  uint32               `json:"crc32c"`
}

func (l checkedList) sum() uint32 {
	l.CRC32C = 0
	b, _ := json.Marshal(l)
	return crc32.Checksum(b, castagnoli)
}

// readChecked reads the stamps in dir; nil when there are none or the list
// fails its checksum.
func readChecked(dir string) map[string]fileStamp {
	b, err := os.ReadFile(filepath.Join(dir, CheckedFile))
	if err != nil {
		return nil
	}
	var l checkedList
	if json.Unmarshal(b, &l) != nil || l.Version != checkedVersion || l.sum() != l.CRC32C {
		return nil
	}
	return l.Files
}

// writeChecked replaces the stamps in dir.
func writeChecked(dir string, files map[string]fileStamp) error {
	l := checkedList{Version: checkedVersion, Files: files}
	l.CRC32C = l.sum()
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	// Not synced: the list carries its own checksum, so one that a crash
	// left torn or empty reads as none, and the next open verifies the files
	// again; a sync would cost more than that on every open that rewrites it.
	path := filepath.Join(dir, CheckedFile)
	f, err := os.CreateTemp(dir, "."+CheckedFile+"-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o600)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// journalKey is the name under which CheckedFile stamps the journal whose
// prefix up to cp was verified against cp's checksum: a stamp holds only for
// the checkpoint it was verified at (another snapshot brings another one).
func journalKey(cp staging.Checkpoint) string {
	return fmt.Sprintf("%s@%d:%d:%08x", JournalFile, cp.Seq, cp.Size, cp.CRC32C)
}

// trusted reports whether fi is the version of name that checked records.
func trusted(checked map[string]fileStamp, name string, fi fs.FileInfo) bool {
	want, ok := checked[name]
	if !ok {
		return false
	}
	got, ok := stampOf(fi)
	return ok && got == want
}

// stampFor returns the stamp to record for fi, a file just verified in full,
// or nil when its change time is too recent to rely on (or unknown).
func stampFor(fi fs.FileInfo, now time.Time) *fileStamp {
	st, ok := stampOf(fi)
	if !ok || now.UnixNano()-st.Ctime < int64(stampMargin) {
		return nil
	}
	return &st
}
