// Package history keeps the operator's input history: every prompt and command
// submitted in a session, kept across runs, for Up/Down recall and Ctrl+R
// reverse search.
//
// The file holds JSON lines, one JSON string per entry, so a multi-line prompt
// stays one entry. Add appends one line with a single write to a file opened
// O_APPEND: a killed process loses nothing it already accepted, and two
// sessions appending at once do not interleave inside a line. A torn or
// malformed line (a crash mid-write, a hand edit) is skipped when the file is
// read and counted in Skipped, never fatal. When the file grows past twice the
// limit it is rewritten with the newest entries, through a temporary file and
// a rename, so a crash during the rewrite leaves the old file whole.
//
// Browsing works like a shell's: Prev keeps what the operator had typed as a
// draft, and Next past the newest entry gives the draft back.
package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"
)

// DefaultLimit is how many entries are kept when Open is given 0.
const DefaultLimit = 1000

// History is the list of entries, oldest first, and the browsing position. It
// is not safe for concurrent use: the terminal session calls it from its one
// update goroutine.
type History struct {
	path    string
	limit   int
	entries []string
	// lines counts the lines in the file, to decide when to compact it.
	lines int
	// Skipped counts unreadable lines ignored by Open.
	Skipped int
	// torn is set when the file does not end with a newline (a crash
	// mid-write): the next append starts a new line first.
	torn bool

	pos   int // index of the entry shown while browsing; len(entries) when not browsing
	draft string
}

// New returns an empty history that lives in memory only.
func New(limit int) *History {
	if limit <= 0 {
		limit = DefaultLimit
	}
	return &History{limit: limit}
}

// Open reads the history file at path (a missing file is an empty history) and
// returns a history that appends to it.
func Open(path string, limit int) (*History, error) {
	h := New(limit)
	h.path = path
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the input history %s: %w", path, err)
	}
	h.torn = len(b) > 0 && b[len(b)-1] != '\n'
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		h.lines++
		var s string
		if err := json.Unmarshal(line, &s); err != nil || strings.TrimSpace(s) == "" {
			h.Skipped++
			continue
		}
		h.push(s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the input history %s: %w", path, err)
	}
	if len(h.entries) > h.limit {
		h.entries = append([]string(nil), h.entries[len(h.entries)-h.limit:]...)
	}
	h.pos = len(h.entries)
	return h, nil
}

// push appends s unless it repeats the newest entry.
func (h *History) push(s string) bool {
	if n := len(h.entries); n > 0 && h.entries[n-1] == s {
		return false
	}
	h.entries = append(h.entries, s)
	return true
}

// Add records an entry (blank entries and an immediate repeat are ignored),
// writes it to the file before returning, and ends browsing.
func (h *History) Add(entry string) error {
	defer h.Reset()
	if strings.TrimSpace(entry) == "" || !h.push(entry) {
		return nil
	}
	if len(h.entries) > h.limit {
		h.entries = append([]string(nil), h.entries[len(h.entries)-h.limit:]...)
	}
	if h.path == "" {
		return nil
	}
	line, err := json.Marshal(entry)
	if err != nil {
		return fmt.Errorf("encoding a history entry: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o755); err != nil {
		return fmt.Errorf("creating the directory of the input history: %w", err)
	}
	f, err := os.OpenFile(h.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("opening the input history %s: %w", h.path, err)
	}
	if h.torn {
		line = append([]byte{'\n'}, line...)
	}
	_, werr := f.Write(append(line, '\n'))
	cerr := f.Close()
	if werr != nil {
		return fmt.Errorf("writing the input history %s: %w", h.path, werr)
	}
	if cerr != nil {
		return fmt.Errorf("writing the input history %s: %w", h.path, cerr)
	}
	h.torn = false
	h.lines++
	if h.lines > 2*h.limit {
		return h.compact()
	}
	return nil
}

// compact rewrites the file with the entries kept in memory.
func (h *History) compact() error {
	var buf bytes.Buffer
	for _, e := range h.entries {
		line, err := json.Marshal(e)
		if err != nil {
			return err
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if err := renameio.WriteFile(h.path, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("compacting the input history %s: %w", h.path, err)
	}
	h.lines = len(h.entries)
	return nil
}

// Path is the history file ("" for an in-memory history).
func (h *History) Path() string { return h.path }

// Len is the number of entries.
func (h *History) Len() int { return len(h.entries) }

// At returns entry i (0 is the oldest).
func (h *History) At(i int) string { return h.entries[i] }

// Entries returns a copy of the entries, oldest first.
func (h *History) Entries() []string { return append([]string(nil), h.entries...) }

// Browsing reports whether Prev has moved into the history.
func (h *History) Browsing() bool { return h.pos < len(h.entries) }

// Reset ends browsing; the draft is dropped.
func (h *History) Reset() {
	h.pos = len(h.entries)
	h.draft = ""
}

// Prev returns the entry before the one shown. current is what the input holds
// now; it is kept as the draft when browsing starts. ok is false at the oldest
// entry (or with no history), and the input should stay as it is.
func (h *History) Prev(current string) (string, bool) {
	if h.pos == 0 {
		return "", false
	}
	if !h.Browsing() {
		h.draft = current
	}
	h.pos--
	return h.entries[h.pos], true
}

// Next returns the entry after the one shown, or the draft when it moves past
// the newest. ok is false when not browsing.
func (h *History) Next() (string, bool) {
	if !h.Browsing() {
		return "", false
	}
	h.pos++
	if h.pos == len(h.entries) {
		d := h.draft
		h.draft = ""
		return d, true
	}
	return h.entries[h.pos], true
}

// Search returns the index of the newest entry older than before that contains
// query, case-insensitively; before is Len() to search from the newest. An
// empty query matches nothing.
func (h *History) Search(query string, before int) (int, bool) {
	if query == "" {
		return -1, false
	}
	q := strings.ToLower(query)
	if before > len(h.entries) {
		before = len(h.entries)
	}
	for i := before - 1; i >= 0; i-- {
		if strings.Contains(strings.ToLower(h.entries[i]), q) {
			return i, true
		}
	}
	return -1, false
}
