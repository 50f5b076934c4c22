package natsjournal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/staging"
)

// leaseKey is the key of the promoter lease in its KV bucket.
const leaseKey = "active"

// promoterBatch is how many proposals a promoter fetches at once. It decides
// them one after the other, in stream order, but writes their deltas and
// decisions pipelined (batch.go).
const promoterBatch = 1024

// promoterInFlight is how many batches may await their decisions'
// acknowledgements at once, and promoterAckPending how many proposals the
// server delivers before it has their acks: enough for those batches and
// the next pull.
const (
	promoterInFlight   = 4
	promoterAckPending = (promoterInFlight + 2) * promoterBatch
)

// PromoterConfig configures RunPromoter.
type PromoterConfig struct {
	// Journal is the shared journal's configuration (Promoted is ignored:
	// the promoter writes the deltas itself).
	Journal Config
	// Dir is the promoter's own replica of the journal, the state it decides
	// on (a store directory like any host's).
	Dir string
	// ID names this promoter in the lease and the audit (default: the
	// client name and the process id).
	ID string
	// Lease is how long the lease outlives its holder: a promoter that dies
	// is replaced after at most this long (default 3s).
	Lease  time.Duration
	Logger *slog.Logger
	// afterDeltas, when set, runs after a proposal's deltas are stored and
	// before its decision is recorded (a test kills the promoter there).
	afterDeltas func(proposal string)
}

