package staging

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// Read calls fn for every record with a sequence number greater than since, in
// order, up to the end of the log as it was when Read started. Appends may go on
// concurrently. An error from fn stops the read and is returned as it is.
func (l *Log) Read(ctx context.Context, since uint64, fn func(Record) error) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return fmt.Errorf("staging: reading %s: the log is closed", l.path)
	}
	end := l.size
	var start int64
	// The last index entry at or before since+1 is a line boundary to start from.
	i := sort.Search(len(l.index), func(i int) bool { return l.index[i].seq > since+1 })
	if i > 0 {
		start = l.index[i-1].off
	}
	l.mu.Unlock()
	f, err := os.Open(l.path)
	if err != nil {
		return fmt.Errorf("staging: reading %s: %w", l.path, err)
	}
	defer f.Close()
	_, err = readRecords(ctx, io.NewSectionReader(f, start, end-start), l.path, since, false, fn)
	return err
}

// Scan reads the log at path without taking its lock (so it can follow a log that
// another process is writing) and calls fn for every record with a sequence number
// greater than since. A partial last line (a write in progress) is not read. Lines
// that do not parse are skipped and returned; the writer's next Open quarantines
// them. A missing file is an empty log.
func Scan(ctx context.Context, path string, since uint64, fn func(Record) error) ([]BadLine, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("staging: reading %s: %w", path, err)
	}
	defer f.Close()
	return readRecords(ctx, f, path, since, true, fn)
}

// readRecords decodes lines from r. lenient skips bad lines (Scan); otherwise a bad
// line is an error naming the file and line (Read, on a file Open has repaired).
func readRecords(ctx context.Context, r io.Reader, path string, since uint64, lenient bool, fn func(Record) error) ([]BadLine, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var bad []BadLine
	var off int64
	for lineNo := 1; ; lineNo++ {
		if lineNo%4096 == 0 && ctx.Err() != nil {
			return bad, ctx.Err()
		}
		line, err := readLine(br)
		if err == io.EOF {
			return bad, nil // a line without newline is a write in progress
		}
		if err != nil {
			return bad, fmt.Errorf("staging: reading %s: %w", path, err)
		}
		start := off
		off += int64(len(line)) + 1
		if seq, ok := quickSeq(line); ok && seq <= since {
			continue
		}
		rec, perr := parseLine(line)
		if perr != nil {
			b := BadLine{File: path, Line: lineNo, Offset: start, Reason: perr.Error(), Text: append([]byte(nil), line...)}
			if !lenient || errors.Is(perr, ErrNewerVersion) {
				return bad, fmt.Errorf("staging: %s (line %d from the read position): %w", path, b.Line, perr)
			}
			bad = append(bad, b)
			continue
		}
		if rec.Seq <= since {
			continue
		}
		// The reader's buffer is reused: give fn its own copy of the payload.
		rec.Payload = append(json.RawMessage(nil), rec.Payload...)
		if err := fn(rec); err != nil {
			return bad, err
		}
	}
}

// Quarantined reads the quarantine file of the log at path (<path>.quarantine):
// the lines Open moved out of the log, oldest first. A missing file means none.
func Quarantined(path string) ([]BadLine, error) {
	qpath := path + ".quarantine"
	f, err := os.Open(qpath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("staging: reading the quarantine file %s: %w", qpath, err)
	}
	defer f.Close()
	var out []BadLine
	br := bufio.NewReaderSize(f, 1<<16)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			var q quarantineLine
			if jerr := json.Unmarshal(line, &q); jerr != nil {
				return out, fmt.Errorf("staging: %s:%d: not a quarantine entry: %w", qpath, n, jerr)
			}
			b := q.BadLine
			b.Text = []byte(q.Text)
			if q.TextBase64 != nil {
				b.Text = q.TextBase64
			}
			out = append(out, b)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("staging: reading the quarantine file %s: %w", qpath, err)
		}
	}
}
