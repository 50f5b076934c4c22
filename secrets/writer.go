package secrets

import (
	"io"
	"sync/atomic"
)

// Writer masks everything written through it (the log file: the host's slog
// lines and the plugins' stderr). Its masker is set once the secrets are read,
// which is after the log opens; until then it passes bytes through.
type Writer struct {
	w      io.Writer
	masker atomic.Pointer[Masker]
}

// NewWriter returns a Writer over w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// SetMasker sets the masker every later write goes through.
func (w *Writer) SetMasker(m *Masker) { w.masker.Store(m) }

// Write masks p and writes it. It reports len(p) on success, whatever the
// masked length: callers count what they gave.
func (w *Writer) Write(p []byte) (int, error) {
	if _, err := w.w.Write(w.masker.Load().MaskBytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close closes the underlying writer when it is a Closer.
func (w *Writer) Close() error {
	if c, ok := w.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
