package replay

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/google/renameio/v2"

	"github.com/exocortex/exocortex/core/loop"
)

// Files of a recording directory.
const (
	EventsFile = "events.jsonl"
	BlobsDir   = "blobs"
	// DirSuffix names a session's recording directory beside its file:
	// sessions/NAME.jsonl is recorded in sessions/NAME.replay/.
	DirSuffix = ".replay"
)

// Hash is the name a message content is stored under.
func Hash(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// recorded reports whether an event kind goes into a recording: everything
// run --json writes except the pieces of a stream, whose whole is in the
// llm_reply, reasoning and tool_result events.
func recorded(kind string) bool {
	switch kind {
	case loop.EventLLMChunk, loop.EventDisplay, loop.EventReasoningDisplay, loop.EventToolOutput:
		return false
	}
	return true
}

// Dedup leaves out the contents of request messages already sent once in a
// stream, keeping their hash. The zero value is ready; it is not safe for
// concurrent use.
type Dedup struct{ seen map[string]bool }

// Strip returns r with every message hashed and a content already seen left
// out. It does not change r.
func (d *Dedup) Strip(r *loop.Request, keep func(hash, content string) error) (*loop.Request, error) {
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	c := *r
	c.Messages = make([]loop.RequestMessage, len(r.Messages))
	for i, m := range r.Messages {
		if m.Hash == "" {
			m.Hash = Hash(m.Content)
		}
		if d.seen[m.Hash] {
			m.Content = ""
		} else {
			if keep != nil {
				if err := keep(m.Hash, m.Content); err != nil {
					return nil, err
				}
				m.Content = ""
			}
			d.seen[m.Hash] = true
		}
		c.Messages[i] = m
	}
	return &c, nil
}

// StreamEvent prepares an event for a run --json stream: a request's
// contents go once per stream.
func (d *Dedup) StreamEvent(e loop.Event) loop.Event {
	if e.Request != nil {
		e.Request, _ = d.Strip(e.Request, nil)
	}
	return e
}

// Recorder writes a session's recording beside its file. Observe is a
// loop.Options.Observer (wrap the one the session has with Wrap).
type Recorder struct {
	dir string

	mu    sync.Mutex
	f     *os.File
	w     *bufio.Writer
	dedup Dedup
	err   error
	// mirror, when set, gets a copy of every line (pending until the next
	// flush) and content (shared.go).
	mirror    Mirror
	pending   [][]byte
	mirrorErr error
}

// DirFor is the recording directory of the session file sessionPath.
func DirFor(sessionPath string) string {
	ext := filepath.Ext(sessionPath)
	return sessionPath[:len(sessionPath)-len(ext)] + DirSuffix
}

// NewRecorder opens (or continues) the recording of the session file
// sessionPath.
func NewRecorder(sessionPath string) (*Recorder, error) {
	dir := DirFor(sessionPath)
	if err := os.MkdirAll(filepath.Join(dir, BlobsDir), 0o700); err != nil {
		return nil, fmt.Errorf("creating the recording of %s: %w", sessionPath, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, EventsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the recording of %s: %w", sessionPath, err)
	}
	r := &Recorder{dir: dir, f: f, w: bufio.NewWriter(f)}
	// Contents already stored need no second write.
	r.dedup.seen = map[string]bool{}
	return r, nil
}

// Dir is the recording directory.
func (r *Recorder) Dir() string { return r.dir }

// Wrap returns an observer that records every event and passes it on to next
// (which may be nil).
func (r *Recorder) Wrap(next func(loop.Event)) func(loop.Event) {
	return func(e loop.Event) {
		r.Observe(e)
		if next != nil {
			next(e)
		}
	}
}

// Observe records e. A failure to write is kept for Close and stops the
// recording, never the session.
func (r *Recorder) Observe(e loop.Event) {
	if !recorded(e.Type) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil || r.f == nil {
		return
	}
	if e.Request != nil {
		e.Request, r.err = r.dedup.Strip(e.Request, r.putBlob)
		if r.err != nil {
			return
		}
	}
	b, err := json.Marshal(e)
	if err != nil {
		r.err = fmt.Errorf("recording a %s event: %w", e.Type, err)
		return
	}
	r.w.Write(append(b, '\n'))
	if r.mirror != nil {
		r.pending = append(r.pending, b)
	}
	// A turn's end is where a killed terminal must have lost nothing.
	if e.Type == loop.EventMonologueEnd || e.Type == loop.EventRequest {
		r.err = r.w.Flush()
		r.mirrorFlush()
	}
}

func (r *Recorder) putBlob(hash, content string) error {
	r.mirrorBlob(hash, content)
	path := blobPath(r.dir, hash)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("recording a message: %w", err)
	}
	if err := renameio.WriteFile(path, []byte(content), 0o600); err != nil {
		return fmt.Errorf("recording a message: %w", err)
	}
	return nil
}

func blobPath(dir, hash string) string {
	return filepath.Join(dir, BlobsDir, hash[:2], hash)
}

// readBlob returns a stored content, checking it is the one its hash names.
func readBlob(dir, hash string) (string, error) {
	if len(hash) < 3 {
		return "", fmt.Errorf("the recording names a message by %q, which is no hash", hash)
	}
	b, err := os.ReadFile(blobPath(dir, hash))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("message %s of the recording is missing from %s: %w", hash[:12], filepath.Join(dir, BlobsDir), err)
	}
	if err != nil {
		return "", fmt.Errorf("reading message %s of the recording: %w", hash[:12], err)
	}
	if Hash(string(b)) != hash {
		return "", fmt.Errorf("message %s of the recording (%s) does not match its hash: the file was changed", hash[:12], blobPath(dir, hash))
	}
	return string(b), nil
}

// Close flushes and closes the recording, returning the first write error.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mirrorFlush()
	if r.err == nil {
		r.err = r.mirrorErr
	}
	if r.f == nil {
		return r.err
	}
	if err := r.w.Flush(); err != nil && r.err == nil {
		r.err = err
	}
	if err := r.f.Close(); err != nil && r.err == nil {
		r.err = err
	}
	r.f = nil
	return r.err
}
