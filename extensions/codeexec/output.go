package codeexec

import (
	"strconv"
	"unicode/utf8"
)

// tail keeps the last bytes of a command's output and counts all of them.
type tail struct {
	buf   []byte
	total int64
	// max is the most kept; 0 means 1 MiB until text is asked for with a limit.
	max int
	// onWrite, when set, sees every piece of output as it is added (the
	// partial output reported while the command runs, package toolstream).
	onWrite func([]byte)
}

const tailKeep = 1 << 20

func (t *tail) keep() int {
	if t.max > 0 {
		return t.max
	}
	return tailKeep
}

// write adds output.
func (t *tail) write(p []byte) {
	if len(p) == 0 {
		return
	}
	if t.onWrite != nil {
		t.onWrite(p)
	}
	t.total += int64(len(p))
	k := t.keep()
	if len(p) >= k {
		t.buf = append(t.buf[:0], p[len(p)-k:]...)
		return
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*k {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-k:]...)
	}
}

// skip counts output that was dropped before it reached the tail.
func (t *tail) skip(n int64) { t.total += n }

// text returns the last limit bytes (starting at a character boundary), the total
// size, and whether output was cut.
func (t *tail) text(limit int) (string, int64, bool) {
	b := t.buf
	cut := t.total > int64(limit)
	if len(b) > limit {
		b = b[len(b)-limit:]
	}
	if cut {
		for i := 0; i < utf8.UTFMax && i < len(b) && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	return string(b), t.total, cut
}

// commas writes n with thousands separators: 48213 -> "48,213".
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := ""
	if n < 0 {
		neg, s = "-", s[1:]
	}
	var out []byte
	for i, c := range []byte(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, c)
	}
	return neg + string(out)
}
