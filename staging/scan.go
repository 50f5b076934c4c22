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
	"path/filepath"
	"sort"
	"strings"
	"time"
)

type scanResult struct {
	size    int64 // offset after the last complete line
	lastSeq uint64
	index   []seqOffset
	bad     []BadLine
	badOffs [][2]int64 // [start, end) of each bad line, newline included
	torn    *BadLine
}

// scanFile checks every line of f from the top.
//
// Sequence numbers must rise. A line whose seq is out of order is judged against
// both neighbours (one line of look-ahead), so that one wrong number is quarantined
// alone: a seq that jumped ahead (…49, 9999, 51…) blames that line, not the 150
// good lines after it; a repeated or lower seq (…50, 50… or …50, 7…) blames the
// later line.
//
// from and fromSeq start the scan after a checkpoint (0, 0: from the top); line
// numbers then count from there.
func scanFile(ctx context.Context, f *os.File, path string, from int64, fromSeq uint64) (scanResult, error) {
	sc := scanResult{size: from, lastSeq: fromSeq}
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return sc, fmt.Errorf("staging: reading %s: %w", path, err)
	}
	br := bufio.NewReaderSize(f, 1<<20)
	off := from
	count := 0
	// pending is the last parsed line whose seq rose above every accepted line's:
	// it is accepted once the next parsed line does not contradict it.
	type candidate struct {
		seq      uint64
		line     int
		off, end int64
	}
	var pending *candidate
	accept := func(c *candidate) {
		if count%indexEvery == 0 {
			sc.index = append(sc.index, seqOffset{c.seq, c.off})
		}
		count++
		sc.lastSeq = c.seq
		sc.size = c.end
	}
	quarantine := func(line int, start, end int64, text []byte, reason string) {
		sc.bad = append(sc.bad, BadLine{File: path, Line: line, Offset: start, Reason: reason, Text: text})
		sc.badOffs = append(sc.badOffs, [2]int64{start, end})
	}
	for lineNo := 1; ; lineNo++ {
		if lineNo%65536 == 0 && ctx.Err() != nil {
			return sc, ctx.Err()
		}
		line, err := readLine(br)
		if err == io.EOF && len(line) == 0 {
			break
		}
		if err != nil && err != io.EOF {
			return sc, fmt.Errorf("staging: reading %s at line %d: %w", path, lineNo, err)
		}
		if err == io.EOF { // no newline: the write was torn
			sc.torn = &BadLine{File: path, Line: lineNo, Offset: off,
				Reason: "torn last line: no newline (a crash interrupted a write)", Text: line}
			break
		}
		start, end := off, off+int64(len(line))+1
		off = end
		seq, perr := checkLine(line)
		if perr != nil {
			if errors.Is(perr, ErrNewerVersion) {
				return sc, fmt.Errorf("staging: %s:%d: %w; upgrade Exocortex to open this log", path, lineNo, perr)
			}
			quarantine(lineNo, start, end, append([]byte(nil), line...), perr.Error())
			continue
		}
		cur := &candidate{seq: seq, line: lineNo, off: start, end: end}
		prev := sc.lastSeq
		if pending != nil {
			prev = pending.seq
		}
		switch {
		case seq <= sc.lastSeq:
			quarantine(lineNo, start, end, append([]byte(nil), line...),
				fmt.Sprintf("sequence %d does not follow %d (a repeated or out-of-order line; the lines around it are kept)", seq, prev))
			continue
		case pending == nil:
		case seq > pending.seq:
			accept(pending)
		case seq == pending.seq && pending.seq == sc.lastSeq+1:
			// The pending line follows on; this one repeats it.
			quarantine(lineNo, start, end, append([]byte(nil), line...),
				fmt.Sprintf("sequence %d does not follow %d: it repeats line %d (the lines around it are kept)", seq, pending.seq, pending.line))
			continue
		default: // sc.lastSeq < seq <= pending.seq, pending left a gap: it jumped ahead
			text, rerr := readAt(f, pending.off, pending.end-pending.off-1)
			if rerr != nil {
				return sc, fmt.Errorf("staging: reading %s at line %d: %w", path, pending.line, rerr)
			}
			quarantine(pending.line, pending.off, pending.end, text,
				fmt.Sprintf("sequence %d jumps ahead of its neighbours (%d before, %d after; the lines around it are kept)", pending.seq, sc.lastSeq, seq))
		}
		pending = cur
	}
	if pending != nil {
		accept(pending)
	}
	if len(sc.bad) > 0 {
		// Bad lines are reported in file order for the repair and the report.
		sort.Slice(sc.bad, func(i, j int) bool { return sc.bad[i].Offset < sc.bad[j].Offset })
		sort.Slice(sc.badOffs, func(i, j int) bool { return sc.badOffs[i][0] < sc.badOffs[j][0] })
		// size must cover every byte kept; bad lines before the end are removed by
		// repair, after which the file is scanned again.
		sc.size = off
	}
	return sc, nil
}

