package fulltext

// BM25 statistics that do not depend on Bleve's segments.
//
// BM25 weighs a term by the number of documents (N) and divides a document's
// term frequency by its length relative to the average length. Bleve (scorch)
// takes N and the documents holding a term from the live documents, which is
// fine, but the average length from the sum of the field's dictionary sizes over
// the index's segments: a term found in five segments counts five times, once
// they merge into one it counts once. Background merges run when they run, so
// the same records scored differently from one search to the next (0.433
// against 0.401 for the same record and query), and a replayed session recalled
// other memories than the recording did (docs/replay.md).
//
// The index therefore keeps its own statistics and hands them to every search
// (Bleve's BM25 pre-search data): the number of live documents and the total
// analysed length of their text, so the average length derives from the true
// mean length of the text field (lengthShare), a function of the index's
// content alone. They live inside the
// index, in the same batch as the documents they count (internal key
// exocortex.bm25), so a crash leaves them consistent with what scorch kept.
// Each document stores its own length (field "len", stored, not indexed), so
// replacing or deleting it subtracts what it added without keeping a map of
// every document in memory.

import (
	"encoding/binary"
	"fmt"

	"github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"
)

// statsKey holds the index's BM25 totals: documents, then text length, each a
// big-endian uint64.
var statsKey = []byte("exocortex.bm25")

// lenField is the stored field holding a document's analysed text length.
const lenField = "len"

// scoredFields are the fields a query may search; Bleve refuses a search whose
// term queries name a field the statistics lack. The filter fields hold one
// short value per document, so their average length is 1.
var scoredFields = []string{"area", "key", "status", "tags", "created"}

// lengthShare divides the mean text length into the average Bleve's BM25
// divides each document's length by. Bleve's k1 (1.2) and b (0.75) are its
// package's, shared by every index; dividing the mean by 6 makes the length
// term k1·(1-b+b·6·len/mean) = 5.7·(0.053+0.947·len/mean), which is BM25 with
// k1 = 5.7 and b = 0.95 over the true mean: a strong length normalisation,
// as short memories should beat long ones that mention a word in passing.
// Measured (docs/perf/memory.md, "BM25 statistics"): 6 keeps the recall of
// make eval's LoCoMo conversations and generated set exactly as Bleve's
// per-segment statistics had them; 3 gained 0.002-0.004 on LoCoMo and lost
// 0.048 of BM25 recall@10 on the generated set, 1 (the plain mean) lost
// LoCoMo's adversarial questions (0.935 to 0.914).
const lengthShare = 6

// bm25Totals are the statistics of the index's live documents.
type bm25Totals struct {
	Docs    uint64 // live documents
	TextLen uint64 // the sum of their text fields' analysed lengths (tokens)
}

func (t bm25Totals) encode() []byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], t.Docs)
	binary.BigEndian.PutUint64(b[8:], t.TextLen)
	return b[:]
}

func decodeTotals(b []byte) (bm25Totals, bool) {
	if len(b) != 16 {
		return bm25Totals{}, false
	}
	return bm25Totals{Docs: binary.BigEndian.Uint64(b[:8]), TextLen: binary.BigEndian.Uint64(b[8:])}, true
}

// searchStats is what a search hands Bleve: N, and per field a total length
// whose ratio to N (rounded up, as Bleve does) is the average length.
func (t bm25Totals) searchStats() *search.BM25Stats {
	st := &search.BM25Stats{DocCount: float64(t.Docs), FieldCardinality: make(map[string]int, len(scoredFields)+1)}
	if t.Docs == 0 {
		// Nothing to score; Bleve wants the fields present all the same.
		st.FieldCardinality["text"] = 0
		for _, f := range scoredFields {
			st.FieldCardinality[f] = 0
		}
		return st
	}
	// A zero length would switch Bleve to TF-IDF for the field.
	st.FieldCardinality["text"] = int(max(t.TextLen/lengthShare, 1))
	for _, f := range scoredFields {
		st.FieldCardinality[f] = int(t.Docs)
	}
	return st
}

// Stats are the index's BM25 statistics, for tests and diagnostics.
type Stats struct {
	Docs      uint64  // live documents
	TextLen   uint64  // their text fields' total analysed length
	AvgLength float64 // the average length BM25 uses: TextLen/lengthShare/Docs, rounded up
}

// Stats returns the statistics every search scores with.
func (ix *Index) Stats() Stats {
	t := ix.totals.Load()
	if t == nil {
		return Stats{}
	}
	s := Stats{Docs: t.Docs, TextLen: t.TextLen}
	if t.Docs > 0 {
		s.AvgLength = float64((max(t.TextLen/lengthShare, 1) + t.Docs - 1) / t.Docs)
	}
	return s
}

// textLength is the number of tokens the text field's analyzer makes of text:
// the length Bleve gives the field (its norm is 1/√length).
func (ix *Index) textLength(text string) (uint64, error) {
	an := ix.idx.Mapping().AnalyzerNamed(textAnalyzer)
	if an == nil {
		return 0, fmt.Errorf("fulltext: the %s analyzer is not registered", textAnalyzer)
	}
	return uint64(len(an.Analyze([]byte(text)))), nil
}

// storedLengths returns the stored length of each of ids the index holds.
// The caller holds ix.mu for reading.
func (ix *Index) storedLengths(ids []string) (map[string]uint64, error) {
	out := make(map[string]uint64)
	if len(ids) == 0 {
		return out, nil
	}
	adv, err := ix.idx.Advanced()
	if err != nil {
		return nil, err
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if n, err := r.DocCount(); err != nil || n == 0 {
		return out, err
	}
	for _, id := range ids {
		doc, err := r.Document(id)
		if err != nil {
			return nil, fmt.Errorf("reading document %s: %w", id, err)
		}
		if doc == nil {
			continue
		}
		var n uint64
		doc.VisitFields(func(f index.Field) {
			if nf, ok := f.(index.NumericField); ok && f.Name() == lenField {
				if v, err := nf.Number(); err == nil && v > 0 {
					n = uint64(v)
				}
			}
		})
		out[id] = n
	}
	return out, nil
}

// loadTotals reads the statistics an opened index keeps. ok is false for an
// index that holds documents but no statistics: it was written before they
// existed, and must be rebuilt.
func (ix *Index) loadTotals() (ok bool, err error) {
	v, err := ix.idx.GetInternal(statsKey)
	if err != nil {
		return false, err
	}
	if t, ok := decodeTotals(v); ok {
		ix.totals.Store(&t)
		return true, nil
	}
	n, err := ix.idx.DocCount()
	if err != nil {
		return false, err
	}
	ix.totals.Store(&bm25Totals{})
	return n == 0, nil
}
