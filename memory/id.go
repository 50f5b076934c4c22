package memory

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// idBytes is the size of a record id: idTimeBytes of milliseconds since the
// Unix epoch (big-endian, so ids sort in the order they were made), then
// random bytes.
const (
	idBytes     = 10
	idTimeBytes = 6
)

// An id orders records made at different times by when they were made. The
// searches break equal scores by id (fusion.go, fulltext), so equal-scoring
// records come back oldest first in every run of the same writes: with purely
// random ids their order was a coin toss per run, which is what made two
// replays of one recorded session show different MEMORY RECALL blocks
// (docs/replay.md). The random part keeps ids made in the same millisecond by
// different processes apart.
func timedID(now time.Time) [idBytes]byte {
	var b [idBytes]byte
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(now.UnixMilli()))
	copy(b[:idTimeBytes], ms[8-idTimeBytes:])
	if _, err := rand.Read(b[idTimeBytes:]); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return b
}

func newID() string {
	b := timedID(time.Now())
	return hex.EncodeToString(b[:])
}

// nextID is the store's own id maker (s.wmu is held): ids the store makes
// strictly increase, so the records of one batch, made in the same
// millisecond, keep the order they were given in.
func (s *Store) nextID() string {
	b := timedID(time.Now())
	if bytes.Compare(b[:], s.lastID[:]) <= 0 {
		b = s.lastID
		for i := idBytes - 1; i >= 0; i-- {
			b[i]++
			if b[i] != 0 {
				break
			}
		}
	}
	s.lastID = b
	return hex.EncodeToString(b[:])
}
