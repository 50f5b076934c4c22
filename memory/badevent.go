package memory

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/exocortex/exocortex/staging"
)

// BadEvent is a journal line that parses as a record but cannot be applied:
// a payload that does not decode into its kind's event, an upsert without an
// id or with an area no record can have, a key another record holds, a kind
// no version of the store writes. Damage that leaves the line valid JSON (a
// changed byte inside a string) looks like this; the staging log's own checks
// pass it. Whatever it recorded is not applied, so Open and Replay name it
// (the file, its line, its sequence and what is wrong), and Open recovers the
// record from the state snapshot when the snapshot holds the version the
// line wrote.
type BadEvent struct {
	Seq    uint64
	Kind   string
	Reason string
}

func (e *BadEvent) Error() string {
	return fmt.Sprintf("journal record %d (%s) cannot be applied: %s", e.Seq, e.Kind, e.Reason)
}

func badEvent(r staging.Record, reason string) *BadEvent {
	return &BadEvent{Seq: r.Seq, Kind: r.Kind, Reason: reason}
}

// refusal is why the state cannot apply upsert e, or "".
func (s *State) refusal(e UpsertEvent) string {
	switch {
	case e.ID == "":
		return "the upsert has no record id"
	case ValidArea(e.Area) != nil:
		return ValidArea(e.Area).Error()
	}
	if e.Key != "" {
		if holder, ok := s.keys[[2]string{e.Area, e.Key}]; ok && holder != e.ID {
			return fmt.Sprintf("key %q of area %s is held by record %s, not %s", e.Key, e.Area, holder, e.ID)
		}
	}
	return ""
}

// where names a bad event's line: "journal FILE line L (sequence S, KIND)".
// The line is found by reading the file (a rare path: only damage takes it);
// without it the sequence alone names the line.
func where(path string, e *BadEvent) string {
	if n := lineOfSeq(path, e.Seq); n > 0 {
		return fmt.Sprintf("journal %s line %d (sequence %d, %s)", path, n, e.Seq, e.Kind)
	}
	return fmt.Sprintf("journal %s, sequence %d (%s)", path, e.Seq, e.Kind)
}

// lineOfSeq is the 1-based line of path whose record has sequence seq, or 0.
// Every line begins {"v":N,"seq":S (staging writes that order).
func lineOfSeq(path string, seq uint64) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	want := []byte(`"seq":` + strconv.FormatUint(seq, 10) + `,`)
	br := bufio.NewReaderSize(f, 1<<16)
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		head := line[:min(len(line), 40)]
		if i := bytes.Index(head, []byte(`"seq":`)); i >= 0 && bytes.HasPrefix(head[i:], want) {
			return n
		}
		for err == bufio.ErrBufferFull { // a long line: skip the rest of it
			_, err = br.ReadSlice('\n')
		}
		if err != nil {
			return 0
		}
	}
}

// recovery looks up, in the state of a snapshot Open could not use as it is
// (its journal prefix no longer matches), the record version a journal line
// wrote: the record whose last change has that line's sequence.
type recovery struct {
	st    *State
	bySeq map[uint64]*Record
}

// writtenAt is the snapshot's record last changed by the event seq, or nil.
func (r *recovery) writtenAt(seq uint64) *Record {
	if r == nil || r.st == nil {
		return nil
	}
	if r.bySeq == nil {
		r.bySeq = map[uint64]*Record{}
		r.st.each(func(rec *Record) bool {
			r.bySeq[rec.Provenance.UpdatedSeq] = rec
			return true
		})
	}
	return r.bySeq[seq]
}

// restore puts the snapshot's version of a record into the state, in place of
// the event that could not be applied. Its access count and last access are
// the state's own (the events replayed after it add theirs, as they did when
// the snapshot was made).
func (s *State) restore(from *Record) change {
	rec := from.clone()
	rec.AccessCount, rec.LastAccess = 0, time.Time{}
	if old := s.get(rec.ID); old != nil {
		s.unsum(old)
		rec.AccessCount, rec.LastAccess = old.AccessCount, old.LastAccess
		if old.Key != "" {
			delete(s.keys, [2]string{old.Area, old.Key})
		}
	}
	s.add(rec)
	s.resum(rec)
	if rec.Key != "" {
		s.keys[[2]string{rec.Area, rec.Key}] = rec.ID
	}
	return change{id: rec.ID, content: true, vector: true}
}

// applyOrRecover applies r to the state at open; an event that cannot be
// applied is named in a notice and, when rec holds the version of the record
// it wrote, recovered from there. It returns the changes made.
func (s *Store) applyOrRecover(r staging.Record, rec *recovery) []change {
	chs, err := s.state.apply(r)
	if err == nil {
		return chs
	}
	var be *BadEvent
	if !errors.As(err, &be) {
		s.notice(fmt.Sprintf("journal record %d (%s) could not be applied and was skipped: %v", r.Seq, r.Kind, err))
		return chs
	}
	at := where(s.journal.Path(), be)
	if from := rec.writtenAt(r.Seq); from != nil {
		c := s.state.restore(from)
		s.notice(fmt.Sprintf("%s is damaged: %s; record %s was recovered from the state snapshot, which holds the version this line wrote (the journal line stays as it is: `exocortex memory replay --verify` names it until the store is exported and imported again)", at, be.Reason, c.id))
		return append(chs, c)
	}
	s.notice(fmt.Sprintf("%s is damaged: %s; what it recorded is not in the store and no snapshot holds it (the line stays in the journal: correct it by hand, then open the store again)", at, be.Reason))
	return chs
}
