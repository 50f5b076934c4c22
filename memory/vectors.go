package memory

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/exocortex/exocortex/memory/hnsw"
)

// Embedder turns texts into vectors. memory/embed provides an offline one and an
// Ollama one; any other can be plugged in.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Dimensions() int
	// ModelID names the model; the vector index is rebuilt when it changes.
	ModelID() string
}

// VectorHit is one nearest neighbour with its cosine similarity.
type VectorHit struct {
	ID         string
	Similarity float32
}

// VectorIndex is an approximate nearest-neighbour index keyed by record id, under
// cosine similarity. Search may run alongside one writer.
type VectorIndex interface {
	Add(ids []string, vecs [][]float32) error
	Delete(id string) bool
	Search(vec []float32, k int) ([]VectorHit, error)
	Lookup(id string) ([]float32, bool)
	Len() int
	Save(w io.Writer) error
	Load(r io.Reader) error
}

// hnswIndex is the VectorIndex on memory/hnsw.
type hnswIndex struct{ g *hnsw.Graph[string] }

// NewHNSWIndex returns an empty HNSW index with the package's default tunables.
func NewHNSWIndex() VectorIndex { return &hnswIndex{g: hnsw.NewGraph[string]()} }

func (h *hnswIndex) Add(ids []string, vecs [][]float32) error {
	nodes := make([]hnsw.Node[string], len(ids))
	for i := range ids {
		nodes[i] = hnsw.MakeNode(ids[i], vecs[i])
	}
	return h.g.Add(nodes...)
}
func (h *hnswIndex) Delete(id string) bool { return h.g.Delete(id) }
func (h *hnswIndex) Search(vec []float32, k int) ([]VectorHit, error) {
	res, err := h.g.SearchWithDistance(vec, k)
	if err != nil {
		return nil, err
	}
	out := make([]VectorHit, len(res))
	for i, r := range res {
		out[i] = VectorHit{ID: r.Key, Similarity: 1 - r.Distance}
	}
	return out, nil
}
func (h *hnswIndex) Lookup(id string) ([]float32, bool) { return h.g.Lookup(id) }
func (h *hnswIndex) LookupInto(id string, dst []float32) ([]float32, bool) {
	return h.g.LookupInto(id, dst)
}

// LoadBytes loads a graph file held in b, using b in place (see
// hnsw.Graph.ImportBytes); keep owns b's memory.
func (h *hnswIndex) LoadBytes(b []byte, trusted bool, keep any) error {
	return h.g.ImportBytes(b, hnsw.ImportOptions{Trusted: trusted, Keep: keep})
}
func (h *hnswIndex) Len() int               { return h.g.Len() }
func (h *hnswIndex) Save(w io.Writer) error { return h.g.Export(w) }
func (h *hnswIndex) Load(r io.Reader) error { return h.g.Import(r) }

// bytesLoader is a VectorIndex that can load from a file's bytes in memory
// (a mapping) instead of a reader, using them in place. trusted skips the
// checks that read every byte (the bytes were verified before); keep owns the
// memory and must be held while the index uses it.
type bytesLoader interface {
	LoadBytes(b []byte, trusted bool, keep any) error
}

// lookupIntoer is a VectorIndex that can write a stored vector into the caller's
// buffer instead of a new slice (the search's neighbour scoring reads hundreds).
type lookupIntoer interface {
	LookupInto(id string, dst []float32) ([]float32, bool)
}

// vectors is the vector projection: one index per area (so an area filter is exact
// and the library stays apart), the model they were built with, and the last
// journal sequence applied.
type vectors struct {
	mu      sync.RWMutex
	areas   map[string]VectorIndex
	newIdx  func() VectorIndex
	model   string
	dims    int
	applied uint64
	// saved: the file on disk holds exactly this projection (it was loaded at
	// applied and nothing was projected since), so Close need not rewrite it.
	saved bool
	// oldFormat: the file was of an older version, so Close rewrites it.
	oldFormat bool
	// fileSeq is the applied sequence of the usable file on disk (0: none).
	fileSeq uint64
}

