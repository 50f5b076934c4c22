package embed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/google/renameio/v2"
)

// IndexSuffix is appended to a word-vector file's name for its word index,
// which OpenWordVectors writes beside the file (or, where that directory is not
// writable, in the user's cache directory) the first time it loads the file.
const IndexSuffix = ".idx"

// OpenWordVectors maps a word-vector file and uses it in place: the header and
// the word index are checked, and words and vectors are read from the mapping
// when they are looked up. Nothing else is read, so a load costs milliseconds
// where ReadWordVectors reads, checksums and indexes the whole file.
//
// The word index lives beside the file (IndexSuffix) or in the user's cache
// directory; it names the file it was made from (size, modification time and
// both of the file's checksums). Where there is none, or it is stale (another
// file, a changed one, another index version) or damaged, the whole file is
// checked as ReadWordVectors does, the index is made again and written, and the
// reason is logged (slog); if it cannot be written anywhere the load still
// works, paying the full check each time, and says so. The vectors are the
// file's own, so an embedder over them is the same as over ReadWordVectors'
// (the same model id, the same vectors bit for bit).
//
// A compact table in a file is decoded as ReadWordVectors does.
func OpenWordVectors(path string) (*WordVectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read word vectors: %w (run scripts/fetch-glove.sh to create it)", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read word vectors: %w", err)
	}
	buf, err := mapFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("read word vectors: %w", err)
	}
	var wv *WordVectors
	if IsCompact(buf) {
		wv, err = DecodeCompact(buf)
	} else {
		wv, err = openMapped(path, st, buf)
	}
	if err != nil {
		return nil, fmt.Errorf("read word vectors %s: %w", path, err)
	}
	return wv, nil
}

// openMapped uses the mapped full-format file buf in place.
func openMapped(path string, st fs.FileInfo, buf []byte) (*WordVectors, error) {
	l, err := layoutWordVectors(buf)
	if err != nil {
		return nil, err
	}
	src := wordIndexSource{kind: wiKindFile, size: uint64(len(buf)), mtime: uint64(st.ModTime().UnixNano()),
		headerSum: l.headerSum, bodySum: l.bodySum, words: uint32(l.n)}
	vocab := buf[l.vocabStart : l.vocabStart+int(l.vocab)]
	places := indexPaths(path, src)
	var ix *wordIndex
	var why error
	for _, p := range places {
		b, err := readIndex(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil {
			ix, err = parseWordIndex(b, src, l.vocab)
		}
		if err == nil && ix.count != l.n {
			ix, err = nil, wiCorrupt("%d words, the file has %d", ix.count, l.n)
		}
		if err == nil {
			break
		}
		if why == nil {
			why = fmt.Errorf("%s: %w", p, err)
		}
	}
	if ix == nil {
		if ix, err = rebuildIndex(path, places, why, l, buf, src); err != nil {
			return nil, err
		}
	}
	wv := &WordVectors{Dim: l.dim, Checksum: l.bodySum, place: &inPlace{ix: ix, vocab: vocab}}
	wv.Vectors = floats(buf[l.vecStart:], l.n*l.dim)
	if l.pcLen > 0 {
		wv.PC = floats(buf[l.pcStart:], l.pcLen)
	}
	return wv, nil
}

// rebuildIndex checks the whole file (as ReadWordVectors does), makes its index
// and writes it to the first place that takes it, logging why.
func rebuildIndex(path string, places []string, why error, l wvLayout, buf []byte, src wordIndexSource) (*wordIndex, error) {
	start := time.Now()
	if err := l.checkBody(buf); err != nil {
		return nil, err
	}
	offs, err := l.offsets(buf)
	if err != nil {
		return nil, err
	}
	b := buildWordIndex(src, offs, buf[l.vocabStart:l.vocabStart+int(l.vocab)])
	ix, err := parseWordIndex(b, src, l.vocab)
	if err != nil {
		return nil, fmt.Errorf("the word index just made does not read back: %w", err)
	}
	reason := "none yet"
	if why != nil {
		reason = why.Error()
	}
	var failed []error
	for _, p := range places {
		err := writeIndex(p, b)
		if err == nil {
			slog.Info("word vectors: made the word index, so later loads use the file in place",
				"file", path, "index", p, "why", reason, "ms", time.Since(start).Milliseconds())
			return ix, nil
		}
		failed = append(failed, err)
	}
	slog.Warn("word vectors: cannot write the word index, so every load checks and indexes the whole file",
		"file", path, "why", reason, "err", errors.Join(failed...))
	return ix, nil
}

// indexPaths lists where the word index of the file at path may be: beside the
// file (its real path, so links to one file share one index), then in the
// user's cache directory under a name made of the file's size and checksum.
func indexPaths(path string, src wordIndexSource) []string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	out := []string{real + IndexSuffix}
	if dir, err := os.UserCacheDir(); err == nil && dir != "" {
		name := fmt.Sprintf("%s-%d-%08x%s", filepath.Base(real), src.size, src.bodySum, IndexSuffix)
		out = append(out, filepath.Join(dir, "exocortex", name))
	}
	return out
}

