package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/exocortex/exocortex/memory/fulltext"
	"github.com/exocortex/exocortex/staging"
)

// openProjections brings the indexes up to date; the stamp of a vector file it
// keeps goes into stamps.
func (s *Store) openProjections(ctx context.Context, loads *indexLoads, stamps map[string]fileStamp) error {
	last := s.journal.LastSeq()
	ftDir := loads.ftDir
	ftr := <-loads.ft
	vr, hasVec := <-loads.vec
	if ftr.err != nil {
		return fmt.Errorf("memory: %w", ftr.err)
	}
	if ftr.note != "" {
		s.notice(ftr.note)
	}
	s.ft = ftr.ix
	var err error
	if s.ft.AppliedSeq() > last {
		s.notice(fmt.Sprintf("full-text index %s is ahead of the journal (seq %d > %d): rebuilding it", ftDir, s.ft.AppliedSeq(), last))
		s.ft.Close()
		os.RemoveAll(ftDir)
		os.Remove(ftDir + ".manifest")
		if s.ft, _, err = fulltext.Open(ftDir); err != nil {
			return fmt.Errorf("memory: %w", err)
		}
	}
	if vr.embErr != nil {
		s.notice(fmt.Sprintf("the embedder is not available (%v): searching with BM25 alone", vr.embErr))
	}
	// The embedder Options.LoadEmbedder made is the store's from now on; the
	// goroutine that made it is done (it sent vr).
	s.opts.Embedder = vr.emb
	if e := vr.emb; e != nil && hasVec {
		vpath := filepath.Join(s.dir, VectorsFile)
		v, note, change := vr.v, vr.note, vr.change
		if note != "" {
			s.notice(note)
		}
		s.embChange = change
		if v.applied > last {
			s.notice(fmt.Sprintf("vector index %s is ahead of the journal (seq %d > %d): rebuilding it", vpath, v.applied, last))
			v = newVectors(s.opts.NewVectorIndex, e.ModelID(), e.Dimensions())
		} else if vr.stamp != nil {
			stamps[VectorsFile] = *vr.stamp
			if vr.trusted {
				s.trusted = append(s.trusted, VectorsFile)
			}
		}
		s.vec = v
	}

	// Replay the journal into the state, noting which records each projection
	// has not seen yet. With a snapshot the state starts at its sequence, and
	// the journal is read from there, or from where a projection stopped if
	// that is earlier (a projection that starts empty takes every record).
	ftFrom := s.ft.AppliedSeq()
	vecFrom := uint64(0)
	if s.vec != nil {
		vecFrom = s.vec.applied
	}
	since := s.state.applied
	for _, from := range []uint64{ftFrom, vecFrom} {
		if from > 0 && from < since {
			since = from
		}
	}
	ftTouched, vecTouched := map[string]bool{}, map[string]bool{}
	if since > 0 && (ftFrom == 0 || s.vec != nil && vecFrom == 0) {
		s.state.each(func(r *Record) bool {
			if ftFrom == 0 {
				ftTouched[r.ID] = true
			}
			if s.vec != nil && vecFrom == 0 {
				vecTouched[r.ID] = true
			}
			return true
		})
	}
	progress := s.replayProgress(last - since)
	err = s.journal.Read(ctx, since, func(r staging.Record) error {
		progress(r.Seq - since)
		if r.Seq <= s.state.applied {
			// Already in the snapshot: only note what it touched for a
			// projection that stopped before it.
			for _, id := range eventRefs(r.Payload) {
				if r.Seq > ftFrom && isMemoryKind(r.Kind) {
					ftTouched[id] = true
				}
				if r.Seq > vecFrom && (r.Kind == KindUpsert || r.Kind == KindMerge || r.Kind == KindDelete) {
					vecTouched[id] = true
				}
			}
			return nil
		}
		chs := s.applyOrRecover(r, s.recover)
		for _, c := range chs {
			if c.content && r.Seq > ftFrom {
				ftTouched[c.id] = true
			}
			if (c.vector || c.deleted) && r.Seq > vecFrom {
				vecTouched[c.id] = true
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("memory: replaying the journal of %s: %w", s.dir, err)
	}
	if n := len(ftTouched); n >= longCatchUp {
		s.log.Warn("memory: indexing records for full-text search", "records", n, "index", ftDir)
	}
	if n := len(vecTouched); s.vec != nil && n >= longCatchUp {
		s.log.Warn("memory: embedding records for the vector index", "records", n, "model", s.vec.model)
	}
	if len(ftTouched) > 0 || ftFrom < last {
		if err := s.projectFulltext(sortedSet(ftTouched), last); err != nil {
			return err
		}
	}
	// Every record has one document: a different count means the index lost or
	// kept something it should not have (a crash inside scorch, a stray copy).
	if n, err := s.ft.Count(); err != nil || n != uint64(s.state.Len()) {
		s.notice(fmt.Sprintf("full-text index %s holds %d documents for %d records (%v): rebuilding it from the journal", ftDir, n, s.state.Len(), err))
		if err := s.rebuildFulltext(); err != nil {
			return err
		}
	}
	if s.vec != nil && (len(vecTouched) > 0 || vecFrom < last) {
		if err := s.projectVectors(ctx, sortedSet(vecTouched), last); err != nil {
			s.vectorFailure(err)
		}
	}
	if s.vec != nil {
		s.vec.saved = s.vec.applied == vecFrom && vecFrom > 0 && !s.vec.oldFormat
		if !s.vec.oldFormat {
			s.vec.fileSeq = vecFrom
		}
	}
	// A record of the snapshot that the tail's events or the projections
	// read may have turned out damaged.
	s.repairLocked(ctx)
	if s.snapshotDue() {
		// A long replayed tail goes into a new snapshot now, so that the next
		// open (perhaps after a crash) does not replay it again.
		s.saveSnapshot()
	}
	return nil
}

// Open and Close leave the files of the state and the vector index as they are
// when the journal is only a little ahead of them: rewriting them (20 MB and 55
// MB at 100k records) costs far more than the next open's replay of a short
// tail, which is what a one-shot `exocortex run -p` that saves a few records
// would otherwise pay on every exit.
const (
	// snapshotLag is how far (in journal events) the state snapshot may be
	// behind when Open or Close leave it.
	snapshotLag = 500
	// vectorLag is the same for vectors.hnsw; its tail costs an embedding and
	// a graph insert per record at the next open, so it is shorter.
	vectorLag = 100
)

// snapshotDue reports whether the state snapshot is missing or more than
// snapshotLag events behind the journal.
func (s *Store) snapshotDue() bool {
	last, at := s.journal.LastSeq(), s.snapSeq.Load()
	return last > at && (at == 0 || last-at >= snapshotLag) || last > 0 && s.tallyCounted()
}

// tallyCounted reports whether the state's tally was counted in this process
// rather than read from the snapshot, which then lacks it.
func (s *Store) tallyCounted() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.state != nil && s.state.counted.Load()
}

// replayProgress returns a function to call with the number of events replayed
// so far: for a long replay (a missing or stale snapshot) it logs the progress
// every 100,000 events.
func (s *Store) replayProgress(total uint64) func(done uint64) {
	if total < 2*replayReportEvery {
		return func(uint64) {}
	}
	start := time.Now()
	s.log.Warn("memory: replaying the journal into the record state", "events", total, "store", s.dir)
	return func(done uint64) {
		if done%replayReportEvery == 0 {
			s.log.Warn("memory: replaying the journal", "done", done, "of", total, "elapsed", time.Since(start).Round(time.Millisecond))
		}
	}
}

// saveSnapshot writes the state snapshot at the journal's current end. s.wmu is
// held, or the store is not yet shared. A failure is a notice: the journal holds
// everything and the next open replays more.
func (s *Store) saveSnapshot() {
	at := s.journal.Position()
	s.mu.RLock()
	if at.Seq == 0 || at.Seq == s.snapSeq.Load() && !s.state.counted.Load() || s.state.applied != at.Seq {
		// nothing new, or the state stopped short of the journal (a replay
		// that failed): a snapshot must hold exactly what it says
		s.mu.RUnlock()
		return
	}
	err := writeSnapshot(filepath.Join(s.dir, SnapshotFile), s.state, at)
	s.mu.RUnlock()
	if err != nil {
		s.notice(fmt.Sprintf("%v (the next open replays the journal instead)", err))
		return
	}
	s.snapSeq.Store(at.Seq)
	s.state.counted.Store(false)
}

// rebuildFulltext discards the full-text index and indexes every record again.
// s.wmu is held (or the store is not yet shared).
func (s *Store) rebuildFulltext() error {
	s.ftMu.Lock()
	defer s.ftMu.Unlock()
	s.ftPending = pendingFulltext{} // every record is indexed again below
	if err := s.ft.Reset(); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	s.ftRebuilds.Add(1)
	s.mu.RLock()
	ids := s.state.sortedIDs()
	s.mu.RUnlock()
	return s.projectFulltextLocked(ids, s.journal.LastSeq())
}

// searchFulltext is the BM25 leg of a search. A damaged index (a panic or a read
// error inside Bleve) never takes the process down: it is reported, rebuilt from
// the journal's state, and asked again.
func (s *Store) searchFulltext(ctx context.Context, query string, f fulltext.Filter, k int, qo fulltext.QueryOptions) ([]fulltext.Hit, error) {
	s.syncFulltext()
	gen := s.ftRebuilds.Load()
	hits, err := s.ft.SearchWith(ctx, query, f, k, qo)
	if err == nil || !errors.Is(err, fulltext.ErrDamaged) {
		return hits, err
	}
	s.wmu.Lock()
	if s.closed {
		s.wmu.Unlock()
		return nil, err
	}
	if s.ftRebuilds.Load() == gen { // no other search rebuilt it meanwhile
		s.notice(fmt.Sprintf("%v: rebuilding the full-text index from the journal", err))
		if rerr := s.rebuildFulltext(); rerr != nil {
			s.wmu.Unlock()
			return nil, fmt.Errorf("%w; rebuilding it failed: %w", err, rerr)
		}
	}
	s.wmu.Unlock()
	return s.ft.SearchWith(ctx, query, f, k, qo)
}

// CheckFiles verifies in full the files Open may take on trust (see
// CheckedFile): state.snap (its checksum, then a decode) and vectors.hnsw
// (every area's body checksum and links), whatever CheckedFile says. A missing
// file passes (the journal holds everything). nil means sound; an error names
// the file and what is wrong with it (the next Open would then find it too,
// unless the damage keeps the file's stamp: remove CheckedFile, or the file,
// to have it rebuilt).
func (s *Store) CheckFiles() error {
	s.wmu.Lock() // no snapshot is written meanwhile
	defer s.wmu.Unlock()
	var errs []error
	snapPath := filepath.Join(s.dir, SnapshotFile)
	if _, err := readSnapshot(snapPath); err != nil && !errors.Is(err, errNoSnapshot) {
		errs = append(errs, fmt.Errorf("state snapshot %s %w", snapPath, err))
	}
	if s.vec != nil {
		path := filepath.Join(s.dir, VectorsFile)
		if _, note, _, _ := loadVectors(path, s.opts.NewVectorIndex, s.vec.model, s.vec.dims, nil, time.Now); note != "" {
			errs = append(errs, errors.New(strings.TrimSuffix(note, ": rebuilding it from the journal")))
		}
	}
	return errors.Join(errs...)
}

// CheckFulltext verifies the live full-text index: every segment it reads
// against its checksum (not the files Bleve is still writing in the background,
// which no snapshot holds yet), and the document count against the records. nil
// means sound.
func (s *Store) CheckFulltext() error {
	s.syncFulltext()
	if err := s.ft.CheckSegments(); err != nil {
		return fmt.Errorf("full-text index %s: %w", s.ft.Dir(), err)
	}
	n, err := s.ft.Count()
	if err != nil {
		return err
	}
	s.mu.RLock()
	recs := s.state.Len()
	s.mu.RUnlock()
	if n != uint64(recs) {
		return fmt.Errorf("full-text index %s holds %d documents for %d records", s.ft.Dir(), n, recs)
	}
	return nil
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// projectFulltext re-derives the documents of ids from the state and records seq
// as applied.
func (s *Store) projectFulltext(ids []string, seq uint64) error {
	s.ftMu.Lock()
	defer s.ftMu.Unlock()
	return s.projectFulltextLocked(ids, seq)
}

// projectFulltextLocked is projectFulltext with s.ftMu held.
func (s *Store) projectFulltextLocked(ids []string, seq uint64) error {
	bs := s.opts.BatchSize
	for start := 0; start < len(ids) || start == 0; start += bs {
		end := min(start+bs, len(ids))
		var docs []fulltext.Doc
		var dels []string
		s.mu.RLock()
		for _, id := range ids[start:end] {
			r := s.state.get(id)
			if r == nil {
				dels = append(dels, id)
				continue
			}
			docs = append(docs, fulltext.Doc{ID: r.ID, Text: indexText(r), Area: r.Area, Key: r.Key, Status: string(r.Status), Tags: r.Tags, Created: r.Created})
		}
		s.mu.RUnlock()
		applied := uint64(0)
		if end == len(ids) {
			applied = seq
		}
		if err := s.ft.Apply(docs, dels, applied); err != nil {
			return fmt.Errorf("memory: %w", err)
		}
		if end >= len(ids) {
			break
		}
		// In a long catch-up, let the persister keep up (see fulltext.Flush).
		if (start/bs+1)%flushEvery == 0 {
			if err := s.ft.Flush(); err != nil {
				return fmt.Errorf("memory: %w", err)
			}
		}
	}
	return nil
}

// projectVectors re-embeds the records ids and records seq as applied.
func (s *Store) projectVectors(ctx context.Context, ids []string, seq uint64) error {
	if s.vec == nil {
		return nil
	}
	type item struct{ id, text string }
	byArea := map[string][]item{}
	s.mu.RLock()
	for _, id := range ids {
		r := s.state.get(id)
		if r == nil {
			s.vec.remove(id)
			continue
		}
		byArea[r.Area] = append(byArea[r.Area], item{r.ID, r.Text})
	}
	s.mu.RUnlock()
	bs := s.opts.BatchSize
	for _, area := range sortedKeys(byArea) {
		items := byArea[area]
		for start := 0; start < len(items); start += bs {
			chunk := items[start:min(start+bs, len(items))]
			texts := make([]string, len(chunk))
			cids := make([]string, len(chunk))
			for i, it := range chunk {
				texts[i], cids[i] = it.text, it.id
			}
			vecs, err := s.opts.Embedder.Embed(ctx, texts)
			if err != nil {
				return fmt.Errorf("embedding %d texts with %s: %w", len(texts), s.opts.Embedder.ModelID(), err)
			}
			if len(vecs) != len(texts) {
				return fmt.Errorf("embedder %s returned %d vectors for %d texts", s.opts.Embedder.ModelID(), len(vecs), len(texts))
			}
			if err := s.vec.put(area, cids, vecs); err != nil {
				return fmt.Errorf("adding vectors to area %s: %w", area, err)
			}
		}
	}
	s.vec.mu.Lock()
	if seq > s.vec.applied {
		s.vec.applied = seq
	}
	s.vec.mu.Unlock()
	return nil
}

// vectorFailure stops vector projection for the rest of the session: the journal
// and BM25 stay current, and the next Open catches the vectors up.
func (s *Store) vectorFailure(err error) {
	s.nmu.Lock()
	already := s.vecLag
	s.vecLag = true
	s.nmu.Unlock()
	if !already {
		s.notice(fmt.Sprintf("vector index stopped at journal seq %d (%v); records are saved and found by BM25, and vectors catch up on the next open", s.vec.applied, err))
	}
}

func (s *Store) vectorsLagging() bool {
	s.nmu.Lock()
	defer s.nmu.Unlock()
	return s.vecLag
}
