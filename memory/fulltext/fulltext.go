// Package fulltext is the memory store's BM25 index: a Bleve v2 (scorch) index over
// each record's text, with its area, tags, key, status and creation time as filter
// fields.
//
// The index is a projection of the memory journal, never the truth, which is what
// makes two shortcuts safe:
//
//   - Writes use scorch's unsafe batch mode (no fsync per batch, about twenty times
//     faster); a crash can leave the index behind or broken, and replaying the
//     journal repairs it.
//   - The index remembers the last journal sequence it applied (stored inside the
//     index, in the same batch as the documents), and a manifest beside it
//     (<dir>.manifest, with a CRC-32C of itself) lists every file, written on a
//     clean Close and removed on Open: each segment (*.zap) with its size,
//     modification time and the CRC-32 its footer holds, every other (small) file
//     with its size and CRC-32C. Open compares the directory with it, reading only
//     the small files and the segments' footers; a segment it cannot vouch for by
//     its size and time (one whose time changed, or written less than a second
//     before the manifest, when a later write could keep the same time) is checked
//     against its footer's CRC-32 in full. Close checks in full only the segments
//     that are not the ones Open vouched for. A mismatch means the index was
//     damaged while closed: Open discards it, starts empty and says why, so the
//     caller replays the journal into it. (Version 1 manifests, with a SHA-256 of
//     every file, are still read.) Damage that keeps a segment's size and time
//     (below the file system) is found by Index.CheckSegments, which reads them
//     all. A missing manifest means the process stopped with the index
//     open: Open then checks every segment against the CRC-32 in its own footer and
//     asks the index a probe query; on any doubt it discards the index (a rebuild
//     from the journal is cheap, a damaged index is not). When all is well it keeps
//     what scorch persisted, which is consistent up to its applied sequence, and the
//     caller replays from there (and compares the document count with its own).
//   - Close never marks damage clean: it checks the segments before it writes the
//     manifest. A search that panics inside Bleve (damaged files) is recovered and
//     returned as an error wrapping ErrDamaged; the caller rebuilds with Reset.
package fulltext

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
	"github.com/google/renameio/v2"
)

// Doc is what the index holds of one record.
type Doc struct {
	ID      string
	Text    string
	Area    string
	Key     string
	Status  string
	Tags    []string
	Created time.Time
}

// Filter narrows a search. Empty fields do not filter.
type Filter struct {
	Areas        []string // any of these areas
	ExcludeAreas []string // none of these areas
	Tags         []string // every one of these tags
	Key          string
	Statuses     []string // any of these statuses
	// ExcludeStatuses drops these statuses. Excluding the rare status is much
	// cheaper than requiring the common one, which matches nearly every document.
	ExcludeStatuses []string
	From, To        time.Time
}

// Hit is one search result, best first.
type Hit struct {
	ID    string
	Score float64
}

// Index is an open full-text index. Search is safe for concurrent use; Apply calls
// must not overlap each other.
type Index struct {
	dir string
	// mu guards idx, which Reset replaces; every use takes it for reading.
	mu      sync.RWMutex
	idx     bleve.Index
	applied atomic.Uint64
	// totals are the BM25 statistics every search scores with (stats.go);
	// Apply replaces them once its batch is written.
	totals atomic.Pointer[bm25Totals]
	stop   analysis.TokenMap // the English analyzer's stop words
	// sound lists the segments Open found sound (vouched for by the manifest
	// or checked in full): Close need not read them again while they keep
	// their size, time and footer.
	sound map[string]fileEntry
}

// ErrDamaged is wrapped by errors that show the index's files are damaged: a
// search that panicked or could not read a segment, a segment that fails its
// checksum. The index should be rebuilt (Reset, then the journal replayed).
var ErrDamaged = errors.New("the full-text index is damaged")

var appliedKey = []byte("exocortex.applied_seq")

