package natsjournal

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/staging"
)

// A promoter decides proposals in batches: whatever the consumer has
// delivered (up to promoterBatch) costs one catch-up of its replica, one
// pipelined publish of all the batch's deltas, one of all its decisions, and
// fire-and-forget acks, instead of those round trips per proposal. The
// guarantees are the one-at-a-time promoter's:
//
//   - A proposal is decided on a state holding every earlier decision: the
//     batch is cut before a proposal that names a record, or a key, that an
//     earlier proposal of the same cut names (deciding it needs their deltas
//     applied); the cut is written, applied, and deciding goes on from there.
//   - Deltas are stored before their decision is recorded, and a proposal is
//     acknowledged only after its decision is: a promoter that dies anywhere
//     in between leaves the proposal to be redelivered, decided again, and
//     its deltas dropped by the stream as duplicates of their message ids.
//   - A proposal whose decision is already recorded is acknowledged without
//     work (the lookups of a batch run concurrently).

// lookupParallel bounds the concurrent decision lookups of a batch.
const lookupParallel = 32

// pending is one proposal of a batch.
type pending struct {
	m       jetstream.Msg
	prop    proposal
	subj    string
	d       Decision
	entries []staging.Entry
	ids     []string
	// ups are the proposal's upserts, decoded once (nil for another kind,
	// or one that does not decode); names are the records its written
	// entries name.
	ups   []*memory.UpsertEvent
	names []string
}

// decodeUpserts decodes the proposal's upserts once, for refs and decide.
func (pe *pending) decodeUpserts() {
	if pe.ups != nil {
		return
	}
	pe.ups = make([]*memory.UpsertEvent, len(pe.prop.Entries))
	for i, w := range pe.prop.Entries {
		if w.Kind != memory.KindUpsert {
			continue
		}
		var u memory.UpsertEvent
		if json.Unmarshal(w.Payload, &u) == nil {
			pe.ups[i] = &u
		}
	}
}

// prepared is a batch decoded, and its recorded decisions looked up, in the
// background: while the batch before it is decided and written.
type prepared struct {
	ready chan struct{}
	todo  []*pending
	done  map[string]bool
}

// prepare decodes msgs and looks up the decisions already recorded on them,
// in the background. A proposal's message id is its id (propose sets it),
// which names the subject of its decision: the lookup starts before the
// batch is decoded and runs while it is.
func (p *promoter) prepare(ctx context.Context, msgs []jetstream.Msg) *prepared {
	pr := &prepared{ready: make(chan struct{})}
	var early []string
	for _, m := range msgs {
		if id := m.Headers().Get(jetstream.MsgIDHeader); id != "" {
			early = append(early, p.cfg.Journal.auditSubject(id))
		}
	}
	looked := make(chan map[string]bool, 1)
	go func() { looked <- p.decided(ctx, early) }()
	go func() {
		defer close(pr.ready)
		for _, m := range msgs {
			var prop proposal
			if err := json.Unmarshal(m.Data(), &prop); err != nil || prop.ID == "" || len(prop.Entries) != len(prop.MsgIDs) {
				p.log.Warn("memory promoter: dropping a proposal that does not decode", "err", err)
				m.Term()
				continue
			}
			pr.todo = append(pr.todo, &pending{m: m, prop: prop, subj: p.cfg.Journal.auditSubject(prop.ID)})
		}
		pr.done = <-looked
	}()
	return pr
}

// handleBatch decides the proposals of a prepared batch, in order; the
// mirror's catch-up runs while the batch's preparation ends.
func (p *promoter) handleBatch(ctx context.Context, pr *prepared) {
	synced := make(chan error, 1)
	go func() { synced <- p.syncMirror(ctx) }()
	<-pr.ready
	syncErr := <-synced
	todo := p.undecided(ctx, pr.todo, pr.done)
	for first := true; len(todo) > 0 && ctx.Err() == nil; first = false {
		if !first {
			syncErr = p.syncMirror(ctx)
		}
		if syncErr != nil {
			p.deferAll(ctx, todo, "catching up with the journal: "+syncErr.Error())
			return
		}
		n := p.decideCut(ctx, todo)
		if !p.writeCut(ctx, todo[:n]) {
			p.deferAll(ctx, todo[n:], "an earlier proposal of the batch was not written")
			return
		}
		todo = todo[n:]
	}
}

