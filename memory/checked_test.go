package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// later is a clock a few seconds ahead, so that files just written are old
// enough to be stamped (CheckedFile's margin).
func later() time.Time { return time.Now().Add(5 * time.Second) }

// TestCheckedFilesTrustedUntilWritten: once an open has verified state.snap
// and vectors.hnsw in full (and they are old enough), the next opens take them
// on trust; any write to either (a changed byte, a copy over it) or a damaged
// list sends the file through the full checks again, which find real damage
// and rebuild from the journal saying so.
func TestCheckedFilesTrustedUntilWritten(t *testing.T) {
	ctx := context.Background()
	flip := func(name string, at func(b []byte) int) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			p := filepath.Join(dir, name)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[at(b)] ^= 0x10
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name    string
		do      func(t *testing.T, dir string)
		trusted []string // by the open after do
		notice  string   // "" expects none
	}{
		{"unchanged", func(*testing.T, string) {}, []string{JournalFile, SnapshotFile, VectorsFile}, ""},
		{"a vector changed", flip(VectorsFile, func(b []byte) int { return bytes.IndexByte(b, '\n') + 1 + 64 + 16 + 200 }), []string{JournalFile, SnapshotFile}, "fails its checksum"},
		{"a snapshot byte changed", flip(SnapshotFile, func(b []byte) int { return len(b) - 40 }), []string{VectorsFile}, "state snapshot"},
		{"the journal written", func(t *testing.T, dir string) {
			// A session that saves one record leaves the snapshot and the
			// vectors as they are (a short tail); the journal's stamp changes.
			s := openStore(t, dir, Options{Embedder: newHashEmbedder()})
			if _, err := s.Put(ctx, Input{ID: "late", Text: "a later note about nothing the search asks"}, Source{}); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(ctx, "late", "test", Source{}); err != nil {
				t.Fatal(err)
			}
			s.Close()
		}, []string{SnapshotFile, VectorsFile}, ""},
		{"the list damaged", flip(CheckedFile, func(b []byte) int { return len(b) / 2 }), nil, ""},
		{"the vector file copied over itself", func(t *testing.T, dir string) {
			p := filepath.Join(dir, VectorsFile)
			b, _ := os.ReadFile(p)
			os.Remove(p)
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, []string{JournalFile, SnapshotFile}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir, Options{Embedder: newHashEmbedder()})
			putFacts(t, s)
			want, _ := s.Search(ctx, "user terminal", SearchOptions{})
			hash := must(s.Hash(context.Background()))
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			// Verified in full, and stamped with a clock past the margin.
			s = openStore(t, dir, Options{Embedder: newHashEmbedder(), checkClock: later})
			if len(s.trusted) != 0 || len(s.Notices()) != 0 {
				t.Fatalf("first open trusted %v, notices %q", s.trusted, s.Notices())
			}
			s.Close()
			if got := readChecked(dir); len(got) != 3 {
				t.Fatalf("checked.json lists %v, want both files and the journal", got)
			}
			// With the real clock a file just written is not stamped: no open
			// trusts a file a same-tick write could have changed unseen.
			tc.do(t, dir)
			s = openStore(t, dir, Options{Embedder: newHashEmbedder(), checkClock: later})
			defer s.Close()
			if !slices.Equal(s.trusted, tc.trusted) {
				t.Errorf("trusted %v, want %v", s.trusted, tc.trusted)
			}
			notes := strings.Join(s.Notices(), "\n")
			if tc.notice == "" && notes != "" || !strings.Contains(notes, tc.notice) {
				t.Errorf("notices %q, want %q", notes, tc.notice)
			}
			got, err := s.Search(ctx, "user terminal", SearchOptions{})
			if err != nil || fmt.Sprint(hitIDs(got)) != fmt.Sprint(hitIDs(want)) || must(s.Hash(context.Background())) != hash {
				t.Fatalf("search %v (%v), want %v; hash equal %v", hitIDs(got), err, hitIDs(want), must(s.Hash(context.Background())) == hash)
			}
			// What the open rebuilt is written on Close: then every file is
			// sound again.
			s.Close()
			s = openStore(t, dir, Options{Embedder: newHashEmbedder()})
			if err := s.CheckFiles(); err != nil {
				t.Errorf("CheckFiles after a rebuild and a close: %v", err)
			}
		})
	}
}

// TestStampMargin: a file whose change time is within the margin of the
// clock is not stamped; one older is.
func TestStampMargin(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := stampOf(fi); !ok {
		t.Skip("no change times on this system: nothing is ever trusted")
	}
	for _, tc := range []struct {
		now  time.Time
		want bool
	}{{time.Now(), false}, {time.Now().Add(stampMargin / 2), false}, {time.Now().Add(2 * stampMargin), true}} {
		if got := stampFor(fi, tc.now) != nil; got != tc.want {
			t.Errorf("stamped at %v after the write: %v, want %v", time.Until(tc.now).Round(time.Millisecond), got, tc.want)
		}
	}
}

