package sdktest

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that several goroutines may write at once: a
// host's plugin log, or a logger's output, read by the test afterwards.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