// RunPromoter serves as the promoter until ctx ends: it waits for the lease
// (one promoter is active at a time; the others are standbys), then
// consumes the EVENTS stream through the durable consumer "promoter", one
// proposal at a time. A proposal is decided against the promoter's replica
// brought up to the stream's end; its deltas are written under the writer's
// message ids, then the decision goes to AUDIT, then the proposal is
// acknowledged. A promoter that dies anywhere in between is replaced by one
// that finds the decision already recorded (nothing is done twice) or writes
// the deltas again under the same ids (the stream drops the copies).
func RunPromoter(ctx context.Context, cfg PromoterConfig) error {
	if cfg.Lease <= 0 {
		cfg.Lease = 3 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	jc := cfg.Journal
	jc.Promoted = false
	if cfg.ID == "" {
		cfg.ID = fmt.Sprintf("%s-%d", cmpOr(jc.Name, "promoter"), time.Now().UnixNano()%1_000_000)
	}
	jc.Name = cfg.ID
	jc.Logger = cfg.Logger
	j, err := Open(ctx, jc)
	if err != nil {
		return err
	}
	defer j.Close()
	rep, err := openReplica(ctx, cfg.Dir, j, cfg.Logger)
	if err != nil {
		return err
	}
	defer rep.close()
	p := &promoter{cfg: cfg, j: j, rep: rep, log: cfg.Logger}
	for ctx.Err() == nil {
		if err := p.serve(ctx); err != nil && ctx.Err() == nil {
			p.log.Warn("memory promoter: standing by", "id", cfg.ID, "err", err)
			sleep(ctx, cfg.Lease/3)
		}
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

type promoter struct {
	cfg PromoterConfig
	j   *Journal
	rep *replica
	log *slog.Logger
	// inflight bounds the batches awaiting their decisions' acks; finish
	// waits for them when the lease ends.
	inflight chan struct{}
	finish   sync.WaitGroup
	// mir is the state decisions are made on: the replica's records,
	// rebuilt from its journal file each time the lease is taken, then fed
	// the promoter's own deltas as they are stored (batch.go).
	mir *memory.Mirror
}

// serve takes the lease (waiting for it) and promotes while it holds it.
func (p *promoter) serve(ctx context.Context) error {
	if err := p.j.ensurePromoted(ctx); err != nil {
		return err
	}
	js := p.j.js
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	kv, err := js.CreateOrUpdateKeyValue(rctx, jetstream.KeyValueConfig{Bucket: p.cfg.Journal.leaseBucket(), TTL: p.cfg.Lease,
		Replicas: max(p.cfg.Journal.Replicas, 1), Description: "the active Exocortex memory promoter"})
	cancel()
	if err != nil {
		return fmt.Errorf("the lease bucket: %w", err)
	}
	// Wait for the lease.
	var rev uint64
	for {
		rctx, cancel := context.WithTimeout(ctx, requestTimeout)
		rev, err = kv.Create(rctx, leaseKey, []byte(p.cfg.ID))
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		sleep(ctx, p.cfg.Lease/4)
	}
	p.log.Info("memory promoter: active", "id", p.cfg.ID)
	p.mir = memory.NewMirror()
	p.rep.setFollowing(false)
	defer p.rep.setFollowing(true)
	lctx, lose := context.WithCancel(ctx)
	renewed := make(chan struct{})
	// Stopping lets the lease expire (after at most Lease): a standby takes
	// over as it would from a promoter that crashed.
	defer func() {
		lose()
		<-renewed
	}()
	go func() {
		defer close(renewed)
		for {
			sleep(lctx, p.cfg.Lease/3)
			if lctx.Err() != nil {
				return
			}
			rctx, cancel := context.WithTimeout(lctx, p.cfg.Lease/2)
			r, err := kv.Update(rctx, leaseKey, []byte(p.cfg.ID), rev)
			cancel()
			if err != nil {
				p.log.Warn("memory promoter: lost the lease", "id", p.cfg.ID, "err", err)
				lose()
				return
			}
			rev = r
		}
	}()
	rctx, cancel = context.WithTimeout(ctx, requestTimeout)
	cons, err := js.CreateOrUpdateConsumer(rctx, p.cfg.Journal.eventsStream(), jetstream.ConsumerConfig{
		Durable: "promoter", AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: promoterAckPending,
		AckWait: max(5*time.Second, 2*p.cfg.Lease), DeliverPolicy: jetstream.DeliverAllPolicy})
	cancel()
	if err != nil {
		return fmt.Errorf("the promoter consumer: %w", err)
	}
	// The consumer pulls continuously (the next pull is under way while a
	// batch is decided); the callback hands each message to this loop.
	in := make(chan jetstream.Msg, 2*promoterBatch)
	cc, err := cons.Consume(func(m jetstream.Msg) {
		select {
		case in <- m:
		case <-lctx.Done():
		}
	}, jetstream.PullMaxMessages(promoterBatch), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		p.log.Debug("memory promoter: consuming", "err", err)
	}))
	if err != nil {
		return fmt.Errorf("the promoter consumer: %w", err)
	}
	defer cc.Stop()
	// Whatever has arrived is decided as one batch (one catch-up,
	// pipelined deltas and decisions), so a backlog is taken promoterBatch
	// at a time and a lone proposal waits for nothing. The next batch, if
	// its messages are here, is decoded and its recorded decisions looked up
	// while this one is decided; a batch's decisions are awaited, and its
	// proposals acknowledged, while the next is decided (at most
	// promoterInFlight batches at once).
	p.inflight = make(chan struct{}, promoterInFlight)
	defer p.finish.Wait()
	gather := func(wait bool) []jetstream.Msg {
		var got []jetstream.Msg
		if wait {
			select {
			case <-lctx.Done():
				return nil
			case m := <-in:
				got = append(got, m)
			}
		}
		for len(got) < promoterBatch {
			select {
			case m := <-in:
				got = append(got, m)
			default:
				return got
			}
		}
		return got
	}
	var next *prepared
	for lctx.Err() == nil {
		cur := next
		if cur == nil {
			got := gather(true)
			if len(got) == 0 {
				continue
			}
			cur = p.prepare(lctx, got)
		}
		next = nil
		if got := gather(false); len(got) > 0 {
			next = p.prepare(lctx, got)
		}
		p.handleBatch(lctx, cur)
	}
	if ctx.Err() == nil {
		return errors.New("the lease was lost")
	}
	return nil
}

// audit records a decision.
func (p *promoter) audit(ctx context.Context, subj string, d Decision) error {
	d.Promoter, d.At = p.cfg.ID, time.Now().UTC()
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	msg := nats.NewMsg(subj)
	msg.Data = b
	if d.Decision != DecisionDefer {
		msg.Header.Set(jetstream.MsgIDHeader, "audit-"+d.Proposal)
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	_, err = p.j.js.PublishMsg(rctx, msg)
	return err
}

// decide canonicalises the proposal's entries and checks them against the
// state: it sets the entries to write (with their ids and the records they
// name), and the decision, whose Seqs hold 1<<63 for each entry to write
// (filled in once written) and 0 for one dropped as a duplicate.
func (p *promoter) decide(pe *pending) {
	pe.decodeUpserts()
	prop := pe.prop
	d := Decision{Proposal: prop.ID, Decision: DecisionPromote, Seqs: make([]uint64, len(prop.Entries)), Payloads: make([]json.RawMessage, len(prop.Entries))}
	var entries []staging.Entry
	var ids, names []string
	var reasons []string
	for i, w := range prop.Entries {
		payload := w.Payload
		keep := true
		var named []string
		if pu := pe.ups[i]; pu != nil {
			u := *pu
			u.Key = strings.TrimSpace(u.Key)
			u.Tags = canonicalTags(u.Tags)
			if u.Key != "" {
				if holder, ok := p.mir.ByKey(u.Area, u.Key); ok && holder.ID != u.ID {
					reasons = append(reasons, fmt.Sprintf("entry %d: key %q in area %s belongs to record %s: %s is written to it", i+1, u.Key, u.Area, holder.ID, u.ID))
					u.ID = holder.ID
					d.Decision = DecisionOverride
				}
			}
			if cur, ok := p.mir.Get(u.ID); ok && sameContent(cur, u) {
				keep = false
				reasons = append(reasons, fmt.Sprintf("entry %d: record %s already holds this", i+1, u.ID))
			}
			if b, err := staging.EncodePayload(u); err == nil {
				payload = b
			}
			if u.ID != "" {
				named = []string{u.ID}
			}
		} else {
			named = memory.EventRefs(payload)
		}
		d.Payloads[i] = payload
		if keep {
			d.Seqs[i] = 1 << 63
			entries = append(entries, staging.Entry{Kind: w.Kind, Session: w.Session, TS: w.TS, Payload: json.RawMessage(payload)})
			ids = append(ids, prop.MsgIDs[i])
			names = append(names, named...)
		}
	}
	if err := p.mir.Check(entries); err != nil {
		pe.d, pe.entries, pe.ids, pe.names = Decision{Proposal: prop.ID, Decision: DecisionSkip, Invalid: err.Error(), Seqs: d.Seqs, Payloads: d.Payloads}, nil, nil, nil
		return
	}
	if len(entries) == 0 {
		d.Decision = DecisionSkip
	}
	d.Reason = strings.Join(reasons, "; ")
	pe.d, pe.entries, pe.ids, pe.names = d, entries, ids, names
}

func canonicalTags(tags []string) []string {
	if len(tags) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// sameContent reports whether an upsert would leave the record as it is.
func sameContent(r *memory.Record, u memory.UpsertEvent) bool {
	if r.Area != u.Area || r.Text != u.Text || r.Key != u.Key || !slices.Equal(canonicalTags(r.Tags), u.Tags) {
		return false
	}
	if u.Status != "" && u.Status != r.Status || u.Importance != nil && *u.Importance != r.Importance {
		return false
	}
	a, _ := json.Marshal(r.Metadata)
	b, _ := json.Marshal(u.Metadata)
	return string(a) == string(b) || len(r.Metadata) == 0 && len(u.Metadata) == 0
}