// formatVersion is the manifest's version: 2 (sizes, times and CRCs); 1
// (SHA-256 of every file) is still read.
const formatVersion = 2

type manifest struct {
	Version    int         `json:"version"`
	AppliedSeq uint64      `json:"applied_seq"`
	Files      []fileEntry `json:"files"`
	// CRC32C (version 2) is the CRC-32C of the manifest's JSON encoding with
	// this field zero.
	CRC32C uint32 `json:"crc32c,omitempty"`
}

func (m manifest) sum() uint32 {
	m.CRC32C = 0
	b, _ := json.Marshal(m)
	return crc32.Checksum(b, castagnoli)
}

type fileEntry struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"` // version 1
	// Version 2: Mtime is the modification time (ns); CRC is a segment's
	// footer CRC-32 or another file's CRC-32C; Settled says the segment was
	// written at least settleTime before the manifest, so an unchanged size and
	// time vouch for it.
	Mtime   int64  `json:"mtime_ns,omitempty"`
	CRC     uint32 `json:"crc"`
	Settled bool   `json:"settled,omitempty"`
}

// settleTime is how long before a manifest a segment must have been written
// for its size and time to vouch for it: file times have a clock tick's
// resolution, so a write in the same tick as the segment's could keep them.
const settleTime = time.Second

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Open opens the index in dir, creating it if needed. notice is non-empty when the
// index had to be discarded and recreated (missing, unclean shutdown, checksum
// mismatch, unreadable); its AppliedSeq is then 0 and the caller must replay.
func Open(dir string) (ix *Index, notice string, err error) {
	mpath := dir + ".manifest"
	_, statErr := os.Stat(dir)
	switch {
	case errors.Is(statErr, fs.ErrNotExist):
		if _, err := os.Stat(mpath); err == nil {
			notice = fmt.Sprintf("full-text index %s is missing: rebuilding it from the journal", dir)
		}
	case statErr != nil:
		return nil, "", fmt.Errorf("fulltext: %s: %w", dir, statErr)
	default:
		problem, unclean, sound := verify(dir, mpath)
		if unclean {
			if err := CheckSegments(dir); err != nil {
				problem, unclean = fmt.Sprintf("was not closed cleanly (no manifest) and %v", err), false
			}
		}
		if problem != "" && !unclean {
			notice = fmt.Sprintf("full-text index %s %s: rebuilding it from the journal", dir, problem)
			if err := os.RemoveAll(dir); err != nil {
				return nil, "", fmt.Errorf("fulltext: removing the damaged index %s: %w", dir, err)
			}
			break
		}
		idx, err := openBleve(dir)
		if err != nil {
			notice = fmt.Sprintf("full-text index %s cannot be opened (%v): rebuilding it from the journal", dir, err)
			if err := os.RemoveAll(dir); err != nil {
				return nil, "", fmt.Errorf("fulltext: removing the damaged index %s: %w", dir, err)
			}
			break
		}
		ix := &Index{dir: dir, idx: idx, stop: englishStopWords(), sound: sound}
		if v, err := idx.GetInternal(appliedKey); err == nil && len(v) == 8 {
			ix.applied.Store(binary.BigEndian.Uint64(v))
		}
		if ok, err := ix.loadTotals(); err != nil || !ok {
			closeQuietly(idx)
			why := "predates its own BM25 statistics"
			if err != nil {
				why = fmt.Sprintf("has unreadable BM25 statistics (%v)", err)
			}
			notice = fmt.Sprintf("full-text index %s %s: rebuilding it from the journal", dir, why)
			if err := os.RemoveAll(dir); err != nil {
				return nil, "", fmt.Errorf("fulltext: removing the index %s: %w", dir, err)
			}
			break
		}
		if unclean {
			if err := ix.probe(); err != nil {
				closeQuietly(idx)
				notice = fmt.Sprintf("full-text index %s %s and fails a probe query (%v): rebuilding it from the journal", dir, problem, err)
				if err := os.RemoveAll(dir); err != nil {
					return nil, "", fmt.Errorf("fulltext: removing the damaged index %s: %w", dir, err)
				}
				break
			}
			// Scorch persists whole snapshots, and the applied sequence is part of
			// each, so what survived a crash is consistent up to that sequence:
			// the caller replays the rest (and checks the document count).
			notice = fmt.Sprintf("full-text index %s %s: catching up from the journal after seq %d", dir, problem, ix.AppliedSeq())
		}
		// From now on the index may change: until Close writes a new manifest, a
		// crash must be detected as one.
		if err := os.Remove(mpath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			idx.Close()
			return nil, "", fmt.Errorf("fulltext: %w", err)
		}
		return ix, notice, nil
	}
	os.Remove(mpath)
	idx, err := bleve.NewUsing(dir, newMapping(), scorch.Name, scorch.Name, map[string]interface{}{"unsafe_batch": true})
	if err != nil {
		return nil, "", fmt.Errorf("fulltext: creating the index %s: %w", dir, err)
	}
	ix = &Index{dir: dir, idx: idx, stop: englishStopWords()}
	ix.totals.Store(&bm25Totals{})
	return ix, notice, nil
}

