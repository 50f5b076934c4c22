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
	// st resolves the places of a snapshot's base: places 0..nb-1 are its
	// records in the creation order it keeps (snapBase.orderAt), read through
	// the state, so nothing is sorted or allocated per record to build them.
	st *State
	nb int
	// Places nb and on are the records not in the base (all of them without
	// one), in creation order: ids and recs (nil once deleted) by place, pos
	// the place of each id. Records are updated in place, so the pointers
	// stay current.
	ids  []string
	recs []*Record
	pos  map[string]int
	// pool keeps searches' fusion scratch (*fuseScratch), whose slots are
	// indexed by place in the order.
	pool sync.Pool
}

// size is the number of places in the order.
func (o *order) size() int { return o.nb + len(o.ids) }

// at returns the id and the record (nil once deleted) at place p.
func (o *order) at(p int) (string, *Record) {
	if p >= o.nb {
		return o.ids[p-o.nb], o.recs[p-o.nb]
	}
	i := o.st.base.orderAt(p)
	if r := o.st.at(i); r != nil {
		return r.ID, r
	}
	id, _ := o.st.base.idView(i)
	return strings.Clone(id), nil
}

// rec returns the record at place p, nil once deleted.
func (o *order) rec(p int) *Record {
	if p >= o.nb {
		return o.recs[p-o.nb]
	}
	return o.st.at(o.st.base.orderAt(p))
}

// place returns id's place in the order.
func (o *order) place(id string) (int, bool) {
	if p, ok := o.pos[id]; ok {
		return p, true
	}
	if o.nb > 0 {
		if i, ok := o.st.base.find(id); ok {
			return o.st.base.place(i), true
		}
	}
	return 0, false
}

// reset forgets the order (the state it was built from was replaced).
func (o *order) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.built, o.st, o.nb, o.ids, o.recs, o.pos = false, nil, 0, nil, nil, nil
}

// scratch returns an empty fuseScratch with a slot for every place in the order.
// The caller holds s.mu (read or write) and has called ensure.
func (o *order) scratch() *fuseScratch {
	fs, _ := o.pool.Get().(*fuseScratch)
	if fs == nil {
		fs = &fuseScratch{}
	}
	if n := o.size(); len(fs.slot) < n {
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
// (read or write). A state opened from a snapshot of format 2 brings its
// base's order; only the records since are sorted.
func (o *order) ensure(st *State) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.built {
		return
	}
	o.st = st
	if st.base != nil {
		o.nb = st.base.n
	}
	// Sixteen bytes an entry, compared by sequence (the id only between records
	// of one event). Records not in the base were created after every record
	// of it, so they follow it.
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
		o.pos[x.r.ID] = o.nb + i
	}
	o.built = true
}

// created notes a record created at the end of the journal. An id created
// again after a delete keeps its first place, with the new record (the state
// holds a base record's). The caller holds s.mu for writing.
func (o *order) created(r *Record) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.built {
		return
	}
	if p, ok := o.pos[r.ID]; ok {
		o.recs[p-o.nb] = r
		return
	}
	if o.nb > 0 {
		if _, ok := o.st.base.find(r.ID); ok {
			return
		}
	}
	o.pos[r.ID] = o.size()
	o.ids = append(o.ids, r.ID)
	o.recs = append(o.recs, r)
}

// deleted notes that the record id left the state (a base record's place
// reads the state, which knows). The caller holds s.mu for writing.
func (o *order) deleted(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if p, ok := o.pos[id]; ok && o.built {
		o.recs[p-o.nb] = nil
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
	i, ok := o.place(id)
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
		for j, gap := i+dir, 0; j >= 0 && j < o.size() && gap <= maxNeighbourGap && len(out) < w; j += dir {
			n := o.rec(j)
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