// undecided acknowledges the proposals whose decision is recorded already
// and returns the others. done holds the subjects looked up already (true:
// decided); the others are looked up now.
func (p *promoter) undecided(ctx context.Context, todo []*pending, done map[string]bool) []*pending {
	var rest []string
	for _, pe := range todo {
		if _, ok := done[pe.subj]; !ok {
			rest = append(rest, pe.subj)
		}
	}
	if len(rest) > 0 {
		for subj, d := range p.decided(ctx, rest) {
			done[subj] = d
		}
	}
	var out []*pending
	for _, pe := range todo {
		if done[pe.subj] {
			pe.m.Ack() // decided before (by a promoter that died before its ack)
			continue
		}
		out = append(out, pe)
	}
	return out
}

// decided looks up the decisions on subjs: for each subject looked up, true
// if a decision other than defer is recorded (a subject whose lookup failed
// is absent). One batched direct get (multi_last) for them all; if that
// fails, one by one, concurrently.
func (p *promoter) decided(ctx context.Context, subjs []string) map[string]bool {
	done := make(map[string]bool, len(subjs))
	if len(subjs) == 0 {
		return done
	}
	isDecided := func(data []byte) bool {
		var d Decision
		return json.Unmarshal(data, &d) == nil && d.Decision != DecisionDefer
	}
	if found, err := p.j.lastAudits(ctx, subjs); err == nil {
		for _, subj := range subjs {
			data, ok := found[subj]
			done[subj] = ok && isDecided(data)
		}
		return done
	} else {
		p.log.Debug("memory promoter: batched decision lookup", "err", err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, lookupParallel)
	for _, subj := range subjs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			rctx, cancel := context.WithTimeout(ctx, requestTimeout)
			prev, err := p.j.lastAudit(rctx, subj)
			cancel()
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				mu.Lock()
				done[subj] = false
				mu.Unlock()
				return
			}
			if err != nil {
				return
			}
			mu.Lock()
			done[subj] = isDecided(prev.Data)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return done
}

// decideCut decides todo's proposals until one conflicts with an earlier one
// of the cut, and returns how many it decided (at least one).
func (p *promoter) decideCut(ctx context.Context, todo []*pending) int {
	ids, keys := map[string]bool{}, map[[2]string]bool{}
	for n, pe := range todo {
		rid, rkeys := p.refs(pe)
		if n > 0 && (anyIn(rid, ids) || anyIn(rkeys, keys)) {
			return n
		}
		for _, id := range rid {
			ids[id] = true
		}
		for _, k := range rkeys {
			keys[k] = true
		}
		p.decide(pe)
		// An override moves an entry onto the key's holder: it names it too.
		for _, id := range pe.names {
			ids[id] = true
		}
	}
	return len(todo)
}

func anyIn[K comparable](xs []K, set map[K]bool) bool {
	for _, x := range xs {
		if set[x] {
			return true
		}
	}
	return false
}

// refs are the records and (area, key) pairs a proposal's decision reads:
// the records its entries name, the holders of the keys its upserts take,
// and the keys those records hold now.
func (p *promoter) refs(pe *pending) ([]string, [][2]string) {
	pe.decodeUpserts()
	var ids []string
	var keys [][2]string
	for i, w := range pe.prop.Entries {
		u := pe.ups[i]
		if u == nil {
			ids = append(ids, memory.EventRefs(w.Payload)...)
			continue
		}
		if u.ID != "" {
			ids = append(ids, u.ID)
		}
		if k := trimKey(u.Key); k != "" {
			keys = append(keys, [2]string{u.Area, k})
			if h, ok := p.mir.ByKey(u.Area, k); ok {
				ids = append(ids, h.ID)
			}
		}
	}
	for _, id := range ids {
		if r, ok := p.mir.Get(id); ok && r.Key != "" {
			keys = append(keys, [2]string{r.Area, r.Key})
		}
	}
	return ids, keys
}

