package natsjournal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/staging"
)

// With ?promoter=true a journal does not write the DELTAS stream (the
// journal stream) itself: each Append is a proposal on the EVENTS stream,
// which the one active promoter (RunPromoter) canonicalises, de-duplicates
// and checks against the current state (a key belongs to one record per
// area), then writes as deltas, recording its decision on the AUDIT stream.
// Append returns once the decision is recorded, so a write is acknowledged
// only when its deltas are stored.

// Decisions a promoter records.
const (
	DecisionPromote  = "promote"  // the entries were written as they came
	DecisionOverride = "override" // some were moved to the record that holds their key
	DecisionSkip     = "skip"     // nothing written: already stored, or invalid (Invalid says why)
	DecisionDefer    = "defer"    // not decided yet (the promoter could not reach the state); retried
)

// DefaultPromoteTimeout is how long a proposal waits for its decision: long
// enough for a standby promoter to take over (a few lease periods).
const DefaultPromoteTimeout = 60 * time.Second

// proposal is the body of an EVENTS message.
type proposal struct {
	ID      string   `json:"id"`
	Origin  string   `json:"origin,omitempty"`
	Entries []wire   `json:"entries"`
	MsgIDs  []string `json:"msg_ids"`
}

// Decision is the body of an AUDIT message: what the promoter did with a
// proposal.
type Decision struct {
	Proposal string `json:"proposal"`
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
	// Invalid is set when the proposal was refused: the writer's error.
	Invalid string `json:"invalid,omitempty"`
	// Seqs is each entry's DELTAS sequence (0: not written, a duplicate).
	Seqs []uint64 `json:"seqs"`
	// Payloads are the entries as the promoter canonicalised them.
	Payloads []json.RawMessage `json:"payloads"`
	Promoter string            `json:"promoter"`
	At       time.Time         `json:"at"`
}

// Names of the promoted mode's streams, derived from the journal's.
func (c Config) eventsStream() string  { return c.Stream + "_EVENTS" }
func (c Config) eventsSubject() string { return c.Subject + ".proposals" }
func (c Config) auditStream() string   { return c.Stream + "_AUDIT" }
func (c Config) auditSubject(p string) string {
	if p == "" {
		p = "*"
	}
	return c.Subject + ".audit." + p
}
func (c Config) leaseBucket() string { return c.Stream + "_PROMOTER" }

// ensurePromoted creates the EVENTS and AUDIT streams when missing.
func (j *Journal) ensurePromoted(ctx context.Context) error {
	if err := j.ensure(ctx); err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.promoted {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	for _, sc := range []jetstream.StreamConfig{
		{Name: j.cfg.eventsStream(), Subjects: []string{j.cfg.eventsSubject()}, Storage: jetstream.FileStorage,
			Replicas: j.cfg.Replicas, Duplicates: 2 * time.Minute, Description: "Exocortex memory proposals, for the promoter"},
		{Name: j.cfg.auditStream(), Subjects: []string{j.cfg.auditSubject("")}, Storage: jetstream.FileStorage,
			Replicas: j.cfg.Replicas, Duplicates: 2 * time.Minute, AllowDirect: true, DenyDelete: true, DenyPurge: true,
			Description: "Exocortex memory promoter decisions"},
	} {
		if _, err := j.js.CreateOrUpdateStream(ctx, sc); err != nil {
			return j.unavailable("creating stream "+sc.Name, err)
		}
	}
	j.promoted = true
	return nil
}

// proposalID names a proposal after its entries' message ids, so a retried
// write is the same proposal.
func proposalID(msgIDs []string) string {
	h := sha256.Sum256([]byte(strings.Join(msgIDs, "\n")))
	return "p" + hex.EncodeToString(h[:12])
}

// propose is Append in the promoted mode.
func (j *Journal) propose(ctx context.Context, entries []staging.Entry, msgIDs []string) ([]staging.Record, error) {
	if err := j.ensurePromoted(ctx); err != nil {
		return nil, err
	}
	ids := make([]string, len(entries))
	copy(ids, msgIDs)
	for i := range ids {
		if ids[i] == "" {
			ids[i] = nats.NewInbox()[len(nats.InboxPrefix):]
		}
	}
	p := proposal{ID: proposalID(ids), Origin: j.cfg.Name, MsgIDs: ids}
	now := time.Now().UTC()
	for _, e := range entries {
		ts := now
		if !e.TS.IsZero() {
			ts = e.TS.UTC()
		}
		pl, err := staging.EncodePayload(e.Payload)
		if err != nil {
			return nil, fmt.Errorf("natsjournal: encoding a %s payload: %w", e.Kind, err)
		}
		p.Entries = append(p.Entries, wire{V: staging.SchemaVersion, TS: ts, Kind: e.Kind, Session: e.Session, Payload: pl})
	}
	body, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("natsjournal: %w", err)
	}
	subj := j.cfg.auditSubject(p.ID)
	sub, err := j.nc.SubscribeSync(subj)
	if err != nil {
		return nil, j.unavailable("waiting for the promoter", err)
	}
	defer sub.Unsubscribe()
	m := nats.NewMsg(j.cfg.eventsSubject())
	m.Data = body
	m.Header.Set(jetstream.MsgIDHeader, p.ID)
	wctx, cancel := context.WithTimeout(ctx, j.cfg.WriteTimeout)
	for {
		_, err = j.js.PublishMsg(wctx, m)
		if err == nil || wctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
	if err != nil {
		return nil, j.unavailable("publishing a proposal", err)
	}
	timeout := j.cfg.PromoteTimeout
	if timeout <= 0 {
		timeout = DefaultPromoteTimeout
	}
	deadline := time.Now().Add(timeout)
	for {
		d, err := j.awaitDecision(ctx, sub, subj)
		if err != nil {
			return nil, err
		}
		if d != nil && d.Decision != DecisionDefer {
			return j.decided(ctx, entries, *d)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: %s: no promoter decided proposal %s within %s (is a promoter running? `exocortex memory promoter`)", memory.ErrJournalUnavailable, j.Location(), p.ID, timeout)
		}
	}
}

// awaitDecision waits up to a second for the decision on the subscription,
// then looks for it on the AUDIT stream (published before this host
// subscribed, or by a promoter that took over). nil: not yet.
func (j *Journal) awaitDecision(ctx context.Context, sub *nats.Subscription, subj string) (*Decision, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	msg, err := sub.NextMsg(time.Second)
	var data []byte
	switch {
	case err == nil:
		data = msg.Data
	case errors.Is(err, nats.ErrTimeout):
		gctx, cancel := context.WithTimeout(ctx, requestTimeout)
		raw, gerr := j.lastAudit(gctx, subj)
		cancel()
		if gerr != nil {
			return nil, nil
		}
		data = raw.Data
	default:
		return nil, j.unavailable("waiting for the promoter", err)
	}
	var d Decision
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("natsjournal: a decision on %s that does not decode: %w", subj, err)
	}
	return &d, nil
}