// due reports whether the file on disk should be rewritten: it is missing,
// of an older format, or more than lag journal events behind the projection
// (a file a little behind is a good start: the next open embeds its tail).
func (v *vectors) due(lag uint64) bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.saved || v.applied == 0 {
		return false
	}
	return v.fileSeq == 0 || v.applied < v.fileSeq || v.applied-v.fileSeq >= lag
}

func newVectors(newIdx func() VectorIndex, model string, dims int) *vectors {
	return &vectors{areas: map[string]VectorIndex{}, newIdx: newIdx, model: model, dims: dims}
}

// vectorFileVersion is the version of vectors.hnsw's header: 5 is 4 with the
// areas' graphs in memory/hnsw's flat format version 3 (which also holds the
// key table, the upper layers' offsets and the key offsets, so that a mapped
// graph is used without a pass over its slots); 4 is 3 laid out
// for mapping (the header line padded with spaces, and each area's graph
// padded with zero bytes, to a multiple of 8 bytes, so that every graph's
// arrays are aligned where the file is mapped and are used in place); 3 holds
// the areas' graphs in memory/hnsw's flat format (version 2), read with one
// read per area; 2 and 1 hold them node by node, and 2 checks the body with
// CRC-32C (CRC32C), 1 with SHA-256 (SHA256). Versions 1-4 are still read, and
// rewritten as version 5 on Close.
const vectorFileVersion = 5

type vectorHeader struct {
	Version    int           `json:"version"`
	Model      string        `json:"model"`
	Dims       int           `json:"dims"`
	AppliedSeq uint64        `json:"applied_seq"`
	Areas      []vectorBlock `json:"areas"`
	SHA256     string        `json:"sha256,omitempty"` // version 1: of everything after the header line
	CRC32C     *uint32       `json:"crc32c,omitempty"` // version 2: the same, CRC-32C
	// HeaderCRC32C (versions 3 and 4) is the CRC-32C of the header's own JSON encoding
	// without this field; each area's graph checks itself (memory/hnsw's header
	// and body checksums), so the areas load concurrently with no pass over the
	// whole file.
	HeaderCRC32C *uint32 `json:"header_crc32c,omitempty"`
}

// headerSum is the checksum a version 3 header carries: of its JSON encoding
// with HeaderCRC32C unset.
func (h vectorHeader) headerSum() uint32 {
	h.HeaderCRC32C = nil
	b, _ := json.Marshal(h)
	return crc32.Checksum(b, castagnoli)
}

type vectorBlock struct {
	Area  string `json:"area"`
	Bytes int64  `json:"bytes"`
}