// writeCut stores the deltas of a cut in one pipelined append, then records
// the decisions, pipelined, then acknowledges the proposals. false: the
// deltas were not stored (every proposal of the cut is deferred).
func (p *promoter) writeCut(ctx context.Context, cut []*pending) bool {
	var entries []staging.Entry
	var ids []string
	for _, pe := range cut {
		entries = append(entries, pe.entries...)
		ids = append(ids, pe.ids...)
	}
	if len(entries) > 0 {
		recs, err := p.j.Append(ctx, entries, ids)
		if err != nil {
			p.deferAll(ctx, cut, "writing the deltas: "+err.Error())
			return false
		}
		// The deltas go to the mirror at once (the replica's indexes follow
		// in the background); a gap (another writer) is read by the next
		// syncMirror.
		if err := p.mir.Apply(recs); err != nil {
			p.log.Debug("memory promoter: applying its own deltas", "err", err)
		}
		p.rep.offer(recs)
		k := 0
		for _, pe := range cut {
			for i := range pe.d.Seqs {
				if pe.d.Seqs[i] == 1<<63 {
					pe.d.Seqs[i] = recs[k].Seq
					k++
				}
			}
		}
		if p.cfg.afterDeltas != nil {
			for _, pe := range cut {
				if len(pe.entries) > 0 {
					p.cfg.afterDeltas(pe.prop.ID)
				}
				if ctx.Err() != nil {
					return true
				}
			}
		}
	}
	futures := make([]jetstream.PubAckFuture, len(cut))
	for i, pe := range cut {
		f, err := p.auditAsync(pe.subj, pe.d)
		if err != nil {
			p.log.Warn("memory promoter: recording a decision", "proposal", pe.prop.ID, "err", err)
			continue
		}
		futures[i] = f
	}
	p.inflight <- struct{}{}
	p.finish.Add(1)
	go func() {
		defer p.finish.Done()
		defer func() { <-p.inflight }()
		p.acknowledge(ctx, cut, futures)
	}()
	return true
}

// acknowledge waits for the cut's decisions to be stored and acknowledges
// their proposals; one not stored is redelivered (decided again: its deltas
// are duplicates).
func (p *promoter) acknowledge(ctx context.Context, cut []*pending, futures []jetstream.PubAckFuture) {
	tctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	for i, pe := range cut {
		ok := false
		if f := futures[i]; f != nil {
			select {
			case <-f.Ok():
				ok = true
			case err := <-f.Err():
				p.log.Warn("memory promoter: recording a decision", "proposal", pe.prop.ID, "err", err)
			case <-tctx.Done():
				if ctx.Err() != nil {
					return
				}
			}
		}
		if ok {
			pe.m.Ack()
		} else {
			pe.m.NakWithDelay(time.Second)
		}
	}
}

// deferAll records that the proposals could not be decided now and has them
// redelivered.
func (p *promoter) deferAll(ctx context.Context, todo []*pending, reason string) {
	for _, pe := range todo {
		p.audit(ctx, pe.subj, Decision{Proposal: pe.prop.ID, Decision: DecisionDefer, Reason: reason})
		pe.m.NakWithDelay(time.Second)
	}
}

// auditAsync publishes a decision without waiting for its acknowledgement.
func (p *promoter) auditAsync(subj string, d Decision) (jetstream.PubAckFuture, error) {
	d.Promoter, d.At = p.cfg.ID, time.Now().UTC()
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	msg := nats.NewMsg(subj)
	msg.Data = b
	msg.Header.Set(jetstream.MsgIDHeader, "audit-"+d.Proposal)
	return p.j.js.PublishMsgAsync(msg)
}

func trimKey(k string) string { return strings.TrimSpace(k) }

// syncMirror brings the mirror to the stream's end: the records it lacks
// come from the replica's journal file, then from the stream (those go to
// the replica's file too).
func (p *promoter) syncMirror(ctx context.Context) error {
	last, err := p.j.LastSeq(ctx)
	if err != nil || last <= p.mir.Seq() {
		return err
	}
	var batch []staging.Record
	fromStream := false
	feed := func(r staging.Record) error {
		batch = append(batch, r)
		if len(batch) >= 1000 {
			return flushMirror(p, &batch, fromStream)
		}
		return nil
	}
	if p.rep.seq() > p.mir.Seq() {
		if err := p.rep.read(ctx, p.mir.Seq(), feed); err != nil {
			return err
		}
		if err := flushMirror(p, &batch, false); err != nil {
			return err
		}
	}
	if last > p.mir.Seq() {
		fromStream = true
		if err := p.j.Read(ctx, p.mir.Seq(), feed); err != nil {
			return err
		}
	}
	return flushMirror(p, &batch, fromStream)
}

// flushMirror applies a batch of records to the mirror (and, read from the
// stream, hands them to the replica's file) and empties it.
func flushMirror(p *promoter, batch *[]staging.Record, fromStream bool) error {
	recs := *batch
	err := p.mir.Apply(recs)
	if fromStream {
		p.rep.offer(slices.Clone(recs))
	}
	*batch = recs[:0]
	return err
}
