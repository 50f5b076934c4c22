package memory

import (
	"cmp"
	"slices"
	"strings"
	"sync"
)

// order keeps every record's place in creation order (journal sequence), so that a
// search can look at the records written just before and after a candidate: the
// turns around a turn of a conversation, the notes around a note of a session. It
// is built on the first search that needs it and extended as records are created;
// deleted records stay in it and are skipped.
type order struct {
	mu    sync.Mutex
	built bool
	ids   []string
	// recs holds each position's record (nil once deleted), so that a walk
	// along the order reads records without a lookup in the state per step.
	// Records are updated in place, so the pointers stay current.
	recs []*Record
	pos  map[string]int
	// pool keeps searches' fusion scratch (*fuseScratch), whose slots are
	// indexed by place in the order.
	pool sync.Pool
}

// scratch returns an empty fuseScratch with a slot for every place in the order.
// The caller holds s.mu (read or write) and has called ensure.
func (o *order) scratch() *fuseScratch {
	fs, _ := o.pool.Get().(*fuseScratch)
	if fs == nil {
		fs = &fuseScratch{}
	}
	if n := len(o.ids); len(fs.slot) < n {
		fs.slot = append(fs.slot, make([]int32, n-len(fs.slot)+n/8)...)
	}
	return fs
}

// release clears fs and returns it to the pool.
func (o *order) release(fs *fuseScratch) {
	fs.reset()
	o.pool.Put(fs)
}

// maxNeighbourGap bounds how many other records (other areas, deleted, archived)
// a neighbour lookup steps over.
const maxNeighbourGap = 8

// ensure builds the order from st if it is not built yet. The caller holds s.mu
// (read or write).
func (o *order) ensure(st *State) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.built {
		return
	}
	// Sixteen bytes an entry, compared by sequence (the id only between records
	// of one event): at 100k records this is what a one-shot CLI search pays
	// on top of Open.
	type e struct {
		seq uint64
		r   *Record
	}
	es := make([]e, 0, len(st.recs))
	for _, r := range st.recs {
		es = append(es, e{r.Provenance.Seq, r})
	}
	slices.SortFunc(es, func(a, b e) int {
		if a.seq != b.seq {
			return cmp.Compare(a.seq, b.seq)
		}
		return strings.Compare(a.r.ID, b.r.ID)
	})
	o.ids = make([]string, len(es))
	o.recs = make([]*Record, len(es))
	o.pos = make(map[string]int, len(es))
	for i, x := range es {
		o.ids[i] = x.r.ID
		o.recs[i] = x.r
		o.pos[x.r.ID] = i
	}
	o.built = true
}

// created notes a record created at the end of the journal. An id created
// again after a delete keeps its first place, with the new record. The caller
// holds s.mu for writing.
func (o *order) created(r *Record) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.built {
		return
	}
	if i, ok := o.pos[r.ID]; ok {
		o.recs[i] = r
		return
	}
	o.pos[r.ID] = len(o.ids)
	o.ids = append(o.ids, r.ID)
	o.recs = append(o.recs, r)
}

// deleted notes that the record id left the state. The caller holds s.mu for
// writing.
func (o *order) deleted(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if i, ok := o.pos[id]; ok && o.built {
		o.recs[i] = nil
	}
}

// sessionOf is what makes two records part of one exchange: the "session"
// metadata when there is one (an imported conversation), else the session that
// wrote the record.
func sessionOf(r *Record) string {
	if v, ok := r.Metadata["session"].(string); ok && v != "" {
		return v
	}
	return r.Provenance.Session
}

// neighbours returns the ids of up to w active records before and after id in
// creation order, nearest first, in the same area and session. The caller holds
// s.mu (read or write) and has called ensure.
func (o *order) neighbours(st *State, id string, w int) (before, after []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	i, ok := o.pos[id]
	r := st.get(id)
	if !ok || r == nil {
		return nil, nil
	}
	sess := sessionOf(r)
	if sess == "" {
		return nil, nil // a note outside any exchange stands alone
	}
	walk := func(dir int) []string {
		var out []string
		for j, gap := i+dir, 0; j >= 0 && j < len(o.ids) && gap <= maxNeighbourGap && len(out) < w; j += dir {
			n := o.recs[j]
			if n == nil || n.Area != r.Area || n.Status != StatusActive {
				gap++
				continue
			}
			if sessionOf(n) != sess {
				break
			}
			out = append(out, n.ID)
		}
		return out
	}
	return walk(-1), walk(1)
}
