package memory

import "fmt"

// pendingFulltext is what a commit left for the full-text index: the records
// to index again (from the state as it is when they are) and the journal
// sequence the index has then applied.
type pendingFulltext struct {
	ids  []string
	seen map[string]bool
	seq  uint64
}

// deferredFulltextLimit is how many records may wait for the full-text index
// before a commit indexes them itself.
const deferredFulltextLimit = 256

// deferFulltext leaves ids for the full-text index, applied up to seq: they
// are indexed, in one Bleve batch, when the index is next read (syncFulltext)
// or when deferredFulltextLimit of them wait. A session that archives a few
// messages every iteration (history compression) made a Bleve batch of each,
// then a segment, its persistence and its merges: about a fifth of an
// iteration's CPU (docs/perf/task20.md). Nothing reads the index in between,
// so every search still sees every commit before it; the documents are made
// from the state when they are indexed, which is the state they had at the
// commit or a later one. If the process ends without Close, the journal has
// the records and the next open indexes them (the index's applied sequence is
// behind). s.wmu is held.
func (s *Store) deferFulltext(ids []string, seq uint64) error {
	s.ftMu.Lock()
	p := &s.ftPending
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	for _, id := range ids {
		if !p.seen[id] {
			p.seen[id] = true
			p.ids = append(p.ids, id)
		}
	}
	p.seq = max(p.seq, seq)
	full := len(p.ids) >= deferredFulltextLimit
	s.ftMu.Unlock()
	if full {
		return s.flushFulltext()
	}
	return nil
}

// flushFulltext indexes what deferFulltext left.
func (s *Store) flushFulltext() error {
	s.ftMu.Lock()
	defer s.ftMu.Unlock()
	p := s.ftPending
	if len(p.ids) == 0 {
		return nil
	}
	s.ftPending = pendingFulltext{}
	if err := s.projectFulltextLocked(p.ids, p.seq); err != nil {
		return fmt.Errorf("memory: saved to the journal (seq %d), but the full-text index failed (it catches up on the next open): %w", p.seq, err)
	}
	return nil
}

// syncFulltext brings the full-text index up to the last commit before it is
// read. A failure is logged: the journal has the records and the next open
// indexes them; the read goes on with the index as it is.
func (s *Store) syncFulltext() {
	if err := s.flushFulltext(); err != nil {
		s.log.Warn(err.Error())
	}
}
