package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
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
