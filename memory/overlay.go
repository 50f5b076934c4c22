package memory

import (
	"fmt"
	"sort"
	"time"

	"github.com/exocortex/exocortex/staging"
)

// Overlay is a private state over a copy of a store's records, to which
// events are applied as the store would apply them, without a journal: what a
// dry run (sleep --dry-run) needs to plan phase after phase on the state its
// earlier phases would leave, while the store itself stays as it is and is
// neither copied nor replayed. It is not safe for concurrent use.
type Overlay struct {
	st *State
}

// NewOverlay starts from recs (as Records returns them), taken at journal
// sequence seq: the events appended next get seq+1, seq+2, ..., as in the
// store if no one else writes meanwhile.
func NewOverlay(recs []*Record, seq uint64) *Overlay {
	st := newState()
	for _, r := range recs {
		c := r.clone()
		st.add(c)
		if c.Key != "" {
			st.keys[[2]string{c.Area, c.Key}] = c.ID
		}
		st.resum(c)
	}
	st.applied = seq
	return &Overlay{st: st}
}

// Append checks entries as Store.Append does and applies them, stamped at
// their TS or else now.
func (o *Overlay) Append(entries []staging.Entry, now time.Time) ([]staging.Record, error) {
	if err := checkEntries(o.st, entries); err != nil {
		return nil, err
	}
	out := make([]staging.Record, len(entries))
	for i, e := range entries {
		b, err := staging.EncodePayload(e.Payload)
		if err != nil {
			return nil, &InputError{Index: i, Err: fmt.Errorf("%s: encoding the payload: %w", e.Kind, err)}
		}
		ts := e.TS
		if ts.IsZero() {
			ts = now
		}
		r := staging.Record{V: staging.SchemaVersion, Seq: o.st.applied + 1, TS: ts.UTC(), Kind: e.Kind, Session: e.Session, Payload: b}
		if _, err := o.st.apply(r); err != nil {
			return nil, &InputError{Index: i, Err: fmt.Errorf("%s: %w", e.Kind, err)}
		}
		out[i] = r
	}
	return out, nil
}

// Records returns copies of every record, sorted by id.
func (o *Overlay) Records() []*Record {
	out := make([]*Record, 0, o.st.Len())
	o.st.each(func(r *Record) bool {
		out = append(out, r.clone())
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Seq is the sequence of the last event applied.
func (o *Overlay) Seq() uint64 { return o.st.applied }

// Hash is the overlay's state hash, comparable with the store's.
func (o *Overlay) Hash() string { return o.st.Hash() }
