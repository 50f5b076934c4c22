package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/exocortex/exocortex/memory/fulltext"
	"github.com/exocortex/exocortex/staging"
)

// File names inside a store directory.
const (
	JournalFile  = "journal.jsonl"
	FulltextDir  = "fulltext"
	VectorsFile  = "vectors.hnsw"
	SnapshotFile = "state.snap"
	defaultBatch = 1000
	// flushEvery is how many index batches a catch-up writes between waits for
	// Bleve's persister, which bounds the memory its unpersisted segments hold.
	flushEvery = 50
	// longCatchUp is the catch-up size from which Open says what it is doing.
	longCatchUp = 10_000
	// replayReportEvery is how often a long replay logs its progress.
	replayReportEvery = 100_000
)

// Options configure a Store. The zero value works: BM25 only, fsync per write.
type Options struct {
	// Embedder computes vectors; nil runs the store on BM25 alone.
	Embedder Embedder
	// LoadEmbedder, used when Embedder is nil, makes the embedder while Open
	// reads the store: Open calls it once, in a goroutine of its own, as soon
	// as it holds the journal's lock, and waits for it only where the vectors
	// need it, so loading a large model overlaps reading the snapshot and the
	// full-text index. It is not called when Open fails before taking the lock
	// (the store is held elsewhere). A nil embedder runs the store on BM25
	// alone; so does an error, with a notice saying why.
	LoadEmbedder func() (Embedder, error)
	// NewVectorIndex makes an empty per-area vector index (default NewHNSWIndex).
	NewVectorIndex func() VectorIndex
	// Sync is the journal's fsync policy.
	Sync staging.SyncPolicy
	// Now stamps journal events (default time.Now).
	Now func() time.Time
	// Logger receives notices (default slog.Default()).
	Logger *slog.Logger
	// BatchSize bounds the records per index batch and per embedding call when
	// catching up or importing (default 1000).
	BatchSize int
	// Journal, when set, is the shared journal this store is a replica of
	// (memory.journal: nats://…): writes go to it, and the store's own
	// journal file follows it record for record, with the same sequence
	// numbers, fed by a subscription (shared.go). nil: the store's own
	// journal file is the journal, as for a single user. The store closes it.
	Journal Journal
	// OpenJournal, when set and Journal is not, makes the shared journal at
	// each Open (a memory service that closes and reopens its store).
	OpenJournal func(context.Context) (Journal, error)
	// checkClock is the time CheckedFile's margin is measured against
	// (default time.Now): tests move it to stamp files just written.
	checkClock func() time.Time
}

// Store is an open memory store. It is safe for concurrent use: searches run in
// parallel, writes one at a time. Only one process can open a store: a second gets
// an error naming the process that holds it.
type Store struct {
	dir  string
	opts Options
	log  *slog.Logger

	// ftMu serialises the full-text projections and guards ftPending: a
	// commit's records are indexed when something reads the index (a search,
	// the statistics, a check, Close) or a batch of them is waiting, not one
	// Bleve batch per commit (ftdefer.go).
	ftMu      sync.Mutex
	ftPending pendingFulltext

	wmu     sync.Mutex    // serialises writers: journal append, then projections
	lastID  [idBytes]byte // the last id nextID made (s.wmu)
	journal *staging.Log

	mu    sync.RWMutex // guards state
	state *State
	// recover is the state of a snapshot Open could not use, while Open
	// replays the journal: a damaged line's record comes from it (badevent.go).
	recover *recovery

	ft  *fulltext.Index
	vec *vectors // nil without an embedder
	ord order    // creation order, for neighbour context (guarded by mu and its own lock)
	// refFusion makes Search fuse by the map-based reference (fuse) and scan
	// every fused candidate, as it did before the fast path: tests compare.
	refFusion bool
	// ftRebuilds counts full-text rebuilds, so that concurrent searches that all
	// met a damaged index rebuild it once.
	ftRebuilds atomic.Int64

	// embChange is set when Open found the vectors made with another
	// embedding model (and re-embedded from the journal).
	embChange *EmbeddingChange

	nmu     sync.Mutex
	notices []string
	vecLag  bool // an embedding failed: vectors stopped at vec.applied until the next open
	closed  bool

	// snapSeq is the journal sequence of the state snapshot on disk (0: none),
	// written with s.wmu held.
	snapSeq atomic.Uint64

	// shared is the journal this store is a replica of (Options.Journal), nil
	// for a store whose own journal is the journal (shared.go).
	shared *sharing

	// trusted lists the files Open took as verified by CheckedFile, sorted.
	trusted []string

	// kept is the Census of every active record (the zero Filter), kept
	// current by the writes (censusTrack) and between opens (CensusFile).
	kept struct {
		sync.Mutex
		keptCensus
	}
}