// TestCheckFilesFindsDamageTheStampHides: damage that keeps a file's stamp
// (here: the list rewritten to match the damaged file, as a disk that changes
// bytes without a write would leave it) is not seen by Open but is by
// CheckFiles, which `memory replay --verify` runs.
func TestCheckFilesFindsDamageTheStampHides(t *testing.T) {
	for _, name := range []string{SnapshotFile, VectorsFile} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir, Options{Embedder: newHashEmbedder()})
			putFacts(t, s)
			s.Close()
			p := filepath.Join(dir, name)
			b, _ := os.ReadFile(p)
			at := bytes.IndexByte(b, '\n') + 1 + 20 // in the first record's text
			if name == VectorsFile {
				at = bytes.IndexByte(b, '\n') + 1 + 64 + 16 + 200
			}
			b[at] ^= 0x10
			os.WriteFile(p, b, 0o600)
			trustFile(t, dir, name)
			s = openStore(t, dir, Options{Embedder: newHashEmbedder()})
			defer s.Close()
			if !slices.Contains(s.trusted, name) {
				t.Fatalf("Open did not trust %s (trusted %v, notices %q)", name, s.trusted, s.Notices())
			}
			err := s.CheckFiles()
			if err == nil || !strings.Contains(err.Error(), "checksum") {
				t.Fatalf("CheckFiles: %v, want a checksum failure of %s", err, name)
			}
		})
	}
}

// TestSnapshotParts: a version 1 snapshot (an older build's) of a store large
// enough is cut in two parts that decode on two threads to the state the
// journal replays to, and is rewritten as version 2; parts that do not fit
// the body are damage (rebuilt from the journal, saying so); a header without
// parts decodes in one pass.
func TestSnapshotParts(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	putMany(t, s, minPartRecords+500)
	richFields := []Input{{ID: "zz-tags", Text: "tagged", Tags: []string{"b", "a"}, Key: "k1"}}
	if _, err := s.PutBatch(context.Background(), richFields, Source{Session: "s9", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	want := replayedHash(t, dir)
	p := filepath.Join(dir, SnapshotFile)
	snap, err := readSnapshot(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeSnapshotV1(p, replayedState(t, dir), snap.at); err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(p)
	nl := bytes.IndexByte(orig, '\n')
	var h snapshotHeader
	if err := json.Unmarshal(orig[:nl], &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Parts) != 1 || h.Parts[0].Record != h.Records/2 {
		t.Fatalf("parts %+v for %d records, want one cut in the middle", h.Parts, h.Records)
	}
	withParts := func(parts []snapshotPart) []byte {
		h2 := h
		h2.Parts = parts
		head, _ := json.Marshal(h2)
		return append(append(head, '\n'), orig[nl+1:]...)
	}
	cases := []struct {
		name   string
		file   []byte
		notice string
	}{
		{"as written", orig, ""},
		{"without parts", withParts(nil), ""},
		{"a part off by one byte", withParts([]snapshotPart{{h.Parts[0].Record, h.Parts[0].Offset + 1}}), "rebuilding the state from the journal"},
		{"a part off by one record", withParts([]snapshotPart{{h.Parts[0].Record + 1, h.Parts[0].Offset}}), "rebuilding the state from the journal"},
		{"a part past the end", withParts([]snapshotPart{{h.Records + 3, len(orig)}}), "do not fit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(p, tc.file, 0o600); err != nil {
				t.Fatal(err)
			}
			s := openStore(t, dir, Options{})
			defer s.Close()
			notes := strings.Join(s.Notices(), "\n")
			if tc.notice == "" && notes != "" || !strings.Contains(notes, tc.notice) {
				t.Errorf("notices %q, want %q", notes, tc.notice)
			}
			if got := must(s.Hash(context.Background())); got != want {
				t.Errorf("state hash %s, journal replay %s", got, want)
			}
			if r, ok := must2(s.GetByKey(context.Background(), AreaMain, "k1")); !ok || r.ID != "zz-tags" || fmt.Sprint(r.Tags) != "[a b]" {
				t.Errorf("key lookup: %+v %v", r, ok)
			}
			if n, _, ok := SnapshotCount(dir); !ok || n != h.Records {
				t.Errorf("after the open: snapshot count %d, %v", n, ok)
			}
			if snap, err := readSnapshot(p); err != nil || snap.version != snapshotVersion {
				t.Errorf("the version 1 file was not rewritten as version %d: %v", snapshotVersion, err)
			}
		})
	}
}

// TestSnapshotTimes: the snapshot's times decode to the very values
// time.Time's own binary decoding gives (zone and all), the UTC ones on the
// direct path.
func TestSnapshotTimes(t *testing.T) {
	for _, tm := range []time.Time{
		{},
		time.Date(2026, 11, 26, 7, 0, 0, 123456789, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(1969, 7, 20, 20, 17, 40, 0, time.UTC),
		time.Date(2026, 11, 26, 7, 0, 0, 5, time.FixedZone("", 2*3600)),
		time.Date(2026, 11, 26, 7, 0, 0, 5, time.FixedZone("", 3600+30)),
	} {
		b, err := appendTime(nil, tm)
		if err != nil {
			t.Fatal(err)
		}
		d := &stateDecoder{s: string(b)}
		got := d.time()
		var want time.Time
		if !tm.IsZero() {
			raw, _ := tm.MarshalBinary()
			if err := want.UnmarshalBinary(raw); err != nil {
				t.Fatal(err)
			}
		}
		_, gotOff := got.Zone()
		_, wantOff := want.Zone()
		same := got == want // UTC: the same value, location included
		if tm.Location() != time.UTC {
			same = got.Equal(want) && gotOff == wantOff
		}
		if d.err != nil || !same || d.off != len(b) {
			t.Errorf("%v: decoded %#v (%v), want %#v", tm, got, d.err, want)
		}
	}
}