// probe asks the index for its documents and for a word, so that damage the
// checksums missed shows up now rather than in the first real search.
func (ix *Index) probe() error {
	ctx := context.Background()
	if _, err := ix.Search(ctx, "", Filter{}, 10); err != nil {
		return err
	}
	if _, err := ix.Search(ctx, "the memory", Filter{}, 10); err != nil {
		return err
	}
	_, err := ix.Count()
	return err
}

func closeQuietly(idx bleve.Index) {
	defer func() { recover() }() // a damaged index may panic while closing
	idx.Close()
}

// zapFooterCRC is the size of the CRC-32 (IEEE) that ends every scorch (zap)
// segment file; it covers every byte before it.
const zapFooterCRC = 4

func newMapping() mapping.IndexMapping {
	text := bleve.NewTextFieldMapping()
	text.Analyzer = en.AnalyzerName
	text.Store = false
	text.IncludeTermVectors = false
	text.IncludeInAll = false
	text.DocValues = false

	kw := func() *mapping.FieldMapping {
		f := bleve.NewKeywordFieldMapping()
		f.Analyzer = keyword.Name
		f.Store = false
		f.IncludeTermVectors = false
		f.IncludeInAll = false
		f.DocValues = false
		return f
	}
	created := bleve.NewDateTimeFieldMapping()
	created.Store = false
	created.IncludeInAll = false
	created.DocValues = false

	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt("text", text)
	doc.AddFieldMappingsAt("area", kw())
	doc.AddFieldMappingsAt("key", kw())
	doc.AddFieldMappingsAt("status", kw())
	doc.AddFieldMappingsAt("tags", kw())
	doc.AddFieldMappingsAt("created", created)
	// The document's analysed text length, stored for the statistics (stats.go).
	length := bleve.NewNumericFieldMapping()
	length.Index = false
	length.Store = true
	length.IncludeInAll = false
	length.DocValues = false
	doc.AddFieldMappingsAt(lenField, length)

	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.DefaultAnalyzer = en.AnalyzerName
	m.ScoringModel = index.BM25Scoring
	m.StoreDynamic = false
	m.IndexDynamic = false
	m.DocValuesDynamic = false
	return m
}

type docFields struct {
	Text    string    `json:"text"`
	Area    string    `json:"area"`
	Key     string    `json:"key,omitempty"`
	Status  string    `json:"status"`
	Tags    []string  `json:"tags,omitempty"`
	Created time.Time `json:"created"`
	Len     uint64    `json:"len"`
}