// Open opens the store in dir, creating it if needed, replays the journal into the
// record state, and brings the indexes up to date (rebuilding any that is missing,
// damaged or built with another embedding model). What it repaired is in Notices.
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.NewVectorIndex == nil {
		opts.NewVectorIndex = NewHNSWIndex
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = defaultBatch
	}
	if opts.checkClock == nil {
		opts.checkClock = time.Now
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("memory: creating the store directory %s: %w", dir, err)
	}
	s := &Store{dir: dir, opts: opts, log: opts.Logger, state: newState()}
	// Once the journal's lock is held, the snapshot is read and the two indexes
	// are opened concurrently while the journal checks the snapshot's position
	// and scans its tail: none of them needs another's result, and on a large
	// store each takes a while. The snapshot is read whole under the lock: it is
	// renamed into place in one step, so what is read is one consistent
	// snapshot, of a prefix of the journal whoever wrote it last.
	snapPath := filepath.Join(dir, SnapshotFile)
	// The snapshot's body is checked and decoded while the journal checks its
	// prefix against the checkpoint in the header: a body that turns out
	// damaged leaves the state to be rebuilt from the journal, whose prefix the
	// checkpoint still vouches for.
	var snap *snapshot
	var snapErr error
	var decoded chan error
	var loads *indexLoads
	jopts := staging.Options{Sync: opts.Sync, Now: opts.Now, Logger: opts.Logger}
	var checked map[string]fileStamp
	var snapStamp *fileStamp
	var snapTrusted bool
	var jkey string
	var jTrusted bool
	jopts.Locked = func() *staging.Checkpoint {
		checked = readChecked(dir)
		loads = s.startLoads(checked)
		f, err := openSnapshot(snapPath, checked)
		if err != nil {
			snapErr = err
			return nil
		}
		at := f.h.Journal
		jkey = journalKey(at)
		if fi, err := os.Stat(filepath.Join(dir, JournalFile)); err == nil && trusted(checked, jkey, fi) {
			at.Trusted = true
			jTrusted = true
		}
		decoded = make(chan error, 1)
		go func() {
			var err error
			snap, err = f.decode()
			if err == nil {
				snapStamp, snapTrusted = f.stamp(opts.checkClock()), f.trusted
			}
			decoded <- err
		}()
		return &at
	}
	j, err := staging.Open(ctx, filepath.Join(dir, JournalFile), jopts)
	if decoded != nil {
		snapErr = <-decoded
	}
	if err != nil {
		if loads != nil {
			loads.discard()
		}
		var le *staging.LockedError
		if errors.As(err, &le) {
			return nil, fmt.Errorf("memory: the store in %s is open in another process: %w", dir, err)
		}
		return nil, fmt.Errorf("memory: opening the journal of %s: %w", dir, err)
	}
	s.journal = j
	if rec := j.Recovery(); rec.Repaired() {
		s.notice("journal " + rec.String())
	}
	stamps := map[string]fileStamp{}
	switch {
	case snap != nil && j.CheckpointMatched():
		s.state = snap.state
		s.snapSeq.Store(snap.at.Seq)
		if snapStamp != nil {
			stamps[SnapshotFile] = *snapStamp
			if snapTrusted {
				s.trusted = append(s.trusted, SnapshotFile)
			}
		}
		// The journal's first bytes matched the snapshot's checkpoint (read
		// and checksummed, or trusted by the journal's stamp): stamp it as it
		// is now, before this session writes to it.
		if fi, err := os.Stat(j.Path()); err == nil {
			if st, ok := stampOf(fi); ok && jTrusted {
				stamps[jkey] = st
				s.trusted = append(s.trusted, JournalFile)
			} else if st := stampFor(fi, opts.checkClock()); st != nil {
				stamps[jkey] = *st
			}
		}
	case snap != nil:
		s.notice(fmt.Sprintf("state snapshot %s is stale: the journal no longer has record %d ending at byte %d; rebuilding the state from the journal", snapPath, snap.at.Seq, snap.at.Size))
		// A journal line changed in place makes the snapshot stale too: a
		// line of it that cannot be applied gets its record from here.
		s.recover = &recovery{st: snap.state}
	case !errors.Is(snapErr, errNoSnapshot):
		s.notice(fmt.Sprintf("state snapshot %s %v: rebuilding the state from the journal", snapPath, snapErr))
	}
	err = s.openProjections(ctx, loads, stamps)
	s.recover = nil
	if err != nil {
		s.closeAll()
		return nil, err
	}
	if snap != nil && snap.version < snapshotVersion && s.snapSeq.Load() == snap.at.Seq {
		// An older format is rewritten in this build's, which opens faster.
		s.snapSeq.Store(0)
		s.saveSnapshot()
	}
	s.recordChecked(checked, stamps)
	slices.Sort(s.trusted)
	shared := opts.Journal
	if shared == nil && opts.OpenJournal != nil {
		if shared, err = opts.OpenJournal(ctx); err != nil {
			s.closeAll()
			return nil, fmt.Errorf("memory: opening the shared journal: %w", err)
		}
	}
	if shared != nil {
		if err := s.openShared(ctx, shared); err != nil {
			shared.Close()
			s.closeAll()
			return nil, err
		}
	}
	return s, nil
}