// loadVectors reads path. It returns a fresh, empty projection and a notice when
// the file is missing (notice empty if it never existed), damaged, or made with
// another model. A version 4 or 5 file is mapped and its graphs used in place; its
// body is verified in full unless checked holds its stamp (CheckedFile). stamp
// is the file's stamp to keep in CheckedFile: the one it had (trusted), or a
// new one if it was verified in full now and its change time is old enough by
// clock; nil if none.
func loadVectors(path string, newIdx func() VectorIndex, model string, dims int, checked map[string]fileStamp, clock func() time.Time) (v *vectors, notice string, stamp *fileStamp, trust bool) {
	v = newVectors(newIdx, model, dims)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return v, "", nil, false
	}
	if err != nil {
		return v, fmt.Sprintf("vector index %s cannot be read (%v): rebuilding it from the journal", path, err), nil, false
	}
	defer f.Close()
	// Version 4 (mapped) needs only the header line from the reader; older
	// versions read their body through it too.
	br := bufio.NewReaderSize(f, 64<<10)
	line, err := br.ReadBytes('\n')
	var h vectorHeader
	if err != nil || json.Unmarshal(line, &h) != nil || h.Version < 1 || h.Version > vectorFileVersion || (h.Version == 2 && h.CRC32C == nil) {
		return v, fmt.Sprintf("vector index %s has an unreadable header: rebuilding it from the journal", path), nil, false
	}
	if h.Version >= 3 && (h.HeaderCRC32C == nil || *h.HeaderCRC32C != h.headerSum()) {
		return v, fmt.Sprintf("vector index %s has a header that fails its checksum: rebuilding it from the journal", path), nil, false
	}
	if h.Model != model || h.Dims != dims {
		return v, fmt.Sprintf("vector index %s was built with model %q (%d dimensions), now %q (%d): re-embedding every record from the journal",
			path, h.Model, h.Dims, model, dims), nil, false
	}
	if h.Version >= 4 {
		v, notice, stamp, trust := loadMapped(f, len(line), h, v, path, checked, clock)
		v.oldFormat = notice == "" && h.Version < vectorFileVersion
		return v, notice, stamp, trust
	}
	if h.Version == 3 {
		v, notice := loadAreas(f, int64(len(line)), h, v, path)
		v.oldFormat = notice == ""
		return v, notice, nil, false
	}
	var sum hash.Hash = crc32.New(castagnoli)
	if h.Version == 1 {
		sum = sha256.New()
	}
	body := io.TeeReader(br, sum)
	for _, b := range h.Areas {
		if b.Bytes < 0 {
			return newVectors(newIdx, model, dims), fmt.Sprintf("vector index %s has an impossible header: rebuilding it from the journal", path), nil, false
		}
		block := &io.LimitedReader{R: body, N: b.Bytes}
		idx := newIdx()
		if err := idx.Load(block); err != nil {
			if block.N > 0 && errors.Is(err, io.ErrUnexpectedEOF) {
				return newVectors(newIdx, model, dims), fmt.Sprintf("vector index %s is truncated: rebuilding it from the journal", path), nil, false
			}
			if errors.Is(err, hnsw.ErrCorrupt) {
				return newVectors(newIdx, model, dims), fmt.Sprintf("vector index %s fails its checksum (area %s: %v): rebuilding it from the journal", path, b.Area, err), nil, false
			}
			return newVectors(newIdx, model, dims), fmt.Sprintf("vector index %s (area %s) cannot be loaded (%v): rebuilding it from the journal", path, b.Area, err), nil, false
		}
		if n, _ := io.Copy(io.Discard, block); n > 0 || block.N > 0 {
			return newVectors(newIdx, model, dims), fmt.Sprintf("vector index %s is truncated or its area %s has %d stray bytes: rebuilding it from the journal", path, b.Area, n), nil, false
		}
		v.areas[b.Area] = idx
	}
	if n, _ := io.Copy(sum, br); n > 0 {
		return newVectors(newIdx, model, dims), fmt.Sprintf("vector index %s has %d bytes after its last area: rebuilding it from the journal", path, n), nil, false
	}
	ok := false
	if h.Version == 1 {
		ok = hex.EncodeToString(sum.Sum(nil)) == h.SHA256
	} else {
		ok = sum.(hash.Hash32).Sum32() == *h.CRC32C
	}
	if !ok {
		return newVectors(newIdx, model, dims), fmt.Sprintf("vector index %s fails its checksum: rebuilding it from the journal", path), nil, false
	}
	v.applied = h.AppliedSeq
	v.oldFormat = true
	return v, "", nil, false
}

