package memory

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeOldVectors rewrites the store's vectors.hnsw as an older build wrote
// it, in file version 2, 3 or 4:
//
//   - 2, before the flat graphs: memory/hnsw's graph format 1, a CRC-32C of the
//     whole body in the header;
//   - 3, before the mapped layout: the graphs back to back with no padding, a
//     CRC of the header;
//   - 4, before the graphs' key tables: laid out for mapping (the header line
//     and each graph padded to 8 bytes), graph format 2 (no key table, no
//     upper offsets, no key offsets).
func writeOldVectors(t *testing.T, s *Store, path string, version int) {
	t.Helper()
	graph := map[int]uint32{2: 1, 3: 2, 4: 2}[version]
	if graph == 0 {
		t.Fatalf("writeOldVectors: no version %d", version)
	}
	var body bytes.Buffer
	h := vectorHeader{Version: version, Model: s.vec.model, Dims: s.vec.dims, AppliedSeq: s.vec.applied}
	for _, area := range sortedKeys(s.vec.areas) {
		start := body.Len()
		if err := s.vec.areas[area].(*hnswIndex).g.ExportVersion(&body, graph); err != nil {
			t.Fatal(err)
		}
		h.Areas = append(h.Areas, vectorBlock{Area: area, Bytes: int64(body.Len() - start)})
		if version == 4 {
			body.Write(make([]byte, align8(int64(body.Len()))-int64(body.Len())))
		}
	}
	if version == 2 {
		sum := crc32.Checksum(body.Bytes(), castagnoli)
		h.CRC32C = &sum
	} else {
		sum := h.headerSum()
		h.HeaderCRC32C = &sum
	}
	line, _ := json.Marshal(h)
	if version == 4 {
		line = append(line, bytes.Repeat([]byte{' '}, int(align8(int64(len(line))+1))-len(line)-1)...)
	}
	line = append(line, '\n')
	if err := os.WriteFile(path, append(line, body.Bytes()...), 0o600); err != nil {
		t.Fatal(err)
	}
}

func vectorFileVersionOf(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadBytes('\n')
	var h vectorHeader
	if err := json.Unmarshal(line, &h); err != nil {
		t.Fatalf("header of %s: %v", path, err)
	}
	return h.Version
}

// TestVectorFileVersions opens stores whose vectors.hnsw is of the older
// format (read as it is, rewritten in the current one on Close) or damaged in
// ways only the current format's checks see (its header, its length): the
// store says so, rebuilds, and answers as before.
func TestVectorFileVersions(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		do     func(t *testing.T, s *Store, path string)
		notice string // "" expects no notice
	}{
		{"older format", func(t *testing.T, s *Store, path string) { writeOldVectors(t, s, path, 2) }, ""},
		{"version 3 (not laid out for mapping)", func(t *testing.T, s *Store, path string) { writeOldVectors(t, s, path, 3) }, ""},
		{"version 4 (graphs without key tables)", func(t *testing.T, s *Store, path string) { writeOldVectors(t, s, path, 4) }, ""},
		{"header line not aligned", func(t *testing.T, _ *Store, path string) {
			b, _ := os.ReadFile(path)
			nl := bytes.IndexByte(b, '\n')
			if b[nl-1] != ' ' {
				b = append(b[:nl:nl], append([]byte(" "), b[nl:]...)...) // one more space
			} else {
				b = append(b[:nl-1:nl-1], b[nl:]...) // one space fewer
			}
			os.WriteFile(path, b, 0o600)
		}, "impossible header"},
		{"header edited", func(t *testing.T, _ *Store, path string) {
			b, _ := os.ReadFile(path)
			b = bytes.Replace(b, []byte(`"dims":64`), []byte(`"dims":46`), 1)
			os.WriteFile(path, b, 0o600)
		}, "header that fails its checksum"},
		{"padded", func(t *testing.T, _ *Store, path string) {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, append(b, 0, 0, 0, 0), 0o600)
		}, "truncated or padded"},
		{"an area cut short", func(t *testing.T, _ *Store, path string) {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, b[:len(b)-100], 0o600)
		}, "truncated or padded"},
		{"a vector changed", func(t *testing.T, _ *Store, path string) {
			b, _ := os.ReadFile(path)
			b[bytes.IndexByte(b, '\n')+64+48+200] ^= 0x10
			os.WriteFile(path, b, 0o600)
		}, "fails its checksum"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, VectorsFile)
			s := openStore(t, dir, Options{Embedder: newHashEmbedder()})
			putFacts(t, s)
			want, _ := s.Search(ctx, "user terminal", SearchOptions{Mode: ModeVector})
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			tc.do(t, s, path)
			emb := newHashEmbedder()
			s2 := openStore(t, dir, Options{Embedder: emb})
			notes := strings.Join(s2.Notices(), "\n")
			if tc.notice == "" && notes != "" || !strings.Contains(notes, tc.notice) {
				t.Fatalf("notices %q, want %q", notes, tc.notice)
			}
			if tc.notice == "" && emb.calls.Load() != 0 {
				t.Fatalf("the file was read as damaged: %d embedding calls", emb.calls.Load())
			}
			got, err := s2.Search(ctx, "user terminal", SearchOptions{Mode: ModeVector})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(hitIDs(got)) != fmt.Sprint(hitIDs(want)) || must(s2.Stats(context.Background())).VectorCount != len(facts) {
				t.Fatalf("vector search %v, want %v", hitIDs(got), hitIDs(want))
			}
			if err := s2.Close(); err != nil {
				t.Fatal(err)
			}
			if v := vectorFileVersionOf(t, path); v != vectorFileVersion {
				t.Fatalf("after Close the file has version %d, want %d", v, vectorFileVersion)
			}
			s3 := openStore(t, dir, Options{Embedder: emb})
			defer s3.Close()
			if n := s3.Notices(); len(n) != 0 {
				t.Fatalf("reopening the rewritten file: %q", n)
			}
		})
	}
}