// recordChecked writes CheckedFile when the stamps of the files this open
// verified or trusted differ from the ones it read. A file rewritten since
// (a snapshot written at the end of the open) keeps its old stamp in the
// list, which no longer matches it: harmless.
func (s *Store) recordChecked(old, now map[string]fileStamp) {
	if len(now) == len(old) {
		same := true
		for k, v := range now {
			if w, ok := old[k]; !ok || w != v {
				same = false
			}
		}
		if same {
			return
		}
	}
	if err := writeChecked(s.dir, now); err != nil {
		s.log.Warn("memory: recording which files were verified (the next open verifies them again)", "err", err)
	}
}

// indexLoads is the full-text index and the vector file being opened in the
// background while Open reads the snapshot and the journal.
type indexLoads struct {
	ft    chan ftLoad
	vec   chan vecLoad
	ftDir string
}

type ftLoad struct {
	ix   *fulltext.Index
	note string
	err  error
}

type vecLoad struct {
	emb    Embedder // nil: none (BM25 alone)
	embErr error    // Options.LoadEmbedder's failure
	v      *vectors
	note   string
	change *EmbeddingChange
	stamp  *fileStamp // vectors.hnsw as verified or trusted (CheckedFile)
	// trusted: the file's stamp was in CheckedFile, so its body was not
	// verified again.
	trusted bool
}

// startLoads starts opening the full-text index and loading the vector file;
// checked is CheckedFile's stamps.
func (s *Store) startLoads(checked map[string]fileStamp) *indexLoads {
	l := &indexLoads{ft: make(chan ftLoad, 1), vec: make(chan vecLoad, 1), ftDir: filepath.Join(s.dir, FulltextDir)}
	go func() {
		ix, note, err := fulltext.Open(l.ftDir)
		l.ft <- ftLoad{ix, note, err}
	}()
	if e, load := s.opts.Embedder, s.opts.LoadEmbedder; e != nil || load != nil {
		go func() {
			if e == nil {
				var err error
				if e, err = load(); err != nil || e == nil {
					l.vec <- vecLoad{embErr: err}
					return
				}
			}
			path := filepath.Join(s.dir, VectorsFile)
			change := vectorModelChange(path, e.ModelID(), e.Dimensions())
			v, note, stamp, trust := loadVectors(path, s.opts.NewVectorIndex, e.ModelID(), e.Dimensions(), checked, s.opts.checkClock)
			l.vec <- vecLoad{emb: e, v: v, note: note, change: change, stamp: stamp, trusted: trust}
		}()
	} else {
		close(l.vec)
	}
	return l
}

// discard waits for the loads and closes what they opened (Open failed).
func (l *indexLoads) discard() {
	if r := <-l.ft; r.ix != nil {
		r.ix.Close()
	}
	<-l.vec
}

func (s *Store) notice(msg string) {
	s.nmu.Lock()
	s.notices = append(s.notices, msg)
	s.nmu.Unlock()
	s.log.Warn("memory: " + msg)
}

// Notices lists what Open repaired or degraded, and anything since (an embedder
// that failed), in order.
func (s *Store) Notices() []string {
	s.nmu.Lock()
	defer s.nmu.Unlock()
	return append([]string(nil), s.notices...)
}

