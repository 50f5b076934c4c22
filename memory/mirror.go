package memory

import (
	"fmt"

	"github.com/exocortex/exocortex/staging"
)

// Mirror is the record state of a journal without any index: what a
// promoter decides on (a record's content, which record holds a key, whether
// a batch applies). Applying a record costs microseconds, where a store's
// apply also writes its journal copy and a Bleve batch; a promoter that
// waited for those between batches spent most of its time there.
// A Mirror is not safe for concurrent use.
type Mirror struct {
	st *State
}

// NewMirror is an empty mirror (sequence 0). It keeps no state hash (no
// tally: nothing reads it), which halves the cost of applying an upsert.
func NewMirror() *Mirror {
	st := newState()
	st.tallyOK = false
	return &Mirror{st: st}
}

// Seq is the last sequence applied.
func (m *Mirror) Seq() uint64 { return m.st.applied }

// Apply applies records in order: one already applied is skipped, one that
// does not follow (a gap) is an error naming it.
func (m *Mirror) Apply(recs []staging.Record) error {
	for _, r := range recs {
		if r.Seq <= m.st.applied {
			continue
		}
		if r.Seq != m.st.applied+1 {
			return fmt.Errorf("memory: record %d does not follow the mirror's seq %d", r.Seq, m.st.applied)
		}
		// A record that cannot apply is noted by the stores and passed
		// over; the mirror passes over it alike.
		_, _ = m.st.apply(r)
	}
	return nil
}

// Get is the record id (a copy), if it exists.
func (m *Mirror) Get(id string) (*Record, bool) {
	if r := m.st.get(id); r != nil {
		return r.clone(), true
	}
	return nil, false
}

// ByKey is the record holding key in area (a copy), if any.
func (m *Mirror) ByKey(area, key string) (*Record, bool) {
	if r := m.st.byKey(area, key); r != nil {
		return r.clone(), true
	}
	return nil, false
}

// Check validates entries against the mirror as Store.Append does.
func (m *Mirror) Check(entries []staging.Entry) error { return checkEntries(m.st, entries) }