// loadAreas loads the areas of a version 3 file concurrently, each from its own
// section of f (the header line is the first start bytes).
func loadAreas(f *os.File, start int64, h vectorHeader, v *vectors, path string) (*vectors, string) {
	fresh := func() *vectors { return newVectors(v.newIdx, v.model, v.dims) }
	st, err := f.Stat()
	if err != nil {
		return fresh(), fmt.Sprintf("vector index %s cannot be read (%v): rebuilding it from the journal", path, err)
	}
	offs := make([]int64, len(h.Areas))
	end := start
	for i, b := range h.Areas {
		if b.Bytes < 0 || b.Bytes > st.Size() {
			return fresh(), fmt.Sprintf("vector index %s has an impossible header: rebuilding it from the journal", path)
		}
		offs[i] = end
		end += b.Bytes
	}
	if end != st.Size() {
		return fresh(), fmt.Sprintf("vector index %s is truncated or padded (%d bytes, the header says %d): rebuilding it from the journal", path, st.Size(), end)
	}
	idxs := make([]VectorIndex, len(h.Areas))
	errs := make([]error, len(h.Areas))
	var wg sync.WaitGroup
	for i, b := range h.Areas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			block := &io.LimitedReader{R: io.NewSectionReader(f, offs[i], b.Bytes), N: b.Bytes}
			idx := v.newIdx()
			if err := idx.Load(block); err != nil {
				errs[i] = err
				return
			}
			if n, _ := io.Copy(io.Discard, block); n > 0 {
				errs[i] = fmt.Errorf("%d stray bytes after the graph", n)
				return
			}
			idxs[i] = idx
		}()
	}
	wg.Wait()
	for i, b := range h.Areas {
		switch err := errs[i]; {
		case err == nil:
			v.areas[b.Area] = idxs[i]
		case errors.Is(err, io.ErrUnexpectedEOF):
			return fresh(), fmt.Sprintf("vector index %s is truncated (area %s): rebuilding it from the journal", path, b.Area)
		case errors.Is(err, hnsw.ErrCorrupt):
			return fresh(), fmt.Sprintf("vector index %s fails its checksum (area %s: %v): rebuilding it from the journal", path, b.Area, err)
		default:
			return fresh(), fmt.Sprintf("vector index %s (area %s) cannot be loaded (%v): rebuilding it from the journal", path, b.Area, err)
		}
	}
	v.applied = h.AppliedSeq
	return v, ""
}

// align8 rounds n up to a multiple of 8.
func align8(n int64) int64 { return (n + 7) &^ 7 }

// loadMapped loads a version 4 or 5 file: maps it and loads each area's graph
// from its section in place, concurrently. The header line is the first start
// bytes. The graphs' body checksums and link checks run unless checked holds
// the file's stamp.
func loadMapped(f *os.File, start int, h vectorHeader, v *vectors, path string, checked map[string]fileStamp, clock func() time.Time) (*vectors, string, *fileStamp, bool) {
	fresh := func() *vectors { return newVectors(v.newIdx, v.model, v.dims) }
	st, err := f.Stat()
	if err != nil {
		return fresh(), fmt.Sprintf("vector index %s cannot be read (%v): rebuilding it from the journal", path, err), nil, false
	}
	if start%8 != 0 {
		return fresh(), fmt.Sprintf("vector index %s has an impossible header (a line of %d bytes): rebuilding it from the journal", path, start), nil, false
	}
	offs := make([]int64, len(h.Areas))
	end := int64(start)
	for i, b := range h.Areas {
		if b.Bytes < 0 || b.Bytes > st.Size() {
			return fresh(), fmt.Sprintf("vector index %s has an impossible header: rebuilding it from the journal", path), nil, false
		}
		offs[i] = end
		end = align8(end + b.Bytes)
	}
	if end != st.Size() {
		return fresh(), fmt.Sprintf("vector index %s is truncated or padded (%d bytes, the header says %d): rebuilding it from the journal", path, st.Size(), end), nil, false
	}
	trust := trusted(checked, VectorsFile, st)
	m, err := mapFile(f, st.Size())
	if err != nil {
		return fresh(), fmt.Sprintf("vector index %s cannot be read (%v): rebuilding it from the journal", path, err), nil, false
	}
	idxs := make([]VectorIndex, len(h.Areas))
	errs := make([]error, len(h.Areas))
	var wg sync.WaitGroup
	for i, b := range h.Areas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			block := m.b[offs[i] : offs[i]+b.Bytes : offs[i]+b.Bytes]
			if !trust {
				for _, x := range m.b[offs[i]+b.Bytes : align8(offs[i]+b.Bytes)] {
					if x != 0 {
						errs[i] = fmt.Errorf("%w: the padding after the graph is not zero", hnsw.ErrCorrupt)
						return
					}
				}
			}
			idx := v.newIdx()
			var err error
			if bl, ok := idx.(bytesLoader); ok {
				err = bl.LoadBytes(block, trust, m)
			} else {
				err = idx.Load(bytes.NewReader(block))
			}
			if err != nil {
				errs[i] = err
				return
			}
			idxs[i] = idx
		}()
	}
	wg.Wait()
	for i, b := range h.Areas {
		switch err := errs[i]; {
		case err == nil:
			v.areas[b.Area] = idxs[i]
		case errors.Is(err, io.ErrUnexpectedEOF):
			return fresh(), fmt.Sprintf("vector index %s is truncated (area %s): rebuilding it from the journal", path, b.Area), nil, false
		case errors.Is(err, hnsw.ErrCorrupt):
			return fresh(), fmt.Sprintf("vector index %s fails its checksum (area %s: %v): rebuilding it from the journal", path, b.Area, err), nil, false
		default:
			return fresh(), fmt.Sprintf("vector index %s (area %s) cannot be loaded (%v): rebuilding it from the journal", path, b.Area, err), nil, false
		}
	}
	v.applied = h.AppliedSeq
	var stamp *fileStamp
	if trust {
		s := checked[VectorsFile]
		stamp = &s
	} else {
		stamp = stampFor(st, clock())
	}
	return v, "", stamp, trust
}

