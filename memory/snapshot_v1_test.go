package memory

import (
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"

	"github.com/exocortex/exocortex/staging"
)

// The writer of state.snap's format version 1, which this build reads (and
// rewrites as version 2) but no longer writes: tests make version 1 files
// with it.

// encodeState encodes the records (sorted by id, so equal states encode equally)
// and the counters.
func encodeState(st *State) ([]byte, error) {
	b, _, err := encodeStateParts(st)
	return b, err
}

// minPartRecords is the fewest records a store must hold for its snapshot to
// be cut in two parts.
const minPartRecords = 2000

// encodeStateParts is encodeState, also saying where the records can be cut
// (the header's Parts).
func encodeStateParts(st *State) ([]byte, []snapshotPart, error) {
	b := make([]byte, 0, 1<<20)
	b = binary.AppendUvarint(b, uint64(st.Len()))
	var err error
	var parts []snapshotPart
	for i, id := range st.sortedIDs() {
		if st.Len() >= minPartRecords && i == st.Len()/2 {
			parts = append(parts, snapshotPart{Record: i, Offset: len(b)})
		}
		if b, err = appendRecord(b, st.get(id)); err != nil {
			return nil, nil, err
		}
	}
	b = binary.AppendUvarint(b, uint64(len(st.unknown)))
	for _, k := range sortedKeys(st.unknown) {
		b = appendString(b, k)
		b = binary.AppendUvarint(b, uint64(st.unknown[k]))
	}
	return binary.AppendUvarint(b, uint64(st.skipped)), parts, nil
}

// writeSnapshotV1 writes st at the journal position at as a version 1
// snapshot, as the builds before format 2 did.
func writeSnapshotV1(path string, st *State, at staging.Checkpoint) error {
	body, parts, err := encodeStateParts(st)
	if err != nil {
		return err
	}
	h := snapshotHeader{Version: 1, Journal: at, Records: st.Len(), Bytes: len(body), CRC32C: crc32.Checksum(body, castagnoli), Parts: parts}
	head, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(append(head, '\n'), body...), 0o600)
}