// decided turns a decision into the records Append returns.
func (j *Journal) decided(ctx context.Context, entries []staging.Entry, d Decision) ([]staging.Record, error) {
	if d.Invalid != "" {
		return nil, fmt.Errorf("natsjournal: the promoter %s refused the write: %s", d.Promoter, d.Invalid)
	}
	if len(d.Seqs) != len(entries) || len(d.Payloads) != len(entries) {
		return nil, fmt.Errorf("natsjournal: the decision on proposal %s names %d entries, not %d", d.Proposal, len(d.Seqs), len(entries))
	}
	out := make([]staging.Record, len(entries))
	for i, e := range entries {
		out[i] = staging.Record{V: staging.SchemaVersion, Seq: d.Seqs[i], Kind: e.Kind, Session: e.Session, Payload: d.Payloads[i]}
	}
	return out, nil
}

// Promoter names the active promoter and since when it holds the lease ("":
// none, or not the promoted mode).
func (j *Journal) Promoter(ctx context.Context) (string, error) {
	if !j.cfg.Promoted {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	kv, err := j.js.KeyValue(ctx, j.cfg.leaseBucket())
	if err != nil {
		return "", err
	}
	e, err := kv.Get(ctx, leaseKey)
	if err != nil {
		return "", err
	}
	return string(e.Value()), nil
}

// lastAudit reads the last decision recorded on subj (the AUDIT stream's
// handle is looked up once: a stream info request per lookup cost the
// promoter a tenth of its time).
func (j *Journal) lastAudit(ctx context.Context, subj string) (*jetstream.RawStreamMsg, error) {
	j.mu.Lock()
	st := j.audit
	j.mu.Unlock()
	if st == nil {
		var err error
		if st, err = j.js.Stream(ctx, j.cfg.auditStream()); err != nil {
			return nil, err
		}
		j.mu.Lock()
		j.audit = st
		j.mu.Unlock()
	}
	return st.GetLastMsgForSubject(ctx, subj)
}

// lastAudits reads the last decision on each of subjs (at most 1024) with
// one batched direct get of the AUDIT stream (JetStream's multi_last): the
// bodies by subject, absent for a subject with none.
func (j *Journal) lastAudits(ctx context.Context, subjs []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	if len(subjs) == 0 {
		return out, nil
	}
	req, err := json.Marshal(struct {
		MultiLast []string `json:"multi_last"`
	}{subjs})
	if err != nil {
		return nil, err
	}
	inbox := j.nc.NewRespInbox()
	sub, err := j.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe()
	if err := j.nc.PublishRequest("$JS.API.DIRECT.GET."+j.cfg.auditStream(), inbox, req); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(requestTimeout)
	for {
		m, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			return nil, fmt.Errorf("natsjournal: reading decisions: %w", err)
		}
		switch m.Header.Get("Status") {
		case "":
			out[m.Header.Get(jetstream.SubjectHeader)] = m.Data
		case "204": // end of the batch
			return out, nil
		case "404": // none of them decided
			return out, nil
		default:
			return nil, fmt.Errorf("natsjournal: reading decisions: status %s %s", m.Header.Get("Status"), m.Header.Get("Description"))
		}
	}
}
