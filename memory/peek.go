package memory

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/exocortex/exocortex/staging"
)

// Peek is what a process that does not hold the store can read of it while
// another process does (the memory plugin of a running session): the record
// count as Open would find it, and the embedding model the vectors on disk
// were built with.
type Peek struct {
	// Records is the number of records in the state: the last snapshot
	// brought up to date with the journal's lines past it.
	Records int
	// JournalSeq is the last journal sequence applied.
	JournalSeq uint64
	// VectorModel is the model named by the vector index file's header ("":
	// no vector index on disk, so no vectors were ever built).
	VectorModel string
}

// PeekStore reads the store in dir without taking its lock and without
// writing anything: the snapshot (renamed into place in one step, so one
// consistent state), then every journal line past it, applied to that state
// as Open applies them; no index is opened. A snapshot that cannot be read is
// skipped and the whole journal replayed. A line being written is not read
// (staging.Scan), so the count may trail a write in flight by one. An
// absent store is an empty Peek.
func PeekStore(ctx context.Context, dir string) (Peek, error) {
	var p Peek
	st := newState()
	if snap, err := readSnapshot(filepath.Join(dir, SnapshotFile)); err == nil {
		st = snap.state
	} else if !errors.Is(err, errNoSnapshot) {
		st = newState() // the journal has it all
	}
	journal := filepath.Join(dir, JournalFile)
	if _, err := staging.Scan(ctx, journal, st.Applied(), func(r staging.Record) error {
		// An event that does not decode changes nothing, as on replay.
		_, _ = st.apply(r)
		return nil
	}); err != nil {
		return p, fmt.Errorf("memory: reading the journal of %s: %w", dir, err)
	}
	p.Records, p.JournalSeq = st.Len(), st.Applied()
	p.VectorModel = vectorFileModel(filepath.Join(dir, VectorsFile))
	return p, nil
}

// vectorFileModel is the model the vector file at path names in its header,
// "" when there is none or it is unreadable.
func vectorFileModel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadBytes('\n')
	var h vectorHeader
	if err != nil || json.Unmarshal(line, &h) != nil {
		return ""
	}
	return h.Model
}
