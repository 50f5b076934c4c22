package fulltext

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// manyDocs makes n documents; word<i%50> lets a query hit a fiftieth of them.
func manyDocs(n int) []Doc {
	ds := make([]Doc, n)
	for i := range ds {
		ds[i] = Doc{ID: fmt.Sprintf("d%04d", i), Text: fmt.Sprintf("fact %d about word%d and deploy", i, i%50), Area: "main", Status: "active"}
	}
	return ds
}

// damageSegments overwrites a tenth of every segment file with 0xff, starting at
// frac of its length, in place (an open index sees it through its memory map).
func damageSegments(t *testing.T, dir string, frac float64) {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(dir, "store", "*.zap"))
	if len(segs) == 0 {
		t.Fatalf("no segment files in %s", dir)
	}
	for _, p := range segs {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		if st.Size() == 0 {
			f.Close()
			continue
		}
		junk := []byte(strings.Repeat("\xff", int(st.Size()/10)))
		if _, err := f.WriteAt(junk, int64(float64(st.Size())*frac)); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

func truncateSegments(t *testing.T, dir string) {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(dir, "store", "*.zap"))
	for _, p := range segs {
		st, _ := os.Stat(p)
		if err := os.Truncate(p, st.Size()/2); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUncleanShutdownWithDamagedSegment closes an index, takes its manifest away
// (as a crash with the index open does) and damages a segment: Open must check the
// segments, discard the index and say why, never keep it or bless it.
func TestUncleanShutdownWithDamagedSegment(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
		notice string
	}{
		{"bytes overwritten early", func(t *testing.T, d string) { damageSegments(t, d, 0.05) }, "fails its checksum"},
		{"bytes overwritten late", func(t *testing.T, d string) { damageSegments(t, d, 0.85) }, "fails its checksum"},
		{"segment cut in half", truncateSegments, "fails its checksum"},
		{"no damage", func(*testing.T, string) {}, "catching up from the journal after seq 3000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ft")
			ix, _, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := ix.Apply(manyDocs(3000), nil, 3000); err != nil {
				t.Fatal(err)
			}
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(dir + ".manifest"); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, dir)

			ix2, notice, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ix2.Close()
			if !strings.Contains(notice, tc.notice) {
				t.Fatalf("notice %q, want %q", notice, tc.notice)
			}
			n, _ := ix2.Count()
			if tc.name == "no damage" {
				if n != 3000 || ix2.AppliedSeq() != 3000 {
					t.Fatalf("a sound index was not kept: %d docs, seq %d", n, ix2.AppliedSeq())
				}
				return
			}
			if n != 0 || ix2.AppliedSeq() != 0 {
				t.Fatalf("a damaged index was kept: %d docs, seq %d", n, ix2.AppliedSeq())
			}
		})
	}
}

// TestSearchPanicIsRecovered damages the segment of an open index (Bleve reads it
// through a memory map) so that searches panic with "slice bounds out of range",
// and checks that the panic comes back as an ErrDamaged error, that Close does not
// write a manifest over the damage, and that Reset gives a working index.
func TestSearchPanicIsRecovered(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "ft")
	ix, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Apply(manyDocs(3000), nil, 3000); err != nil {
		t.Fatal(err)
	}
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	damageSegments(t, dir, 0.2) // where this layout (3000 short documents) holds a dictionary a search reads
	_, err = ix.Search(ctx, "deploy", Filter{}, 10)
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "panic") {
		t.Fatalf("search over a damaged segment: %v, want a recovered panic wrapping ErrDamaged", err)
	}
	if err := CheckSegments(dir); !errors.Is(err, ErrDamaged) {
		t.Fatalf("CheckSegments on the damaged index: %v", err)
	}

	if err := ix.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := ix.Apply(manyDocs(100), nil, 100); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(ctx, "word7", Filter{}, 10)
	if err != nil || len(hits) != 2 {
		t.Fatalf("after Reset: %d hits, %v", len(hits), err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + ".manifest"); err != nil {
		t.Fatalf("a sound index closed without a manifest: %v", err)
	}
}

// TestCloseDoesNotMarkDamageClean damages an open index and closes it: Close must
// refuse to write the manifest, so that the next Open rebuilds.
func TestCloseDoesNotMarkDamageClean(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ft")
	ix, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Apply(manyDocs(3000), nil, 3000); err != nil {
		t.Fatal(err)
	}
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	damageSegments(t, dir, 0.5)
	if err := ix.Close(); !errors.Is(err, ErrDamaged) {
		t.Fatalf("Close of a damaged index: %v, want ErrDamaged", err)
	}
	if _, err := os.Stat(dir + ".manifest"); !os.IsNotExist(err) {
		t.Fatalf("Close wrote a manifest over a damaged segment (%v)", err)
	}
	ix2, notice, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix2.Close()
	if n, _ := ix2.Count(); n != 0 || !strings.Contains(notice, "fails its checksum") {
		t.Fatalf("reopen: %d docs, notice %q", n, notice)
	}
}