// readAt reads n bytes of f at off without moving its offset.
func readAt(f *os.File, off, n int64) ([]byte, error) {
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		return nil, err
	}
	return b, nil
}

// readLine returns the next line without its newline; at the end of the file it
// returns the remaining bytes (a line without newline) with io.EOF.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		buf := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			line, err = br.ReadSlice('\n')
			buf = append(buf, line...)
		}
		line = buf
	}
	if err != nil {
		return line, err
	}
	return line[:len(line)-1], nil
}

// repair writes the torn tail and bad lines to the quarantine file, then removes
// them from the log: the tail by truncation, bad lines by rewriting the file
// through a temporary file and an atomic rename. It returns the reopened file.
func (l *Log) repair(f *os.File, sc scanResult) (*os.File, error) {
	qpath := l.path + ".quarantine"
	var lines []BadLine
	lines = append(lines, sc.bad...)
	if sc.torn != nil {
		lines = append(lines, *sc.torn)
	}
	if err := appendQuarantine(qpath, lines, l.opts.Now()); err != nil {
		f.Close()
		return nil, err
	}
	l.rec.QuarantinePath = qpath
	if sc.torn != nil {
		if err := f.Truncate(sc.torn.Offset); err != nil {
			f.Close()
			return nil, fmt.Errorf("staging: cutting the torn last line of %s: %w", l.path, err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, fmt.Errorf("staging: syncing %s: %w", l.path, err)
		}
		t := *sc.torn
		l.rec.TornTail = &t
		l.opts.Logger.Warn("staging: cut a torn last line", "file", l.path, "line", t.Line, "bytes", len(t.Text), "quarantine", qpath)
	}
	if len(sc.bad) == 0 {
		return f, nil
	}
	tmp := l.path + ".rewrite"
	out, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("staging: rewriting %s without its malformed lines: %w", l.path, err)
	}
	fail := func(err error) (*os.File, error) {
		out.Close()
		os.Remove(tmp)
		f.Close()
		return nil, fmt.Errorf("staging: rewriting %s without its malformed lines: %w", l.path, err)
	}
	var pos int64
	keep := func(from, to int64) error {
		if to <= from {
			return nil
		}
		_, err := io.Copy(out, io.NewSectionReader(f, from, to-from))
		return err
	}
	for _, r := range sc.badOffs {
		if err := keep(pos, r[0]); err != nil {
			return fail(err)
		}
		pos = r[1]
	}
	end := sc.size
	if sc.torn != nil {
		end = sc.torn.Offset
	}
	if err := keep(pos, end); err != nil {
		return fail(err)
	}
	if err := out.Sync(); err != nil {
		return fail(err)
	}
	out.Close()
	if err := os.Rename(tmp, l.path); err != nil {
		return fail(err)
	}
	syncDir(filepath.Dir(l.path))
	f.Close()
	for _, b := range sc.bad {
		l.opts.Logger.Warn("staging: moved a malformed line to quarantine", "file", b.File, "line", b.Line, "reason", b.Reason, "quarantine", qpath)
	}
	l.rec.Quarantined = append(l.rec.Quarantined, sc.bad...)
	nf, err := os.OpenFile(l.path, os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("staging: reopening %s: %w", l.path, err)
	}
	return nf, nil
}

// quarantineLine is one line of <path>.quarantine.
type quarantineLine struct {
	QuarantinedAt time.Time `json:"quarantined_at"`
	BadLine
	Text       string `json:"text,omitempty"`
	TextBase64 []byte `json:"text_base64,omitempty"` // when the text is not valid UTF-8
}

func appendQuarantine(qpath string, lines []BadLine, now time.Time) error {
	var buf bytes.Buffer
	for _, b := range lines {
		q := quarantineLine{QuarantinedAt: now.UTC(), BadLine: b}
		if isUTF8(b.Text) {
			q.Text = string(b.Text)
		} else {
			q.TextBase64 = b.Text
		}
		enc, err := json.Marshal(q)
		if err != nil {
			return fmt.Errorf("staging: encoding quarantine entry for %s: %w", b, err)
		}
		buf.Write(enc)
		buf.WriteByte('\n')
	}
	qf, err := os.OpenFile(qpath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("staging: opening the quarantine file %s: %w", qpath, err)
	}
	if _, err := qf.Write(buf.Bytes()); err != nil {
		qf.Close()
		return fmt.Errorf("staging: writing the quarantine file %s (the log was left untouched): %w", qpath, err)
	}
	if err := qf.Sync(); err != nil {
		qf.Close()
		return fmt.Errorf("staging: syncing the quarantine file %s: %w", qpath, err)
	}
	return qf.Close()
}

func isUTF8(b []byte) bool { return strings.ToValidUTF8(string(b), "\x00\x00") == string(b) }

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
