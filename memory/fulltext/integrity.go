package fulltext

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
)

// CheckSegments verifies every segment file (*.zap) under dir against the CRC-32
// in its footer. The error, wrapping ErrDamaged, names the first file that fails.
// It is for an index that is closed: an open one writes segment files in the
// background (its persister and its merges write a file in place before the
// index uses it), and a file caught half-written would fail. Index.CheckSegments
// checks an open index.
func CheckSegments(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) { // a merge removed it meanwhile
				return nil
			}
			return err
		}
		if d.IsDir() || filepath.Ext(p) != ".zap" {
			return nil
		}
		return checkSegment(p)
	})
}

// CheckSegments verifies the segment files the open index reads: those of its
// current snapshot, which scorch introduces only once they are written whole
// (the files a persist or a merge is still writing belong to no snapshot yet).
// The snapshot is held while they are read, so no merge removes them meanwhile.
// The error, wrapping ErrDamaged, names the first file that fails.
func (ix *Index) CheckSegments() (err error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	adv, err := ix.idx.Advanced()
	if err != nil {
		return fmt.Errorf("fulltext: %s: %w", ix.dir, err)
	}
	r, err := adv.Reader()
	if err != nil {
		return fmt.Errorf("fulltext: reading %s: %w (%v)", ix.dir, ErrDamaged, err)
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return fmt.Errorf("fulltext: %s is not a scorch index (%T)", ix.dir, r)
	}
	for _, ss := range snap.Segments() {
		// A segment still in memory (not persisted yet) has no file.
		if ps, ok := ss.Segment().(interface{ Path() string }); ok {
			if err := checkSegment(ps.Path()); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkSegment verifies one segment file against the CRC-32 in its footer. A file
// that is gone (a merge removed it) or empty (created, never written: a merge
// that Close or a crash cut short leaves one; no snapshot refers to it, and
// scorch removes it on open) passes.
func checkSegment(p string) error {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("segment %s cannot be read: %w", p, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("segment %s cannot be read: %w", p, err)
	}
	if st.Size() == 0 {
		return nil
	}
	if st.Size() < 64 {
		return fmt.Errorf("segment %s is truncated (%d bytes): %w", filepath.Base(p), st.Size(), ErrDamaged)
	}
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, st.Size()-zapFooterCRC)); err != nil {
		return fmt.Errorf("segment %s cannot be read: %w", p, err)
	}
	var want [zapFooterCRC]byte
	if _, err := f.ReadAt(want[:], st.Size()-zapFooterCRC); err != nil {
		return fmt.Errorf("segment %s cannot be read: %w", p, err)
	}
	if h.Sum32() != binary.BigEndian.Uint32(want[:]) {
		return fmt.Errorf("segment %s fails its checksum: %w", filepath.Base(p), ErrDamaged)
	}
	return nil
}

// openBleve opens an existing index, turning a panic on damaged files into an
// error.
func openBleve(dir string) (idx bleve.Index, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic while opening: %v", r)
		}
	}()
	return bleve.OpenUsing(dir, map[string]interface{}{"unsafe_batch": true})
}

// verify compares the index directory with its manifest and returns what is wrong,
// or "" when it matches. unclean is true when there is no manifest: the index was
// open when its process stopped. sound lists the segments found sound.
func verify(dir, mpath string) (problem string, unclean bool, sound map[string]fileEntry) {
	b, err := os.ReadFile(mpath)
	if errors.Is(err, fs.ErrNotExist) {
		return "was not closed cleanly (no manifest)", true, nil
	}
	if err != nil {
		return fmt.Sprintf("has an unreadable manifest (%v)", err), false, nil
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil || (m.Version != 1 && m.Version != formatVersion) || (m.Version == 2 && m.sum() != m.CRC32C) {
		return "has an unreadable manifest", false, nil
	}
	if m.Version == 1 {
		return verifyV1(dir, m), false, nil
	}
	files, err := listFiles(dir)
	if err != nil {
		return fmt.Sprintf("cannot be read (%v)", err), false, nil
	}
	if len(files) != len(m.Files) {
		return fmt.Sprintf("has %d files where its manifest lists %d", len(files), len(m.Files)), false, nil
	}
	sound = map[string]fileEntry{}
	for i, f := range files {
		want := m.Files[i]
		if f.Name != want.Name || f.Size != want.Size || f.CRC != want.CRC {
			return fmt.Sprintf("fails its checksum at %s", f.Name), false, nil
		}
		if !isSegment(f.Name) {
			continue
		}
		if !want.Settled || f.Mtime != want.Mtime {
			if err := checkSegment(filepath.Join(dir, filepath.FromSlash(f.Name))); err != nil {
				return fmt.Sprintf("fails its checksum (%v)", err), false, nil
			}
		}
		sound[f.Name] = f
	}
	return "", false, sound
}

// verifyV1 checks the directory against a version 1 manifest: the SHA-256 of
// every file.
func verifyV1(dir string, m manifest) string {
	var files []fileEntry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		n, err := io.Copy(h, f)
		if err != nil {
			return err
		}
		files = append(files, fileEntry{Name: filepath.ToSlash(rel), Size: n, SHA256: hex.EncodeToString(h.Sum(nil))})
		return nil
	})
	if err != nil {
		return fmt.Sprintf("cannot be read (%v)", err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	if len(files) != len(m.Files) {
		return fmt.Sprintf("has %d files where its manifest lists %d", len(files), len(m.Files))
	}
	for i, f := range files {
		want := m.Files[i]
		if f.Name != want.Name || f.Size != want.Size || f.SHA256 != want.SHA256 {
			return fmt.Sprintf("fails its checksum at %s", f.Name)
		}
	}
	return ""
}

func isSegment(name string) bool { return strings.HasSuffix(name, ".zap") }

// listFiles describes every regular file under dir, sorted by name: size and
// modification time, and for a segment the CRC-32 in its footer (4 bytes
// read), for any other file the CRC-32C of its contents (they are small: the
// index's metadata and bolt root).
func listFiles(dir string) ([]fileEntry, error) {
	var out []fileEntry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := filepath.ToSlash(rel)
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		e := fileEntry{Name: name, Size: st.Size(), Mtime: st.ModTime().UnixNano()}
		if isSegment(name) {
			if st.Size() >= zapFooterCRC {
				var tr [zapFooterCRC]byte
				if _, err := f.ReadAt(tr[:], st.Size()-zapFooterCRC); err != nil {
					return err
				}
				e.CRC = binary.BigEndian.Uint32(tr[:])
			}
		} else {
			h := crc32.New(castagnoli)
			if _, err := io.Copy(h, f); err != nil {
				return err
			}
			e.CRC = h.Sum32()
		}
		out = append(out, e)
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}