func TestBound(t *testing.T) {
	long := strings.Repeat("x", MaxTokenBytes+50)
	cases := []struct {
		name string
		in   string
		want string
		cut  bool
	}{
		{"short text", "deploy on fridays", "deploy on fridays", false},
		{"long word cut", "a " + long + " b", "a " + long[:MaxTokenBytes] + " b", true},
		{"word of exactly the bound", strings.Repeat("y", MaxTokenBytes), strings.Repeat("y", MaxTokenBytes), false},
		{"multi-byte word cut on a rune", strings.Repeat("é", MaxTokenBytes), strings.Repeat("é", MaxTokenBytes/2), true},
		{"long text cut", strings.Repeat("word ", MaxIndexedBytes/5+10), strings.Repeat("word ", MaxIndexedBytes/5+10)[:MaxIndexedBytes], true},
	}
	for _, tc := range cases {
		got, cut := Bound(tc.in)
		if got != tc.want || cut != tc.cut {
			t.Errorf("%s: Bound = %d bytes (cut %v), want %d bytes (cut %v)", tc.name, len(got), cut, len(tc.want), tc.cut)
		}
	}
}

// TestHugeSingleTokenIsBounded indexes a 10 MB one-word document beside normal
// ones: the index must stay small and the normal documents searchable.
func TestHugeSingleTokenIsBounded(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "ft")
	ix, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	huge := Doc{ID: "huge", Text: "start " + strings.Repeat("z", 10<<20), Area: "main", Status: "active"}
	if err := ix.Apply(append(manyDocs(100), huge), nil, 101); err != nil {
		t.Fatal(err)
	}
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	var size int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if st, err := d.Info(); err == nil {
				size += st.Size()
			}
		}
		return nil
	})
	if size > 2<<20 {
		t.Fatalf("the index takes %d bytes for a 10 MB document: the text was not bounded", size)
	}
	if hits, err := ix.Search(ctx, "start", Filter{}, 10); err != nil || ids(hits) != "huge" {
		t.Fatalf("the huge document by its first word: %v %v", ids(hits), err)
	}
	if hits, err := ix.Search(ctx, "word7", Filter{}, 10); err != nil || len(hits) != 2 {
		t.Fatalf("normal documents: %d hits, %v", len(hits), err)
	}
}

func TestBlankTextIsFilterOnly(t *testing.T) {
	ctx := context.Background()
	ix, _, err := Open(filepath.Join(t.TempDir(), "ft"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ix.Apply(manyDocs(20), nil, 20)
	for _, q := range []string{"", "   ", "\t\n"} {
		hits, err := ix.Search(ctx, q, Filter{}, 100)
		if err != nil || len(hits) != 20 {
			t.Errorf("Search(%q) = %d hits, %v; want every document", q, len(hits), err)
		}
	}
}

// TestLiveCheckSkipsFilesBeingWritten: an open index's persister and merges
// write a segment file in place before the index uses it, so a check of the
// directory can catch one half-written and call it damage (the flake of
// TestSearchOverDamagedIndexRebuilds). The check of the open index reads only
// the segments of its snapshot: a file no snapshot holds yet is not damage,
// while a damaged segment the index reads still is.
func TestLiveCheckSkipsFilesBeingWritten(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ft")
	ix, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Apply(manyDocs(3000), nil, 3000); err != nil {
		t.Fatal(err)
	}
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := ix.CheckSegments(); err != nil {
		t.Fatalf("a sound open index: %v", err)
	}
	// A segment as a merge leaves it halfway: written, its footer not yet.
	// The open index's own persister may remove a file no snapshot holds at
	// any moment, so the file may be gone again by the time it is checked.
	partial := filepath.Join(dir, "store", "ffffffffffff.zap")
	half := []byte(strings.Repeat("\x00", 4096))
	if err := os.WriteFile(partial, half, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ix.CheckSegments(); err != nil {
		t.Fatalf("the open index's check took a file no snapshot holds for damage: %v", err)
	}
	if err := os.Remove(partial); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	// The directory check, with no index open to remove the file, calls it
	// damage.
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(partial, half, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckSegments(dir); !errors.Is(err, ErrDamaged) {
		t.Fatalf("the directory check of a half-written file: %v, want ErrDamaged", err)
	}
	if err := os.Remove(partial); err != nil {
		t.Fatal(err)
	}
	ix, _, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	damageSegments(t, dir, 0.05)
	if err := ix.CheckSegments(); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "fails its checksum") {
		t.Fatalf("the open index's check of its damaged segment: %v, want ErrDamaged", err)
	}
}
