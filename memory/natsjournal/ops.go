package natsjournal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/exocortex/exocortex/staging"
)

// Append publishes the entries, in order, each with its message id, and
// waits for the stream's acknowledgements: a record is returned only once
// the stream has stored it (on a majority of its replicas in a cluster). A
// message the server does not acknowledge is published again with the same
// id until WriteTimeout, so it is stored once; a duplicate's acknowledgement
// carries the first copy's sequence.
func (j *Journal) Append(ctx context.Context, entries []staging.Entry, msgIDs []string) ([]staging.Record, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	if err := j.connected(ctx); err != nil {
		return nil, err
	}
	if j.cfg.Promoted {
		return j.propose(ctx, entries, msgIDs)
	}
	if err := j.ensure(ctx); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	msgs := make([]*nats.Msg, len(entries))
	recs := make([]staging.Record, len(entries))
	for i, e := range entries {
		ts := now
		if !e.TS.IsZero() {
			ts = e.TS.UTC()
		}
		body, p, err := Encode(e, ts)
		if err != nil {
			return nil, err
		}
		m := nats.NewMsg(j.cfg.Subject)
		m.Data = body
		if i < len(msgIDs) && msgIDs[i] != "" {
			m.Header.Set(jetstream.MsgIDHeader, msgIDs[i])
		}
		msgs[i] = m
		recs[i] = staging.Record{V: staging.SchemaVersion, TS: ts, Kind: e.Kind, Session: e.Session, Payload: p}
	}
	wctx, cancel := context.WithTimeout(ctx, j.cfg.WriteTimeout)
	defer cancel()
	acked := make([]bool, len(msgs))
	var lastErr error
	for attempt := 0; ; attempt++ {
		if err := j.publish(wctx, msgs, recs, acked); err == nil {
			return recs, nil
		} else {
			lastErr = err
		}
		if !j.nc.IsConnected() {
			// Lost the server: wait a little for it, then refuse.
			if err := j.connected(ctx); err != nil {
				return nil, err
			}
		}
		wait := min(time.Duration(attempt+1)*100*time.Millisecond, time.Second)
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, j.unavailable(fmt.Sprintf("publishing %d record(s), unacknowledged after %s", len(msgs), j.cfg.WriteTimeout), lastErr)
		case <-time.After(wait):
		}
	}
}

// publish sends the messages not yet acknowledged and waits for their
// acknowledgements, filling in the records' sequence numbers. One message
// goes by a plain request; a batch is pipelined.
func (j *Journal) publish(ctx context.Context, msgs []*nats.Msg, recs []staging.Record, acked []bool) error {
	var todo []int
	for i := range msgs {
		if !acked[i] {
			todo = append(todo, i)
		}
	}
	if len(todo) == 1 {
		i := todo[0]
		ack, err := j.js.PublishMsg(ctx, msgs[i])
		if err != nil {
			return err
		}
		recs[i].Seq, acked[i] = ack.Sequence, true
		return nil
	}
	futures := make([]jetstream.PubAckFuture, len(todo))
	var firstErr error
	for k, i := range todo {
		f, err := j.js.PublishMsgAsync(msgs[i])
		if err != nil {
			firstErr = err
			break
		}
		futures[k] = f
	}
	for k, i := range todo {
		f := futures[k]
		if f == nil {
			break
		}
		select {
		case ack := <-f.Ok():
			recs[i].Seq, acked[i] = ack.Sequence, true
		case err := <-f.Err():
			if firstErr == nil {
				firstErr = err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return firstErr
}

// LastSeq asks the stream for its last sequence.
func (j *Journal) LastSeq(ctx context.Context) (uint64, error) {
	if err := j.ensure(ctx); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	info, err := j.stream.Info(ctx)
	if err != nil {
		return 0, j.unavailable("reading the stream's state", err)
	}
	return info.State.LastSeq, nil
}

// readIdle is how long Read waits for the next message before it reports
// the journal unavailable.
const readIdle = 10 * time.Second

// Read delivers the records above since up to the stream's last sequence as
// it was when the read started, through an ordered consumer (few records are
// fetched by direct get).
func (j *Journal) Read(ctx context.Context, since uint64, fn func(staging.Record) error) error {
	last, err := j.LastSeq(ctx)
	if err != nil || last <= since {
		return err
	}
	if last-since <= 4 {
		for seq := since + 1; seq <= last; seq++ {
			gctx, cancel := context.WithTimeout(ctx, requestTimeout)
			m, err := j.stream.GetMsg(gctx, seq)
			cancel()
			if err != nil {
				return j.unavailable(fmt.Sprintf("reading message %d", seq), err)
			}
			r, err := Decode(m.Sequence, m.Data)
			if err != nil {
				return err
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, requestTimeout)
	cons, err := j.js.OrderedConsumer(cctx, j.cfg.Stream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: since + 1})
	cancel()
	if err != nil {
		return j.unavailable("creating a reader", err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(1024))
	if err != nil {
		return j.unavailable("reading", err)
	}
	defer it.Stop()
	for {
		nctx, cancel := context.WithTimeout(ctx, readIdle)
		m, err := it.Next(jetstream.NextContext(nctx))
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return j.unavailable(fmt.Sprintf("reading after sequence %d", since), err)
		}
		md, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("natsjournal: a message without metadata: %w", err)
		}
		seq := md.Sequence.Stream
		r, err := Decode(seq, m.Data())
		if err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
		if seq >= last {
			return nil
		}
	}
}

// Subscribe follows the stream from since+1 with an ordered consumer, which
// re-creates itself after a lost connection from the last sequence it
// delivered.
func (j *Journal) Subscribe(ctx context.Context, since uint64, fn func(staging.Record)) (func(), error) {
	if err := j.ensure(ctx); err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	cons, err := j.js.OrderedConsumer(cctx, j.cfg.Stream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: since + 1})
	if err != nil {
		return nil, j.unavailable("subscribing", err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		md, err := m.Metadata()
		if err != nil {
			return
		}
		r, err := Decode(md.Sequence.Stream, m.Data())
		if err != nil {
			j.log.Warn("memory journal: skipping a message that is not a record (it is read again, and reported, by the catch-up)", "err", err)
			return
		}
		fn(r)
	}, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		if !errors.Is(err, jetstream.ErrNoHeartbeat) {
			j.log.Debug("memory journal: subscription", "err", err)
		}
	}))
	if err != nil {
		return nil, j.unavailable("subscribing", err)
	}
	return cc.Stop, nil
}

// Info is the stream's state, for `memory stats` and the tests.
func (j *Journal) Info(ctx context.Context) (*jetstream.StreamInfo, error) {
	if err := j.ensure(ctx); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	info, err := j.stream.Info(ctx)
	if err != nil {
		return nil, j.unavailable("reading the stream's state", err)
	}
	return info, nil
}