// EmbeddingChange says whether Open found the store's vectors made with
// another embedding model than the one it was opened with, and re-embedded
// every record from the journal: which model and dimensions they had, and
// which they have now. A store that had no vectors yet, or whose vectors were
// damaged, reports no change.
func (s *Store) EmbeddingChange() (EmbeddingChange, bool) {
	if s.embChange == nil {
		return EmbeddingChange{}, false
	}
	return *s.embChange, true
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

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

// commit appends entries to the journal, applies them to the state and the
// projections, and returns the journal records. Once the journal has them the
// change is durable: a projection failure after that is reported and repaired on
// the next Open, never undone.
func (s *Store) commit(ctx context.Context, entries []staging.Entry) ([]staging.Record, error) {
	// s.wmu is held by the caller.
	if s.shared != nil {
		return s.commitShared(ctx, entries)
	}
	recs, err := s.journal.AppendBatch(ctx, entries)
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	return recs, s.applyCommitted(ctx, recs)
}

// applyCommitted applies records just written to the store's journal to the
// state and the projections. s.wmu is held.
func (s *Store) applyCommitted(ctx context.Context, recs []staging.Record) error {
	ftSet, vecSet := map[string]bool{}, map[string]bool{}
	var ftIDs, vecIDs []string
	s.mu.Lock()
	for _, r := range recs {
		counted := s.censusTrack(r)
		chs, err := s.state.apply(r)
		if counted != nil {
			counted(chs)
		}
		if err != nil {
			s.notice(fmt.Sprintf("journal record %d (%s) could not be applied: %v", r.Seq, r.Kind, err))
		}
		for _, c := range chs {
			if rec := s.state.get(c.id); rec != nil && rec.Provenance.Seq == r.Seq {
				s.ord.created(rec)
			} else if rec == nil && c.deleted {
				s.ord.deleted(c.id)
			}
			if c.content && !ftSet[c.id] {
				ftSet[c.id] = true
				ftIDs = append(ftIDs, c.id)
			}
			if (c.vector || c.deleted) && !vecSet[c.id] {
				vecSet[c.id] = true
				vecIDs = append(vecIDs, c.id)
			}
		}
	}
	s.mu.Unlock()
	if damaged, _ := s.repairLocked(ctx); damaged {
		// The batch was applied to a damaged state; the rebuilt one has it.
		// Every record its events name is projected again.
		for _, r := range recs {
			for _, id := range eventRefs(r.Payload) {
				if !ftSet[id] {
					ftSet[id] = true
					ftIDs = append(ftIDs, id)
				}
				if !vecSet[id] {
					vecSet[id] = true
					vecIDs = append(vecIDs, id)
				}
			}
		}
	}
	last := recs[len(recs)-1].Seq
	if last-s.snapSeq.Load() >= snapshotEvery {
		defer s.saveSnapshot()
	}
	// The two indexes are independent: embedding and the HNSW insert run while
	// Bleve indexes the batch.
	done := make(chan struct{})
	go func() {
		defer close(done)
		if s.vec != nil && len(vecIDs) > 0 && !s.vectorsLagging() {
			if err := s.projectVectors(ctx, vecIDs, last); err != nil {
				s.vectorFailure(err)
			}
		}
	}()
	var ftErr error
	if len(ftIDs) > 0 {
		ftErr = s.deferFulltext(ftIDs, last)
	}
	<-done
	if ftErr != nil {
		return fmt.Errorf("memory: saved to the journal (seq %d), but the full-text index failed (it catches up on the next open): %w", last, ftErr)
	}
	return nil
}

// Close saves the vector index, closes the full-text index (marking both clean)
// and the journal, releasing the store's lock.
func (s *Store) Close() error {
	s.stopFollowing()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return errors.Join(s.closeAll(), s.closeShared())
}

func (s *Store) closeAll() error {
	var errs []error
	if s.vec != nil && s.vec.due(vectorLag) {
		if err := s.vec.save(filepath.Join(s.dir, VectorsFile)); err != nil {
			errs = append(errs, err)
		}
	}
	if s.journal != nil && s.state != nil && s.snapshotDue() {
		s.saveSnapshot()
	}
	if s.journal != nil && s.state != nil {
		s.saveCensus()
	}
	if s.ft != nil {
		s.syncFulltext()
		if err := s.ft.Close(); errors.Is(err, fulltext.ErrDamaged) {
			// The journal holds everything; the next open rebuilds the index.
			s.log.Warn("memory: " + err.Error())
		} else if err != nil {
			errs = append(errs, err)
		}
	}
	if s.journal != nil {
		if err := s.journal.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// NewID makes a new record id, as the store does for a record saved without
// one: a client that must retry a save names its new records first, so the
// retry updates them instead of adding them twice.
func NewID() string { return newID() }

// Input is a record to save. Area defaults to main. With an empty ID, a record
// with the same key in the same area is updated, otherwise a new id is made.
type Input struct {
	ID         string         `json:"id,omitempty"`
	Area       string         `json:"area,omitempty"`
	Text       string         `json:"text"`
	Key        string         `json:"key,omitempty"`
	Tags       []string       `json:"tags,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Importance *float64       `json:"importance,omitempty"`
	Created    *time.Time     `json:"created,omitempty"`
	Status     Status         `json:"status,omitempty"`
}

// Put saves one record and returns it as stored.
func (s *Store) Put(ctx context.Context, in Input, src Source) (*Record, error) {
	recs, err := s.PutBatch(ctx, []Input{in}, src)
	if err != nil {
		return nil, err
	}
	return recs[0], nil
}

// PutBatch saves records with one journal write. The batch is checked first: if
// any input is invalid nothing is written and the error names it by position.
func (s *Store) PutBatch(ctx context.Context, ins []Input, src Source) ([]*Record, error) {
	if len(ins) == 0 {
		return nil, nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return nil, errors.New("memory: the store is closed")
	}
	entries, ids, err := s.upsertEntries(ins, src)
	if damaged, rerr := s.repairLocked(ctx); rerr != nil {
		// The entries were planned on a state that reads records as missing.
		return nil, rerr
	} else if damaged {
		entries, ids, err = s.upsertEntries(ins, src)
	}
	if err != nil {
		return nil, err
	}
	recs, err := s.commit(ctx, entries)
	if err != nil {
		return nil, err
	}
	if s.shared != nil {
		// A promoter may have put an entry on another record (the one that
		// holds its key): the records stored say which.
		for i, r := range recs {
			var u struct {
				ID string `json:"id"`
			}
			if i < len(ids) && r.Kind == KindUpsert && json.Unmarshal(r.Payload, &u) == nil && u.ID != "" {
				ids[i] = u.ID
			}
		}
	}
	for i, in := range ins {
		if _, cut := fulltext.Bound(in.Text); cut {
			s.notice(fmt.Sprintf("record %s is %d bytes or has a word over %d bytes: its whole text is stored, but full-text search indexes a bounded part (the first %d bytes, long words cut to %d bytes)",
				ids[i], len(in.Text), fulltext.MaxTokenBytes, fulltext.MaxIndexedBytes, fulltext.MaxTokenBytes))
		}
	}
	out := make([]*Record, len(ids))
	s.mu.RLock()
	for i, id := range ids {
		if r := s.state.get(id); r != nil {
			out[i] = r.clone()
		}
	}
	s.mu.RUnlock()
	return out, nil
}

// InputError says which input of a batch is invalid; nothing of the batch was
// written.
type InputError struct {
	Index int // 0-based position in the batch
	Err   error
}

func (e *InputError) Error() string { return fmt.Sprintf("memory: record %d: %v", e.Index+1, e.Err) }
func (e *InputError) Unwrap() error { return e.Err }

// upsertEntries validates inputs and turns them into journal entries. s.wmu is held.
func (s *Store) upsertEntries(ins []Input, src Source) ([]staging.Entry, []string, error) {
	entries := make([]staging.Entry, len(ins))
	ids := make([]string, len(ins))
	batchKeys := map[[2]string]string{}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i, in := range ins {
		if in.Area == "" {
			in.Area = AreaMain
		}
		if err := ValidArea(in.Area); err != nil {
			return nil, nil, &InputError{Index: i, Err: err}
		}
		if strings.TrimSpace(in.Text) == "" {
			return nil, nil, &InputError{Index: i, Err: errors.New("the text is empty")}
		}
		if in.Status != "" && in.Status != StatusActive && in.Status != StatusArchived {
			return nil, nil, &InputError{Index: i, Err: fmt.Errorf("status %q is not active or archived", in.Status)}
		}
		in.Key = strings.TrimSpace(in.Key)
		if in.Key != "" {
			k := [2]string{in.Area, in.Key}
			holder := batchKeys[k]
			if holder == "" {
				if r := s.state.byKey(in.Area, in.Key); r != nil {
					holder = r.ID
				}
			}
			switch {
			case in.ID == "" && holder != "":
				in.ID = holder
			case in.ID != "" && holder != "" && holder != in.ID:
				return nil, nil, &InputError{Index: i, Err: fmt.Errorf("key %q in area %s belongs to record %s; use that id or another key", in.Key, in.Area, holder)}
			}
		}
		if in.ID == "" {
			in.ID = s.nextID()
		}
		if in.Key != "" {
			batchKeys[[2]string{in.Area, in.Key}] = in.ID
		}
		ids[i] = in.ID
		entries[i] = staging.Entry{Kind: KindUpsert, Session: src.Session, Payload: UpsertEvent{
			ID: in.ID, Area: in.Area, Text: in.Text, Key: in.Key, Tags: normTags(in.Tags), Metadata: in.Metadata,
			Importance: in.Importance, Created: in.Created, Status: in.Status, Source: src,
		}}
	}
	return entries, ids, nil
}

// ErrNotFound is wrapped by errors about a record id that does not exist.
var ErrNotFound = errors.New("no such record")

// event writes one event about an existing record.
func (s *Store) event(ctx context.Context, id, kind string, payload any, src Source, check func(*Record) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return errors.New("memory: the store is closed")
	}
	s.mu.RLock()
	r := s.state.get(id)
	if check != nil && r != nil {
		check(r) // reads what it checks, so damage found there is repaired below
	}
	damaged := s.state.damaged() != nil
	s.mu.RUnlock()
	if damaged {
		// A record read as missing from a damaged state may well exist.
		if _, err := s.repairLocked(ctx); err != nil {
			return err
		}
	}
	s.mu.RLock()
	r = s.state.get(id)
	var err error
	if r == nil {
		err = fmt.Errorf("memory: record %s: %w (see `exocortex memory why %s` for its history)", id, ErrNotFound, id)
	} else if check != nil {
		err = check(r)
	}
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	_, err = s.commit(ctx, []staging.Entry{{Kind: kind, Session: src.Session, Payload: payload}})
	return err
}

// Archive takes a record out of recall; supersededBy names the record that
// replaces it, if any.
func (s *Store) Archive(ctx context.Context, id, reason, supersededBy string, src Source) error {
	return s.event(ctx, id, KindArchive, ArchiveEvent{ID: id, Reason: reason, SupersededBy: supersededBy, Source: src}, src, nil)
}

// Restore makes an archived record active again.
func (s *Store) Restore(ctx context.Context, id, reason string, src Source) error {
	return s.event(ctx, id, KindRestore, RestoreEvent{ID: id, Reason: reason, Source: src}, src, func(r *Record) error {
		if r.Status == StatusActive {
			return fmt.Errorf("memory: record %s is already active", id)
		}
		return nil
	})
}

// Delete removes a record. Its history stays in the journal.
func (s *Store) Delete(ctx context.Context, id, reason string, src Source) error {
	return s.event(ctx, id, KindDelete, DeleteEvent{ID: id, Reason: reason, Source: src}, src, nil)
}

// Merge folds the From records into Into (see MergeEvent).
func (s *Store) Merge(ctx context.Context, e MergeEvent) error {
	return s.event(ctx, e.Into, KindMerge, e, e.Source, func(*Record) error {
		for _, id := range e.From {
			if s.state.get(id) == nil {
				return fmt.Errorf("memory: merging into %s: record %s: %w", e.Into, id, ErrNotFound)
			}
		}
		return nil
	})
}

// RecordAccess counts a recall of the records.
func (s *Store) RecordAccess(ctx context.Context, ids []string, src Source) error {
	if len(ids) == 0 {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return errors.New("memory: the store is closed")
	}
	_, err := s.commit(ctx, []staging.Entry{{Kind: KindAccess, Session: src.Session, Payload: AccessEvent{IDs: ids, Source: src}}})
	return err
}

// Get returns a copy of the record with id, false when there is none. The
// error is a *RepairError: the state turned out damaged and could not be
// rebuilt (ctx was cancelled, see reading).
func (s *Store) Get(ctx context.Context, id string) (*Record, bool, error) {
	return s.getOne(ctx, func(st *State) *Record { return st.get(id) })
}

// GetByKey returns a copy of the record with key in area (see Get).
func (s *Store) GetByKey(ctx context.Context, area, key string) (*Record, bool, error) {
	return s.getOne(ctx, func(st *State) *Record { return st.byKey(area, key) })
}

// getOne returns a copy of the record find picks from the state.
func (s *Store) getOne(ctx context.Context, find func(*State) *Record) (*Record, bool, error) {
	var r *Record
	err := s.reading(ctx, func() error {
		s.mu.RLock()
		defer s.mu.RUnlock()
		r = find(s.state)
		if r != nil {
			r = r.clone()
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return r, r != nil, nil
}

// List returns copies of the records the filter admits, oldest first (then by id).
func (s *Store) List(ctx context.Context, f Filter) ([]*Record, error) {
	return s.Select(ctx, f, nil)
}

// Select returns copies of the records that both the filter and keep admit,
// oldest first (then by id); a nil keep admits all. keep sees the store's own
// record under its read lock: it must neither change nor keep it, nor call the
// store. Only the records kept are copied, so picking a few records out of a
// large store costs one pass over it, not a copy of it (List copies every
// record it admits: on 100k records, about 60 CPU-ms and 100k allocations).
func (s *Store) Select(ctx context.Context, f Filter, keep func(*Record) bool) ([]*Record, error) {
	return s.pick(ctx, keep, func(fn func(*Record) bool) { s.state.eachMatch(f, false, fn) })
}

// pick returns copies of the records walk yields (under the read lock) that
// keep admits, oldest first (then by id), reading again if the walk found the
// state damaged (see reading).
func (s *Store) pick(ctx context.Context, keep func(*Record) bool, walk func(fn func(*Record) bool)) ([]*Record, error) {
	var out []*Record
	err := s.reading(ctx, func() error {
		s.mu.RLock()
		defer s.mu.RUnlock()
		out = nil
		walk(func(r *Record) bool {
			if keep == nil || keep(r) {
				out = append(out, r.clone())
			}
			return true
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Census is the records a filter admits, counted per area with their tags.
type Census struct {
	Records int
	Tags    map[string]int
}

// Census counts the records f admits per area, and their tags, in one pass
// over the state without copying a record: what List followed by counting
// gives, at a fraction of its cost on a large store.
//
// The count of every active record (the zero Filter: what the memory catalog
// asks for once per session) is kept until the state changes, so a caller
// that counts ahead of time (memorytools' Warm, while the host starts up) makes
// the next call free; the result is the caller's own copy either way.
func (s *Store) Census(ctx context.Context, f Filter) (map[string]Census, error) {
	var out map[string]Census
	err := s.reading(ctx, func() error {
		out = s.census(f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// census is Census without the repair: the state may turn out damaged.
func (s *Store) census(f Filter) map[string]Census {
	s.mu.RLock()
	defer s.mu.RUnlock()
	whole := f.zero()
	if whole {
		s.kept.Lock()
		defer s.kept.Unlock()
		if !s.kept.read {
			s.readCensus()
		}
		if s.kept.byArea != nil && s.kept.seq == s.state.applied {
			return copyCensus(s.kept.byArea)
		}
	}
	out := s.countCensus(f)
	if s.state.damaged() != nil {
		return out
	}
	if whole {
		s.kept.seq, s.kept.byArea = s.state.applied, copyCensus(out)
	}
	return out
}

// zero reports whether f is the zero Filter (every active record outside the
// library).
func (f Filter) zero() bool {
	return len(f.Areas) == 0 && len(f.Tags) == 0 && f.Key == "" && len(f.Statuses) == 0 && f.From.IsZero() && f.To.IsZero() && f.Session == "" && f.Source == ""
}

func copyCensus(in map[string]Census) map[string]Census {
	out := make(map[string]Census, len(in))
	for a, c := range in {
		tags := make(map[string]int, len(c.Tags))
		for t, n := range c.Tags {
			tags[t] = n
		}
		out[a] = Census{Records: c.Records, Tags: tags}
	}
	return out
}

// countCensus is Census without the cache. s.mu is held.
func (s *Store) countCensus(f Filter) map[string]Census {
	out := map[string]Census{}
	// The records are read in place (scratch), their strings views of the
	// mapped snapshot: every string kept as a key is a copy, made the first
	// time it is seen (a map assignment stores the key it is given, so even
	// a key already present is never given as a view).
	own := map[string]string{}
	keep := func(x string) string {
		if y, ok := own[x]; ok {
			return y
		}
		y := strings.Clone(x)
		own[y] = y
		return y
	}
	s.state.eachMatch(f, true, func(r *Record) bool {
		area := keep(r.Area)
		c, ok := out[area]
		if !ok {
			c.Tags = map[string]int{}
		}
		c.Records++
		for _, t := range r.Tags {
			c.Tags[keep(t)]++
		}
		out[area] = c
		return true
	})
	return out
}

// Hash is the state hash (see State.Hash). The error is a *RepairError (see
// Get).
func (s *Store) Hash(ctx context.Context) (string, error) {
	var h string
	err := s.reading(ctx, func() error {
		s.mu.RLock()
		defer s.mu.RUnlock()
		h = s.state.Hash()
		return nil
	})
	if err != nil {
		return "", err
	}
	return h, nil
}

// Stats describes the store.
type Stats struct {
	Dir           string         `json:"dir"`
	Records       int            `json:"records"`
	ByArea        map[string]int `json:"by_area"`
	ByStatus      map[string]int `json:"by_status"`
	JournalSeq    uint64         `json:"journal_seq"`
	JournalBytes  int64          `json:"journal_bytes"`
	SnapshotSeq   uint64         `json:"snapshot_seq"` // journal sequence of the state snapshot (0: none yet)
	FulltextSeq   uint64         `json:"fulltext_seq"`
	FulltextDocs  uint64         `json:"fulltext_docs"`
	Vectors       string         `json:"vectors"` // "on", or why not
	VectorModel   string         `json:"vector_model,omitempty"`
	VectorSeq     uint64         `json:"vector_seq,omitempty"`
	VectorCount   int            `json:"vector_count,omitempty"`
	UnknownEvents map[string]int `json:"unknown_events,omitempty"`
	SkippedEvents int            `json:"skipped_events,omitempty"`
	StateHash     string         `json:"state_hash"`
	// AreaHashes are each area's share of StateHash, kept as cheaply: the
	// state hash of one namespace (GET /api/v1/state?ns=).
	AreaHashes     map[string]string `json:"area_hashes,omitempty"`
	Notices        []string          `json:"notices,omitempty"`
	VectorsLagging bool              `json:"vectors_lagging,omitempty"`
	// Embedder names the active embedder for people ("offline GloVe 100d",
	// "ollama nomic-embed-text", "none (BM25 only)"); the caller that chose it
	// fills it in (the store knows only VectorModel).
	Embedder string `json:"embedder,omitempty"`
}

// Stats counts records and reports each projection's position. The error is
// a *RepairError (see Get).
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := s.reading(ctx, func() error {
		st = Stats{Dir: s.dir, ByArea: map[string]int{}, ByStatus: map[string]int{}, UnknownEvents: map[string]int{}}
		s.mu.RLock()
		defer s.mu.RUnlock()
		st.Records = s.state.Len()
		t := s.state.kept()
		maps.Copy(st.ByArea, t.byArea)
		maps.Copy(st.ByStatus, t.byStatus)
		st.StateHash = t.sum.String()
		st.AreaHashes = t.areaHashes()
		maps.Copy(st.UnknownEvents, s.state.unknown)
		st.SkippedEvents = s.state.skipped
		return nil
	})
	if err != nil {
		return Stats{}, err
	}
	st.JournalSeq = s.journal.LastSeq()
	st.JournalBytes = s.journal.Size()
	st.SnapshotSeq = s.snapSeq.Load()
	s.syncFulltext()
	st.FulltextSeq = s.ft.AppliedSeq()
	st.FulltextDocs, _ = s.ft.Count()
	st.Vectors = s.vectorMode()
	if s.vec != nil {
		st.VectorModel = s.vec.model
		s.vec.mu.RLock()
		st.VectorSeq = s.vec.applied
		s.vec.mu.RUnlock()
		st.VectorCount = s.vec.count()
		st.VectorsLagging = s.vectorsLagging()
	}
	st.Notices = s.Notices()
	return st, nil
}

// vectorMode says whether vectors take part in recall, and if not, why.
func (s *Store) vectorMode() string {
	if s.vec == nil {
		return "off: no embedder configured, recall uses BM25 alone"
	}
	if s.vectorsLagging() {
		return "lagging: the embedder failed, recent records are found by BM25 only until the next open"
	}
	return "on"
}