// Bounds on what one document puts into the index. The record keeps its whole
// text (the journal and the state hold it); the index takes a bounded part, so
// that one huge record (a 10 MB paste, a base64 blob that is one long "word")
// cannot make every search slow and every segment huge.
const (
	// MaxIndexedBytes is how much of a document's text is indexed.
	MaxIndexedBytes = 256 << 10
	// MaxTokenBytes is the longest run of letters and digits indexed as it is;
	// a longer one is indexed by its first MaxTokenBytes bytes.
	MaxTokenBytes = 128
)

// Bound returns the part of text the index takes (see MaxIndexedBytes and
// MaxTokenBytes) and whether that is less than the whole text.
func Bound(text string) (string, bool) {
	cut := false
	if len(text) > MaxIndexedBytes {
		end := MaxIndexedBytes
		for end > 0 && !utf8.RuneStart(text[end]) {
			end--
		}
		text, cut = text[:end], true
	}
	if !hasLongToken(text) {
		return text, cut
	}
	var b strings.Builder
	b.Grow(len(text))
	run := 0
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			run += utf8.RuneLen(r)
			if run > MaxTokenBytes {
				continue
			}
		} else {
			run = 0
		}
		b.WriteRune(r)
	}
	return b.String(), true
}

func hasLongToken(text string) bool {
	run := 0
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if run += utf8.RuneLen(r); run > MaxTokenBytes {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// AppliedSeq is the last journal sequence whose effects the index holds.
func (ix *Index) AppliedSeq() uint64 { return ix.applied.Load() }

// Dir returns the index directory.
func (ix *Index) Dir() string { return ix.dir }

// Apply indexes docs (replacing any with the same id), removes deletes, and records
// seq as applied, all in one batch.
func (ix *Index) Apply(docs []Doc, deletes []string, seq uint64) error {
	ids := make([]string, 0, len(docs)+len(deletes))
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	ids = append(ids, deletes...)
	ix.mu.RLock()
	b := ix.idx.NewBatch()
	// What the replaced and deleted documents added to the statistics.
	held, err := ix.storedLengths(ids)
	ix.mu.RUnlock()
	if err != nil {
		return fmt.Errorf("fulltext: reading the documents a batch replaces in %s: %w (%v)", ix.dir, ErrDamaged, err)
	}
	t := *ix.totals.Load()
	for _, d := range docs {
		text, _ := Bound(d.Text)
		n, err := ix.textLength(text)
		if err != nil {
			return err
		}
		if old, ok := held[d.ID]; ok {
			t.TextLen -= min(old, t.TextLen)
		} else {
			t.Docs++
		}
		held[d.ID] = n
		t.TextLen += n
		if err := b.Index(d.ID, docFields{Text: text, Area: d.Area, Key: d.Key, Status: d.Status, Tags: d.Tags, Created: d.Created.UTC(), Len: n}); err != nil {
			return fmt.Errorf("fulltext: indexing record %s: %w", d.ID, err)
		}
	}
	for _, id := range deletes {
		if old, ok := held[id]; ok {
			t.TextLen -= min(old, t.TextLen)
			t.Docs--
			delete(held, id)
		}
		b.Delete(id)
	}
	b.SetInternal(statsKey, t.encode())
	if seq > ix.applied.Load() {
		var v [8]byte
		binary.BigEndian.PutUint64(v[:], seq)
		b.SetInternal(appliedKey, v[:])
	}
	if err := ix.batch(b); err != nil {
		return fmt.Errorf("fulltext: writing a batch of %d documents to %s: %w", len(docs)+len(deletes), ix.dir, err)
	}
	if seq > ix.applied.Load() {
		ix.applied.Store(seq)
	}
	ix.totals.Store(&t)
	return nil
}

// batch writes b under the read lock; a panic inside Bleve becomes an error.
func (ix *Index) batch(b *bleve.Batch) (err error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w (panic: %v)", ErrDamaged, r)
		}
	}()
	return ix.idx.Batch(b)
}

// Flush waits until every batch so far is on disk. Unsafe batches return before
// they are persisted, and scorch's Close does not persist them: a last batch with a
// persisted callback is the way to wait for the persister. A long run of batches
// (a rebuild) should flush now and then, or unpersisted segments pile up in memory.
func (ix *Index) Flush() error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.flushLocked()
}