// readIndex maps the index file at p.
func readIndex(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return mapFile(f, st.Size())
}

// writeIndex replaces the file at p with b through a temporary file, so a
// reader sees the old index or the new one, never half of one.
func writeIndex(p string, b []byte) error {
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return renameio.WriteFile(p, b, 0o644, renameio.WithStaticPermissions(0o644))
}

// compactLayout is where the parts of a compact table are.
type compactLayout struct {
	info                        CompactInfo
	lens, vocab, scales, values []byte
	pc                          []byte // nil without a principal component
	headerSum, bodySum          uint32
}

func layoutCompact(b []byte) (compactLayout, error) {
	info, err := ReadCompactInfo(b)
	if err != nil {
		return compactLayout{}, err
	}
	body := b[cqHeaderSize : len(b)-4]
	n, dim := info.Words, info.Dim
	vocab := int(binary.LittleEndian.Uint32(b[32:]))
	valBytes := n * dim * info.Bits / 8
	l := compactLayout{
		info:      info,
		lens:      body[:n],
		vocab:     body[n : n+vocab],
		scales:    body[n+vocab : n+vocab+4*n],
		values:    body[n+vocab+4*n : n+vocab+4*n+valBytes],
		headerSum: binary.LittleEndian.Uint32(b[60:]),
		bodySum:   binary.LittleEndian.Uint32(b[len(b)-4:]),
	}
	if binary.LittleEndian.Uint32(b[28:])&cqFlagPC != 0 {
		l.pc = body[n+vocab+4*n+valBytes:]
	}
	return l, nil
}

func (l compactLayout) source() wordIndexSource {
	return wordIndexSource{kind: wiKindCompact, size: uint64(cqHeaderSize + len(l.lens) + len(l.vocab) + len(l.scales) + len(l.values) + len(l.pc) + 4),
		headerSum: l.headerSum, bodySum: l.bodySum, words: uint32(l.info.SourceWords)}
}

// BuildCompactIndex checks a compact table in full and makes its word index,
// which LoadBuiltin reads beside the compiled-in table (cmd/glovecompact writes
// it; the output depends only on the table).
func BuildCompactIndex(table []byte) ([]byte, error) {
	l, err := layoutCompact(table)
	if err != nil {
		return nil, err
	}
	if crc32.Checksum(table[cqHeaderSize:len(table)-4], castagnoli) != l.bodySum {
		return nil, cqCorrupt("body checksum mismatch")
	}
	offs := make([]uint32, len(l.lens)+1)
	for i, n := range l.lens {
		offs[i+1] = offs[i] + uint32(n)
	}
	if int(offs[len(l.lens)]) != len(l.vocab) {
		return nil, cqCorrupt("the words take %d bytes, the header says %d", offs[len(l.lens)], len(l.vocab))
	}
	return buildWordIndex(l.source(), offs, l.vocab), nil
}

// compactInPlace uses a compact table in place through its index (made by
// BuildCompactIndex from this very table). The vectors are read from the
// table's values when looked up, each as DecodeCompact computes it.
func compactInPlace(table, index []byte) (*WordVectors, error) {
	l, err := layoutCompact(table)
	if err != nil {
		return nil, err
	}
	// The table is 5.6 MB: its checksum costs about a millisecond, and makes a
	// damaged table an error rather than wrong vectors.
	if crc32.Checksum(table[cqHeaderSize:len(table)-4], castagnoli) != l.bodySum {
		return nil, cqCorrupt("body checksum mismatch")
	}
	ix, err := parseWordIndex(index, l.source(), uint64(len(l.vocab)))
	if err != nil {
		return nil, err
	}
	if ix.count != l.info.Words {
		return nil, wiCorrupt("%d words, the table has %d", ix.count, l.info.Words)
	}
	wv := &WordVectors{Dim: l.info.Dim, Checksum: l.bodySum, SourceWords: l.info.SourceWords, QuantBits: l.info.Bits,
		place: &inPlace{ix: ix, vocab: l.vocab, scales: l.scales, values: l.values, bits: l.info.Bits}}
	if l.pc != nil {
		wv.PC = make([]float32, l.info.Dim)
		for j := range wv.PC {
			wv.PC[j] = math.Float32frombits(binary.LittleEndian.Uint32(l.pc[4*j:]))
		}
	}
	return wv, nil
}