// save writes the projection to path through a temporary file and a rename.
func (v *vectors) save(path string) error {
	v.mu.Lock() // Close's: no writer runs, searches wait
	defer v.mu.Unlock()
	h := vectorHeader{Version: vectorFileVersion, Model: v.model, Dims: v.dims, AppliedSeq: v.applied}
	areas := sortedKeys(v.areas)
	// The graphs are written straight to the file, after room for the header
	// line (written last, when their sizes are known): building the body in
	// memory first cost a fresh buffer of the file's size, grown by doubling
	// (about 0.9 CPU-s of page faults and copies for 55 MB at 100k records,
	// paid by the `run -p` whose Close found the file due).
	room := v.headerRoom(areas)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("memory: writing %s: %w", path, err)
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	cw := &countWriter{w: bufio.NewWriterSize(io.NewOffsetWriter(f, room), 1<<20)}
	var zero [8]byte
	for _, area := range areas {
		start := cw.n
		if err := v.areas[area].Save(cw); err != nil {
			return fail(fmt.Errorf("memory: saving the vectors of area %s: %w", area, err))
		}
		h.Areas = append(h.Areas, vectorBlock{Area: area, Bytes: cw.n - start})
		// Each graph starts at a multiple of 8 bytes.
		cw.Write(zero[:align8(cw.n)-cw.n])
	}
	if err := cw.w.(*bufio.Writer).Flush(); err != nil {
		return fail(fmt.Errorf("memory: writing %s: %w", path, err))
	}
	sum := h.headerSum()
	h.HeaderCRC32C = &sum
	head, _ := json.Marshal(h)
	if int64(len(head))+1 > room {
		return fail(fmt.Errorf("memory: writing %s: a header of %d bytes does not fit the %d kept for it", path, len(head), room))
	}
	// The header line (newline included) is padded with spaces to the room
	// kept for it, a multiple of 8 bytes, so the graphs are aligned where the
	// file is mapped.
	line := append(head, bytes.Repeat([]byte{' '}, int(room)-len(head)-1)...)
	line = append(line, '\n')
	_, err = f.WriteAt(line, 0)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("memory: writing %s: %w", path, err)
	}
	v.fileSeq, v.saved, v.oldFormat = v.applied, true, false
	return nil
}