func (ix *Index) flushLocked() error {
	done := make(chan error, 1)
	b := ix.idx.NewBatch()
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], ix.applied.Load())
	b.SetInternal(appliedKey, v[:])
	b.SetPersistedCallback(func(err error) { done <- err })
	if err := ix.idx.Batch(b); err != nil {
		if errors.Is(err, bleve.ErrorIndexClosed) {
			return fmt.Errorf("fulltext: flushing %s: %w", ix.dir, err)
		}
		// A batch reads the segments' id dictionaries: failing, they are damaged.
		return fmt.Errorf("fulltext: flushing %s: %w (%v)", ix.dir, ErrDamaged, err)
	}
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("fulltext: persisting %s: %w", ix.dir, err)
		}
	case <-time.After(2 * time.Minute):
		return fmt.Errorf("fulltext: persisting %s did not finish in two minutes", ix.dir)
	}
	return nil
}

// Count returns the number of documents.
func (ix *Index) Count() (n uint64, err error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("fulltext: counting the documents of %s: %w (panic: %v)", ix.dir, ErrDamaged, r)
		}
	}()
	return ix.idx.DocCount()
}

// Close persists what unsafe batches left in memory, closes the index and writes
// its manifest, marking it clean.
//
// A segment that fails its checksum is not marked clean: Close then returns an
// error wrapping ErrDamaged and writes no manifest, so the next Open rebuilds.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if err := ix.flushLocked(); err != nil {
		closeQuietly(ix.idx)
		return err
	}
	if err := ix.idx.Close(); err != nil {
		return fmt.Errorf("fulltext: closing %s: %w", ix.dir, err)
	}
	files, err := listFiles(ix.dir)
	if err != nil {
		return fmt.Errorf("fulltext: listing %s: %w", ix.dir, err)
	}
	// The segments Open found sound and that are unchanged are not read
	// again; every other one (written in this session) is checked in full.
	now := time.Now()
	for i, f := range files {
		if !isSegment(f.Name) {
			continue
		}
		if old, ok := ix.sound[f.Name]; !ok || old.Size != f.Size || old.Mtime != f.Mtime || old.CRC != f.CRC {
			if err := checkSegment(filepath.Join(ix.dir, filepath.FromSlash(f.Name))); err != nil {
				return fmt.Errorf("fulltext: %s is not marked clean, so the next open rebuilds it: %w", ix.dir, err)
			}
		}
		files[i].Settled = now.Sub(time.Unix(0, f.Mtime)) >= settleTime
	}
	m := manifest{Version: formatVersion, AppliedSeq: ix.applied.Load(), Files: files}
	m.CRC32C = m.sum()
	b, _ := json.Marshal(m)
	if err := renameio.WriteFile(ix.dir+".manifest", b, 0o600); err != nil {
		return fmt.Errorf("fulltext: writing the manifest of %s: %w", ix.dir, err)
	}
	return nil
}

// Reset discards the index's contents and starts it empty (applied sequence 0),
// for a caller that found it damaged and replays the journal into it. Searches
// meanwhile see the new, filling index.
func (ix *Index) Reset() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	closeQuietly(ix.idx)
	if err := os.RemoveAll(ix.dir); err != nil {
		return fmt.Errorf("fulltext: removing %s: %w", ix.dir, err)
	}
	os.Remove(ix.dir + ".manifest")
	idx, err := bleve.NewUsing(ix.dir, newMapping(), scorch.Name, scorch.Name, map[string]interface{}{"unsafe_batch": true})
	if err != nil {
		return fmt.Errorf("fulltext: creating the index %s: %w", ix.dir, err)
	}
	ix.idx = idx
	ix.sound = nil
	ix.applied.Store(0)
	ix.totals.Store(&bm25Totals{})
	return nil
}
