package staging

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SyncPolicy says when appended records are forced to stable storage.
type SyncPolicy int

const (
	// SyncEveryAppend fsyncs after every Append and AppendBatch call: a record that
	// Append returned survives a power cut. The default.
	SyncEveryAppend SyncPolicy = iota
	// SyncInterval fsyncs in the background every Options.SyncInterval: a crash of
	// the machine can lose that much; a crash of the process loses nothing.
	SyncInterval
	// SyncOS leaves flushing to the operating system (and Close).
	SyncOS
)

func (p SyncPolicy) String() string {
	switch p {
	case SyncEveryAppend:
		return "every-append"
	case SyncInterval:
		return "interval"
	case SyncOS:
		return "os"
	}
	return fmt.Sprintf("SyncPolicy(%d)", int(p))
}

// ParseSyncPolicy reads "every-append", "interval" or "os" (as in configuration files).
func ParseSyncPolicy(s string) (SyncPolicy, error) {
	for _, p := range []SyncPolicy{SyncEveryAppend, SyncInterval, SyncOS} {
		if s == p.String() {
			return p, nil
		}
	}
	return 0, fmt.Errorf("unknown sync policy %q: use every-append, interval or os", s)
}

// Options tune a Log. The zero value is safe: fsync after every append.
type Options struct {
	Sync SyncPolicy
	// SyncInterval is the period for SyncInterval (default one second).
	SyncInterval time.Duration
	// Now stamps records (default time.Now). Tests pin it.
	Now func() time.Time
	// Logger receives recovery notices (default slog.Default()).
	Logger *slog.Logger
	// Checkpoint, when set, is a position of this log that the caller saw
	// before (where a snapshot of what it derived from the log stops). Open
	// checks that the line ending at Checkpoint.Size still has sequence
	// Checkpoint.Seq and that the bytes up to there still have checksum
	// Checkpoint.CRC32C (one sequential read, no parsing: a line changed in
	// place before the checkpoint, even one of the same length, fails it), and
	// then parses only the lines after it, so opening parses the tail, not the
	// history. Whether the checkpoint held is in CheckpointMatched.
	Checkpoint *Checkpoint
	// Locked, when set, is called once the log's lock is held and before the
	// file is read; a checkpoint it returns replaces Checkpoint. A caller keeps
	// what it derived from the log beside it (a snapshot) and reads that under
	// the lock, and can start other work that needs the lock from there.
	Locked func() *Checkpoint
}