// headerRoom is the room, a multiple of 8 bytes, that the header line of a
// vector file of these areas needs at most: its JSON with every number at its
// widest, and the newline.
func (v *vectors) headerRoom(areas []string) int64 {
	widest := uint32(math.MaxUint32)
	h := vectorHeader{Version: vectorFileVersion, Model: v.model, Dims: v.dims, AppliedSeq: math.MaxUint64, HeaderCRC32C: &widest}
	for _, a := range areas {
		h.Areas = append(h.Areas, vectorBlock{Area: a, Bytes: math.MinInt64})
	}
	b, _ := json.Marshal(h)
	return align8(int64(len(b)) + 1)
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// put stores vectors for records of one area, removing them from any other area
// (a record can move). A zero vector (an empty text) has no direction: the record
// is left without one.
func (v *vectors) put(area string, ids []string, vecs [][]float32) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.saved = false
	var keepIDs []string
	var keepVecs [][]float32
	for i, id := range ids {
		for a, idx := range v.areas {
			if a != area || isZero(vecs[i]) {
				idx.Delete(id)
			}
		}
		if !isZero(vecs[i]) {
			keepIDs = append(keepIDs, id)
			keepVecs = append(keepVecs, vecs[i])
		}
	}
	if len(keepIDs) == 0 {
		return nil
	}
	idx := v.areas[area]
	if idx == nil {
		idx = v.newIdx()
		v.areas[area] = idx
	}
	return idx.Add(keepIDs, keepVecs)
}

// remove drops id's vector, whichever area holds it.
func (v *vectors) remove(id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.saved = false
	for _, idx := range v.areas {
		idx.Delete(id)
	}
}

func isZero(vec []float32) bool {
	for _, x := range vec {
		if x != 0 {
			return false
		}
	}
	return true
}

// search asks each area's index for k neighbours and merges them by similarity.
func (v *vectors) search(vec []float32, areas []string, k int) ([]VectorHit, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	var all []VectorHit
	for _, a := range areas {
		idx := v.areas[a]
		if idx == nil {
			continue
		}
		hits, err := idx.Search(vec, k)
		if err != nil {
			return nil, fmt.Errorf("memory: vector search in area %s: %w", a, err)
		}
		all = append(all, hits...)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Similarity != all[j].Similarity {
			return all[i].Similarity > all[j].Similarity
		}
		return all[i].ID < all[j].ID
	})
	if len(all) > k {
		all = all[:k]
	}
	return all, nil
}

func (v *vectors) lookup(id, area string) ([]float32, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	idx := v.areas[area]
	if idx == nil {
		return nil, false
	}
	return idx.Lookup(id)
}

// lookupInto is lookup writing into dst's storage where the index can; the
// values are the same.
func (v *vectors) lookupInto(id, area string, dst []float32) ([]float32, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	idx := v.areas[area]
	if idx == nil {
		return dst[:0], false
	}
	if li, ok := idx.(lookupIntoer); ok {
		return li.LookupInto(id, dst)
	}
	return idx.Lookup(id)
}

func (v *vectors) areaNames() []string {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return sortedKeys(v.areas)
}

func (v *vectors) count() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	n := 0
	for _, idx := range v.areas {
		n += idx.Len()
	}
	return n
}

// EmbeddingChange says that a store's vectors were made with another embedding
// model than the one it was opened with, so Open re-embedded every record from
// the journal (Agent Zero's embedding_model_changed).
type EmbeddingChange struct {
	OldModel string
	OldDims  int
	NewModel string
	NewDims  int
}

// vectorModelChange reads the model and dimensions the header of the vector
// file at path names, and returns the change when they are not model and dims
// (nil when they are, or the file is missing or its header unreadable: then
// the vectors are rebuilt for another reason, which loadVectors says).
func vectorModelChange(path, model string, dims int) *EmbeddingChange {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadBytes('\n')
	var h vectorHeader
	if err != nil || json.Unmarshal(line, &h) != nil || h.Version < 1 || h.Version > vectorFileVersion || h.Model == "" {
		return nil
	}
	if h.Model == model && h.Dims == dims {
		return nil
	}
	return &EmbeddingChange{OldModel: h.Model, OldDims: h.Dims, NewModel: model, NewDims: dims}
}
