package main

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/replay"
)

// eventEncoder writes run --json's lines, one JSON object each. Every event
// carries the time it was written when it was made without one (the notices
// run itself makes; the agent's events have theirs), and lines from the
// agent and from a retry's notice never interleave.
type eventEncoder struct {
	mu  sync.Mutex
	enc *json.Encoder
	// dedup sends a request message's content once per stream (its hash
	// after), which keeps a run --json file a replayable recording.
	dedup replay.Dedup
}

func newEventEncoder(w io.Writer) *eventEncoder { return &eventEncoder{enc: json.NewEncoder(w)} }

// event writes e, stamped with the current time when it has none.
func (e *eventEncoder) event(ev loop.Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now().UTC()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_ = e.enc.Encode(e.dedup.StreamEvent(ev))
}

// encode writes any other line (the model line).
func (e *eventEncoder) encode(v any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	_ = e.enc.Encode(v)
}