// Checkpoint is a position in a log: the record with sequence Seq ends (newline
// included) at byte Size, and the log's first Size bytes have the CRC-32C
// (Castagnoli) checksum CRC32C.
type Checkpoint struct {
	Seq    uint64 `json:"seq"`
	Size   int64  `json:"size"`
	CRC32C uint32 `json:"crc32c"`
	// Trusted, set by a caller that knows the log has not been written since
	// this checkpoint's checksum was last verified against it (by the file's
	// identity and change time, say), makes Open check only the line at the
	// checkpoint and skip reading the prefix for its checksum. Never stored.
	Trusted bool `json:"-"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// prefixCRC is the CRC-32C of f's first n bytes.
func prefixCRC(f *os.File, n int64) (uint32, error) {
	// Large reads: the prefix is the whole history (tens of MB at 100k
	// records), and io.Copy's 32 KiB would make a thousand system calls.
	buf := make([]byte, min(n, 1<<20))
	sum := uint32(0)
	for off := int64(0); off < n; {
		k, err := f.ReadAt(buf[:min(int64(len(buf)), n-off)], off)
		sum = crc32.Update(sum, castagnoli, buf[:k])
		off += int64(k)
		if err != nil && off < n {
			return 0, err
		}
	}
	return sum, nil
}

// BadLine is a line that could not be read as a record.
type BadLine struct {
	File   string `json:"file"`
	Line   int    `json:"line"`   // 1-based line number in the file as it was found
	Offset int64  `json:"offset"` // byte offset of the line's start
	Reason string `json:"reason"`
	Text   []byte `json:"-"`
}

func (b BadLine) String() string {
	return fmt.Sprintf("%s:%d: %s", b.File, b.Line, b.Reason)
}

// Recovery reports what Open repaired. The zero value means the file was clean.
type Recovery struct {
	// TornTail is the partial last line that was cut off, if any.
	TornTail *BadLine
	// Quarantined lists malformed lines moved out of the log.
	Quarantined []BadLine
	// QuarantinePath is where cut and moved lines were written (<path>.quarantine).
	QuarantinePath string
}

// Repaired reports whether Open changed the file.
func (r Recovery) Repaired() bool { return r.TornTail != nil || len(r.Quarantined) > 0 }

func (r Recovery) String() string {
	if !r.Repaired() {
		return "clean"
	}
	var parts []string
	if r.TornTail != nil {
		parts = append(parts, fmt.Sprintf("cut a torn last line (%s, %d bytes)", r.TornTail, len(r.TornTail.Text)))
	}
	for _, b := range r.Quarantined {
		parts = append(parts, "quarantined "+b.String())
	}
	return strings.Join(parts, "; ") + "; the removed text is in " + r.QuarantinePath
}

// LockedError is returned by Open when another writer holds the log.
type LockedError struct {
	Path     string
	LockPath string
	// Holder describes the process that took the lock (pid, command, time), as it
	// wrote it into the lock file; empty if unreadable.
	Holder string
}

func (e *LockedError) Error() string {
	who := e.Holder
	if who == "" {
		who = "another process"
	}
	return fmt.Sprintf("%s is in use by %s: stop that process or wait for it to finish, then retry (lock file %s)",
		e.Path, who, e.LockPath)
}

// holderInfo is written into the lock file so a refused writer can say who holds it.
type holderInfo struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// indexEvery is the spacing of the sparse seq -> offset index that lets Read start
// near a checkpoint instead of at the top of the file.
const indexEvery = 4096

type seqOffset struct {
	seq uint64
	off int64
}

// Log is an open, locked log file. Its methods are safe for concurrent use.
type Log struct {
	path string
	opts Options
	lock *os.File

	mu      sync.Mutex
	f       *os.File
	size    int64 // bytes of complete records
	lastSeq uint64
	index   []seqOffset
	dirty   bool
	closed  bool
	rec     Recovery
	// cpMatched: Options.Checkpoint was found where it was said to be, and
	// nothing before it was repaired.
	cpMatched bool
	// write performs the single write of an append. Tests replace it to inject a
	// failing disk; production uses (*os.File).Write.
	write func(f *os.File, b []byte) (int, error)

	stopSync chan struct{}
	syncDone chan struct{}
}

// Open opens (creating if needed) the log at path for appending, takes its lock,
// and repairs what a crash or a stray edit left: see the package documentation.
func Open(ctx context.Context, path string, opts Options) (*Log, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SyncInterval <= 0 {
		opts.SyncInterval = time.Second
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("staging: creating the directory of %s: %w", path, err)
	}
	lock, err := acquireLock(path)
	if err != nil {
		return nil, err
	}
	if opts.Locked != nil {
		if cp := opts.Locked(); cp != nil {
			opts.Checkpoint = cp
		}
	}
	l := &Log{path: path, opts: opts, lock: lock, write: (*os.File).Write}
	if err := l.open(ctx); err != nil {
		lock.Close()
		return nil, err
	}
	if opts.Sync == SyncInterval {
		l.stopSync = make(chan struct{})
		l.syncDone = make(chan struct{})
		go l.syncLoop()
	}
	return l, nil
}

func acquireLock(path string) (*os.File, error) {
	lockPath := path + ".lock"
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("staging: opening the lock file %s: %w", lockPath, err)
	}
	busy, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("staging: locking %s: %w", lockPath, err)
	}
	if busy {
		holder := ""
		if b, err := os.ReadFile(lockPath); err == nil {
			var h holderInfo
			if json.Unmarshal(b, &h) == nil && h.PID != 0 {
				holder = fmt.Sprintf("process %d (%s) since %s", h.PID, h.Command, h.Since.Format(time.RFC3339))
			}
		}
		f.Close()
		return nil, &LockedError{Path: path, LockPath: lockPath, Holder: holder}
	}
	info, _ := json.Marshal(holderInfo{PID: os.Getpid(), Command: commandLine(), Since: time.Now().UTC()})
	if err := f.Truncate(0); err == nil {
		f.WriteAt(info, 0) // informational only: the flock is the lock
	}
	return f, nil
}

func commandLine() string {
	s := strings.Join(os.Args, " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// open scans the file, repairs it if needed and positions the log at its end.
func (l *Log) open(ctx context.Context) error {
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("staging: opening %s: %w", l.path, err)
	}
	cp := l.opts.Checkpoint
	cpFound := cp != nil && checkpointHolds(f, *cp)
	if cpFound {
		// Scan only the tail. Anything wrong in it sends Open through the full
		// scan and its repair below, with line numbers counted from the top.
		sc, err := scanFile(ctx, f, l.path, cp.Size, cp.Seq)
		if err != nil {
			f.Close()
			return err
		}
		if sc.torn == nil && len(sc.bad) == 0 {
			sc.index = append([]seqOffset{{cp.Seq + 1, cp.Size}}, sc.index...)
			l.f, l.size, l.lastSeq, l.index, l.cpMatched = f, sc.size, sc.lastSeq, sc.index, true
			return nil
		}
	}
	sc, err := scanFile(ctx, f, l.path, 0, 0)
	if err != nil {
		f.Close()
		return err
	}
	if cpFound {
		for _, b := range sc.bad {
			if b.Offset < cp.Size {
				cpFound = false // the repair moves lines before the checkpoint
			}
		}
	}
	if sc.torn != nil || len(sc.bad) > 0 {
		f, err = l.repair(f, sc)
		if err != nil {
			return err
		}
		if sc, err = scanFile(ctx, f, l.path, 0, 0); err != nil {
			f.Close()
			return err
		}
		if sc.torn != nil || len(sc.bad) > 0 {
			f.Close()
			return fmt.Errorf("staging: %s still has malformed lines after repair; move it aside and report this", l.path)
		}
	}
	l.f, l.size, l.lastSeq, l.index = f, sc.size, sc.lastSeq, sc.index
	l.cpMatched = cpFound && checkpointHolds(f, *cp)
	return nil
}

// checkpointHolds reports whether the line of f that ends at cp.Size is a
// record with sequence cp.Seq.
func checkpointHolds(f *os.File, cp Checkpoint) bool {
	if cp.Seq == 0 || cp.Size <= 0 {
		return false
	}
	st, err := f.Stat()
	if err != nil || st.Size() < cp.Size {
		return false
	}
	// Read backwards from the checkpoint to the newline before its line.
	const chunk = 64 << 10
	var line []byte
	end := cp.Size
	for {
		start := max(0, end-chunk)
		b := make([]byte, end-start)
		if _, err := f.ReadAt(b, start); err != nil {
			return false
		}
		line = append(b, line...)
		if end == cp.Size && (len(line) == 0 || line[len(line)-1] != '\n') {
			return false
		}
		if i := bytes.LastIndexByte(line[:len(line)-1], '\n'); i >= 0 {
			line = line[i+1:]
			break
		}
		if start == 0 {
			break
		}
		end = start
	}
	seq, err := checkLine(line[:len(line)-1])
	if err != nil || seq != cp.Seq {
		return false
	}
	if cp.Trusted {
		return true
	}
	sum, err := prefixCRC(f, cp.Size)
	return err == nil && sum == cp.CRC32C
}

// CheckpointMatched reports whether Options.Checkpoint was found where it said,
// with nothing before it repaired: what the caller derived from the log up to
// there still holds.
func (l *Log) CheckpointMatched() bool { return l.cpMatched }

// Position is the log's current end: its last sequence and its size in bytes,
// as a Checkpoint for a later Open.
// Its checksum is computed by reading the log up to there: one sequential
// read, paid when a snapshot is written, not per record.
func (l *Log) Position() Checkpoint {
	l.mu.Lock()
	defer l.mu.Unlock()
	cp := Checkpoint{Seq: l.lastSeq, Size: l.size}
	if l.f != nil && cp.Size > 0 {
		if sum, err := prefixCRC(l.f, cp.Size); err == nil {
			cp.CRC32C = sum
		} else {
			cp.Seq = 0 // no checksum, no checkpoint: the next open scans it all
		}
	}
	return cp
}

// Path returns the log's file name.
func (l *Log) Path() string { return l.path }

// Recovery reports what Open repaired.
func (l *Log) Recovery() Recovery { return l.rec }

// LastSeq returns the sequence number of the last record (0 for an empty log).
func (l *Log) LastSeq() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastSeq
}

// Size returns the log's length in bytes.
func (l *Log) Size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.size
}

// Append writes one record and returns it as written.
func (l *Log) Append(ctx context.Context, kind, session string, payload any) (Record, error) {
	recs, err := l.AppendBatch(ctx, []Entry{{Kind: kind, Session: session, Payload: payload}})
	if err != nil {
		return Record{}, err
	}
	return recs[0], nil
}

// AppendBatch writes several records with one write and (under SyncEveryAppend)
// one fsync. Either all of them are in the log afterwards or none is.
func (l *Log) AppendBatch(ctx context.Context, entries []Entry) ([]Record, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	payloads := make([][]byte, len(entries))
	for i, e := range entries {
		if e.Kind == "" {
			return nil, fmt.Errorf("staging: appending to %s: entry %d has no kind", l.path, i)
		}
		p, err := encodePayload(e.Payload)
		if err != nil {
			return nil, fmt.Errorf("staging: appending a %q record to %s: encoding the payload: %w", e.Kind, l.path, err)
		}
		payloads[i] = p
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, fmt.Errorf("staging: appending to %s: the log is closed", l.path)
	}
	now := l.opts.Now().UTC()
	var buf bytes.Buffer
	recs := make([]Record, len(entries))
	for i, e := range entries {
		seq := l.lastSeq + 1 + uint64(i)
		ts := now
		if !e.TS.IsZero() {
			ts = e.TS.UTC()
		}
		encodeLine(&buf, seq, ts, e.Kind, e.Session, payloads[i])
		recs[i] = Record{V: SchemaVersion, Seq: seq, TS: ts, Kind: e.Kind, Session: e.Session, Payload: payloads[i]}
	}
	n, err := l.write(l.f, buf.Bytes())
	if err == nil && n != buf.Len() {
		err = io.ErrShortWrite
	}
	if err != nil {
		return nil, l.undoWrite(len(entries), n, err)
	}
	l.indexBatch(recs, buf.Bytes())
	l.size += int64(buf.Len())
	l.lastSeq = recs[len(recs)-1].Seq
	switch l.opts.Sync {
	case SyncEveryAppend:
		if err := l.f.Sync(); err != nil {
			return recs, fmt.Errorf("staging: syncing %s after writing records %d-%d (they are written but may not survive a power cut): %w",
				l.path, recs[0].Seq, l.lastSeq, err)
		}
	default:
		l.dirty = true
	}
	return recs, nil
}

// indexBatch adds sparse index entries for a batch about to be counted in l.size.
func (l *Log) indexBatch(recs []Record, written []byte) {
	off := l.size
	for _, r := range recs {
		j := bytes.IndexByte(written, '\n')
		if (r.Seq-1)%indexEvery == 0 {
			l.index = append(l.index, seqOffset{r.Seq, off})
		}
		off += int64(j + 1)
		written = written[j+1:]
	}
}

// undoWrite cuts a failed write back to the last complete record.
func (l *Log) undoWrite(count, written int, cause error) error {
	what := fmt.Sprintf("staging: appending %d record(s) to %s", count, l.path)
	hint := ""
	if errors.Is(cause, syscall.ENOSPC) {
		hint = " (the disk is full: free some space and retry)"
	}
	if written > 0 || errors.Is(cause, io.ErrShortWrite) {
		if terr := l.f.Truncate(l.size); terr != nil {
			return fmt.Errorf("%s: %w%s; cutting the partial line back also failed (%v): the next Open will cut it", what, cause, hint, terr)
		}
	}
	return fmt.Errorf("%s: %w%s; nothing partial was left in the log", what, cause, hint)
}

// Sync forces written records to stable storage.
func (l *Log) Sync() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.dirty = false
	f := l.f
	l.mu.Unlock()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("staging: syncing %s: %w", l.path, err)
	}
	return nil
}

func (l *Log) syncLoop() {
	defer close(l.syncDone)
	t := time.NewTicker(l.opts.SyncInterval)
	defer t.Stop()
	for {
		select {
		case <-l.stopSync:
			return
		case <-t.C:
			l.mu.Lock()
			dirty := l.dirty && !l.closed
			l.mu.Unlock()
			if dirty {
				if err := l.Sync(); err != nil {
					l.opts.Logger.Error("staging: background sync failed", "file", l.path, "err", err)
				}
			}
		}
	}
}

// Close syncs and closes the log and releases its lock. Closing twice is harmless.
func (l *Log) Close() error {
	if l.stopSync != nil {
		select {
		case <-l.stopSync:
		default:
			close(l.stopSync)
			<-l.syncDone
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	err := l.f.Sync()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.lock.Close() // releases the flock
	if err != nil {
		return fmt.Errorf("staging: closing %s: %w", l.path, err)
	}
	return nil
}
