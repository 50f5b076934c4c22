package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/renameio/v2"

	"github.com/exocortex/exocortex/core/loop"
)

// When the sessions are shared (a JetStream bucket every host on the
// memory stream reads), so is their recording: a Recorder with a Mirror
// copies every line it records and every content it stores there, and Sync
// brings a host-local copy of a session's shared recording (every replica's
// turns, in order) up to date, for Load. The recording beside the session
// file keeps this host's own turns either way.

// mirrorTimeout bounds one flush to the mirror.
const mirrorTimeout = 10 * time.Second

// Mirror is where a shared session's recording is copied.
type Mirror interface {
	// PutEvents appends recorded lines after the recording's last (another
	// host's turns included).
	PutEvents(ctx context.Context, lines [][]byte) error
	// PutBlob stores a message content under its hash (once: a content
	// stored already is success).
	PutBlob(ctx context.Context, hash string, content []byte) error
}

// Shared reads a shared session's recording.
type Shared interface {
	// RecordedEvents calls fn with the recorded lines above since, in
	// order, each with its number (1, 2, 3, …).
	RecordedEvents(ctx context.Context, session string, since uint64, fn func(n uint64, line []byte) error) error
	// RecordedBlob is the content stored under hash (an error wrapping
	// fs.ErrNotExist when none is).
	RecordedBlob(ctx context.Context, hash string) ([]byte, error)
}

// MirrorTo makes the recorder copy what it records to m from now on. A
// failure to copy is kept for Close, as a failure to write is; the lines
// after it are still offered.
func (r *Recorder) MirrorTo(m Mirror) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mirror = m
}

// mirrorFlush sends the lines recorded since the last flush. r.mu is held.
func (r *Recorder) mirrorFlush() {
	if r.mirror == nil || len(r.pending) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), mirrorTimeout)
	defer cancel()
	if err := r.mirror.PutEvents(ctx, r.pending); err != nil && r.mirrorErr == nil {
		r.mirrorErr = fmt.Errorf("copying the recording to the shared store: %w", err)
	}
	r.pending = nil
}

// mirrorBlob stores a content in the mirror. r.mu is held.
func (r *Recorder) mirrorBlob(hash, content string) {
	if r.mirror == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), mirrorTimeout)
	defer cancel()
	if err := r.mirror.PutBlob(ctx, hash, []byte(content)); err != nil && r.mirrorErr == nil {
		r.mirrorErr = fmt.Errorf("copying a message of the recording to the shared store: %w", err)
	}
}

// syncedFile remembers, in a Sync directory, the last line copied.
const syncedFile = "synced"

// Sync brings dir (a recording directory of its own, not the one a Recorder
// writes) up to the shared recording of session: the lines it lacks are
// appended to its events file, after the contents they name are stored in
// its blobs. A directory already up to date costs one read of src. Sync is
// not safe for concurrent use on one dir.
func Sync(ctx context.Context, src Shared, session, dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, BlobsDir), 0o700); err != nil {
		return fmt.Errorf("replay: the shared recording of %s: %w", session, err)
	}
	var since uint64
	if b, err := os.ReadFile(filepath.Join(dir, syncedFile)); err == nil {
		since, _ = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	}
	var lines [][]byte
	last := since
	err := src.RecordedEvents(ctx, session, since, func(n uint64, line []byte) error {
		if err := fetchBlobs(ctx, src, dir, line); err != nil {
			return err
		}
		lines = append(lines, append([]byte(nil), line...))
		last = n
		return nil
	})
	if err != nil {
		return fmt.Errorf("replay: reading the shared recording of %s: %w", session, err)
	}
	if len(lines) == 0 {
		if since == 0 {
			return fmt.Errorf("replay: session %s has no shared recording: %w", session, fs.ErrNotExist)
		}
		return nil
	}
	path := filepath.Join(dir, EventsFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	w := bufio.NewWriter(f)
	for _, l := range lines {
		w.Write(l)
		w.WriteByte('\n')
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("replay: writing %s: %w", path, err)
	}
	if err := renameio.WriteFile(filepath.Join(dir, syncedFile), []byte(strconv.FormatUint(last, 10)+"\n"), 0o600); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	return nil
}

// fetchBlobs stores in dir the contents a recorded line's request names
// that dir lacks.
func fetchBlobs(ctx context.Context, src Shared, dir string, line []byte) error {
	var e loop.Event
	if json.Unmarshal(line, &e) != nil || e.Request == nil {
		return nil // Load says what is wrong with a line
	}
	for _, m := range e.Request.Messages {
		if len(m.Hash) < 3 || m.Content != "" {
			continue
		}
		path := blobPath(dir, m.Hash)
		if _, err := os.Stat(path); err == nil {
			continue
		}
		b, err := src.RecordedBlob(ctx, m.Hash)
		if errors.Is(err, fs.ErrNotExist) {
			continue // Load names the missing message
		}
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if err := renameio.WriteFile(path, b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// Push copies the recording in dir (a session's NAME.replay, as a Recorder
// wrote it) to m: every stored content, then the lines after the first
// skip (those m holds already: a push that stopped, or a re-run). It
// returns how many lines it copied. A session's recording made before its
// session moved into a shared store becomes the shared one this way.
func Push(ctx context.Context, dir string, skip uint64, m Mirror) (int, error) {
	events := filepath.Join(dir, EventsFile)
	f, err := os.Open(events)
	if err != nil {
		return 0, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	err = filepath.WalkDir(filepath.Join(dir, BlobsDir), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if Hash(string(b)) != d.Name() {
			return nil // not a content this recording stored; Load would say so
		}
		return m.PutBlob(ctx, d.Name(), b)
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("replay: copying the contents of %s: %w", dir, err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	var lines [][]byte
	var n uint64
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		n++
		if n > skip {
			lines = append(lines, append([]byte(nil), sc.Bytes()...))
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("replay: reading %s: %w", events, err)
	}
	if len(lines) == 0 {
		return 0, nil
	}
	if err := m.PutEvents(ctx, lines); err != nil {
		return 0, fmt.Errorf("replay: copying %s: %w", events, err)
	}
	return len(lines), nil
}