// TestCloseLeavesShortTails: a session that writes a few records leaves
// state.snap and vectors.hnsw as they were (the next open replays and embeds
// the short tail, with no notice, and finds the records); one that writes
// more than the lags allow rewrites both.
func TestCloseLeavesShortTails(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	snapPath, vecPath := filepath.Join(dir, SnapshotFile), filepath.Join(dir, VectorsFile)
	s := openStore(t, dir, Options{Embedder: newHashEmbedder()})
	putFacts(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	stamp := func() (time.Time, time.Time) {
		a, err := os.Stat(snapPath)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.Stat(vecPath)
		if err != nil {
			t.Fatal(err)
		}
		return a.ModTime(), b.ModTime()
	}
	for _, tc := range []struct {
		records   int
		rewritten bool
	}{{3, false}, {vectorLag + 1, true}} {
		t.Run(fmt.Sprintf("%d records", tc.records), func(t *testing.T) {
			snap0, vec0 := stamp()
			time.Sleep(20 * time.Millisecond) // a rewrite gets a later mtime
			s := openStore(t, dir, Options{Embedder: newHashEmbedder()})
			in := make([]Input, tc.records)
			for i := range in {
				in[i] = Input{ID: fmt.Sprintf("tail-%d-%d", tc.records, i), Text: fmt.Sprintf("a giraffe named number %d", i)}
			}
			if _, err := s.PutBatch(ctx, in, Source{}); err != nil {
				t.Fatal(err)
			}
			want := must(s.Hash(context.Background()))
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			snap1, vec1 := stamp()
			if got := !vec1.Equal(vec0); got != tc.rewritten {
				t.Errorf("vectors.hnsw rewritten: %v, want %v", got, tc.rewritten)
			}
			if snap1.Equal(snap0) != true && !tc.rewritten {
				t.Errorf("state.snap rewritten after %d records", tc.records)
			}
			s = openStore(t, dir, Options{Embedder: newHashEmbedder()})
			defer s.Close()
			if n := s.Notices(); len(n) != 0 {
				t.Fatalf("notices: %q", n)
			}
			if must(s.Hash(context.Background())) != want {
				t.Fatal("the state after the tail's replay differs")
			}
			res, err := s.Search(ctx, "giraffe", SearchOptions{Mode: ModeVector, Limit: 500})
			if err != nil || len(res.Hits) < tc.records {
				t.Fatalf("vector search found %d of the %d new records (%v)", len(res.Hits), tc.records, err)
			}
		})
	}
}
